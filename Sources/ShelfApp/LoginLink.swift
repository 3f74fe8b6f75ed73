import Foundation
import ShelfConfig
import ShelfHTTP
import ShelfStore

/// `shelfd web --print-login-url`: a link that logs one browser in, once, within ten minutes, under the token
/// set now. Only the code's hash is stored.
package enum LoginLink {
    package static let lifetime: TimeInterval = 10 * 60

    package static func make(config: Configuration, secrets: Secrets, store: Store) throws -> String {
        let code = try SessionDesk(store: store, secrets: secrets).newLoginCode(lifetime: lifetime)
        return baseURL(config: config, store: store) + "login/" + code
    }

    /// The running server's address, else the configured one; an address that means "every interface" becomes
    /// one a phone can reach (this machine's first non-loopback IPv4 address).
    static func baseURL(config: Configuration, store: Store) -> String {
        var address: ListenAddress? = config.web.address
        if let running = (try? StatusReport.webAddress(store)) ?? nil,
            let parsed = ListenAddress(String(running.dropFirst("http://".count).prefix { $0 != "/" }))
        {
            address = parsed
        }
        guard var address else { return "http://127.0.0.1:8787/" }
        if ["0.0.0.0", "::", ""].contains(address.host) { address.host = HostAddresses.beyondLoopback ?? "127.0.0.1" }
        return "http://\(address)/"
    }
}
