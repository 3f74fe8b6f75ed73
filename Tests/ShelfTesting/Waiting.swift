/// Polls `condition` every `interval` of real time until it holds; throws `WaitTimeout` (saying `what`) after
/// `timeout`. For what happens on other threads: a daemon's files, a watcher's events, a writer woken by a manual clock.
package func waitUntil(
    _ what: String, timeout: Duration = .seconds(30), every interval: Duration = .milliseconds(50),
    _ condition: () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return }
        try await Task.sleep(for: interval)
    }
    throw WaitTimeout(what: what)
}

package struct WaitTimeout: Error, CustomStringConvertible {
    package var what: String
    package init(what: String) { self.what = what }
    package var description: String { "timed out waiting until \(what)" }
}
