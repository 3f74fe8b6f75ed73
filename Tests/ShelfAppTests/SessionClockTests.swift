import Foundation
import ShelfApp
import ShelfConfig
import ShelfStore
import ShelfTesting
import Testing

@Suite("The web page's sessions and login codes expire on the clock they are given")
struct SessionClockTests {
    @Test("A session lasts a week without logging in and a month with it; a login code works once, within its lifetime")
    func sessionsExpire() async throws {
        try await withTemporaryDirectory { folder in
            let clock = ManualClock()
            let store = try Store.open(path: folder.appendingPathComponent("shelfd.db").path)
            let desk = SessionDesk(store: store, secrets: Secrets(), time: clock.time)
            let anonymous = try desk.open(loggedIn: false), login = try desk.open(loggedIn: true)
            let code = try desk.newLoginCode(lifetime: 600)

            clock.advance(by: .seconds(599))
            #expect(try desk.redeem(code: code), "within its ten minutes")
            #expect(try !desk.redeem(code: code), "once")
            let late = try desk.newLoginCode(lifetime: 600)

            clock.advance(by: .seconds(7 * 86_400 - 600))
            #expect(try desk.session(id: anonymous.id) == anonymous.session, "a second short of a week")
            #expect(try !desk.redeem(code: late), "past its ten minutes")
            clock.advance(by: .seconds(1))
            #expect(try desk.session(id: anonymous.id) == nil, "a week without logging in")
            #expect(try desk.session(id: login.id) == login.session)

            clock.advance(by: .seconds(23 * 86_400))
            #expect(try desk.session(id: login.id) == nil, "a month after logging in")
        }
    }
}
