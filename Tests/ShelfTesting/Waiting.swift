/// Polls `condition` every `interval` of real time until it holds; throws `WaitTimeout` (saying `what`) after
/// `timeout`. For what happens on other threads: a daemon's files, a watcher's events, a writer woken by a manual clock.
/// The condition is looked at once more after the deadline: a wait that could not run for a while (other tests held
/// every thread) judges what happened meanwhile, not the time it was kept from looking.
package func waitUntil(
    _ what: String, timeout: Duration = .seconds(30), every interval: Duration = .milliseconds(50),
    _ condition: () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while true {
        let late = ContinuousClock.now >= deadline
        if try await condition() { return }
        if late { throw WaitTimeout(what: what) }
        try await Task.sleep(for: interval)
    }
}

package struct WaitTimeout: Error, CustomStringConvertible {
    package var what: String
    package init(what: String) { self.what = what }
    package var description: String { "timed out waiting until \(what)" }
}
