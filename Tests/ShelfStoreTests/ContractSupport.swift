import Foundation
import ShelfStore

/// The view of the store the contract queues photos through; both stores conform.
typealias ContractStore = JobQueue

/// Runs `body(0) … body(count - 1)` on threads of their own, all at once, and returns their results in order.
/// Threads, not tasks: the stores' calls block, and the point is that several callers are inside them together.
func onThreads<T: Sendable>(_ count: Int, _ body: @escaping @Sendable (Int) throws -> T) throws -> [T] {
    let results = Results<T>(count: count)
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        let thread = Thread {
            results.set(index, Result { try body(index) })
            group.leave()
        }
        thread.start()
    }
    group.wait()
    return try results.all()
}

private final class Results<T: Sendable>: @unchecked Sendable { // unchecked: `values` only under `lock`
    private let lock = NSLock()
    private var values: [Result<T, any Error>?]
    init(count: Int) { values = Array(repeating: nil, count: count) }
    func set(_ index: Int, _ value: Result<T, any Error>) { lock.withLock { values[index] = value } }
    func all() throws -> [T] { try lock.withLock { try values.map { try $0!.get() } } }
}
