import Synchronization

/// The port the server listens on, known once it is bound (`:0` lets the system pick one).
final class BoundPort: Sendable {
    private let port: Mutex<Int>
    init(_ port: Int) { self.port = Mutex(port) }
    var value: Int { port.withLock { $0 } }
    func set(_ value: Int) { port.withLock { $0 = value } }
}
