import Foundation
import ShelfCore
import ShelfTesting
import Testing
@testable import ShelfStore

@Suite(.postgresServer, .serialized) struct ProviderOutageTests {
    @Test(
        "A provider that is down gets one probe per interval, whoever asks, and each failed probe doubles the wait",
        arguments: StoreKind.allCases)
    func oneProbePerInterval(kind: StoreKind) throws {
        try withStore(kind) { store, _ in
            let start = Date(timeIntervalSince1970: 1_000_000)
            #expect(try store.providers.takeTurn("gemini", ceiling: 300, now: start) == .open)

            // Two requests in flight fail: the first marks the outage, the second changes nothing.
            let down = try store.providers.recordOutage(
                "gemini", state: .unreachable, code: "network", message: "could not connect",
                probe: false, ceiling: 300, now: start)
            #expect(down.state == .unreachable && down.since == start && down.probes == 0)
            let first = try #require(down.until)
            #expect(first.timeIntervalSince(start) >= 4 && first.timeIntervalSince(start) <= 6)
            #expect(
                try store.providers.recordOutage(
                    "gemini", state: .unreachable, code: "network", message: "could not connect",
                    probe: false, ceiling: 300, now: start.addingTimeInterval(1)) == down)

            guard case .wait = try store.providers.takeTurn("gemini", ceiling: 300, now: start.addingTimeInterval(1))
            else {
                Issue.record("asked before the probe time"); return
            }
            let due = first.addingTimeInterval(0.1)
            #expect(try store.providers.takeTurn("gemini", ceiling: 300, now: due) == .probe)
            guard case .wait = try store.providers.takeTurn("gemini", ceiling: 300, now: due) else {
                Issue.record("a second probe in the same interval"); return
            }

            let failed = try store.providers.recordOutage(
                "gemini", state: .unreachable, code: "network", message: "still down",
                probe: true, ceiling: 300, now: due)
            #expect(failed.probes == 1 && failed.since == start)
            let wait = try #require(failed.until).timeIntervalSince(due)
            #expect(wait >= 8 && wait <= 12, "5 s doubled, ±20 %")

            try store.providers.setProviderHealth(ProviderHealth(name: "gemini", state: .ok), now: Date())
            #expect(try store.providers.takeTurn("gemini", ceiling: 300, now: due) == .open)
        }
    }

    @Test("The probe interval grows to its ceiling and no further")
    func intervalCeiling() {
        for probes in 0..<30 {
            let interval = ProviderHealth.probeInterval(failedProbes: probes, ceiling: 300)
            #expect(interval <= 360 && interval >= min(300, 5 * pow(2, Double(probes))) * 0.8)
        }
    }
}
