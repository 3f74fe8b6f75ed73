import Foundation
#if canImport(Glibc)
    import Glibc
#endif
import ShelfStore

/// Where the running web server listens and which process serves it, kept in the database's settings so that
/// `status`, `doctor` and `shelfd web --print-login-url` find the page whichever process serves it.
package struct WebPresence: Sendable {
    private let store: Store

    package init(store: Store) { self.store = store }

    /// The server listens at `url`, served by this process.
    package func announce(url: String) {
        try? store.settings.set(StatusReport.webPIDSetting, "\(getpid())")
        try? store.settings.set(StatusReport.webURLSetting, url)
    }

    /// A server killed without withdrawing (kill -9) leaves its address behind; a live one keeps it.
    package func forgetDeadServer() {
        if (try? StatusReport.webAddress(store)) == nil { try? store.settings.set(StatusReport.webURLSetting, "") }
    }

    /// The server at `url` stops. Another (a `shelfd web` beside `watch`) may have written its own address since:
    /// that one stays.
    package func withdraw(url: String) {
        try? store.settings.clear(StatusReport.webURLSetting, ifValue: url)
    }
}
