import Foundation
import ShelfCore
import ShelfTesting
import Testing
@testable import ShelfStore

@Suite(.postgresServer, .serialized) struct WebSessionTests {
    @Test(
        "Sessions made without logging in are kept up to their limit, the oldest dropped first; a logged-in one stays",
        arguments: StoreKind.allCases)
    func anonymousSessionsAreBounded(kind: StoreKind) throws {
        try withStore(kind) { store, _ in
            let start = Date()
            try store.webSessions.create(
                id: "logged-in", csrf: "c", loggedIn: true, expiresAt: start.addingTimeInterval(60), now: Date())
            let limit = WebSessionStore.anonymousLimit
            for n in 0...limit { // one more than the limit, each a little newer
                try store.webSessions.create(
                    id: "anonymous-\(n)", csrf: "c\(n)", loggedIn: false,
                    expiresAt: start.addingTimeInterval(7 * 86_400 + Double(n)), now: start)
            }
            #expect(
                try store.webSessions.session(id: "anonymous-0", now: start) == nil, "the oldest anonymous session went"
            )
            #expect(try store.webSessions.session(id: "anonymous-1", now: start)?.csrf == "c1")
            #expect(try store.webSessions.session(id: "anonymous-\(limit)", now: start)?.csrf == "c\(limit)")
            #expect(
                try store.webSessions.session(id: "logged-in", now: start)?.loggedIn == true,
                "a login is never dropped for them")
        }
    }
}
