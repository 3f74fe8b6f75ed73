import Foundation
#if canImport(Glibc)
    import Glibc
#endif

/// Which `Host` a request may name: this server's own address, loopback names, and beyond loopback this
/// machine's name, or any IP address when it listens on every address. A name that merely resolves here (DNS
/// rebinding) is refused.
struct HostRule: Sendable {
    let listenHost: String
    let port: BoundPort
    /// This machine's names (`gethostname`), accepted when listening on every address.
    let machineNames: Set<String>

    init(listenHost: String, port: BoundPort, machineNames: Set<String> = HostRule.currentMachineNames()) {
        self.listenHost = listenHost.lowercased()
        self.port = port
        self.machineNames = machineNames
    }

    var listensEverywhere: Bool { ["0.0.0.0", "::", "*", ""].contains(listenHost) }

    func allows(authority: String?) -> Bool {
        guard let authority, let (host, hostPort) = Self.split(authority) else { return false }
        guard (hostPort ?? 80) == port.value else { return false }
        if host == "localhost" || host == listenHost || Self.isLoopbackIP(host) { return true }
        // Beyond loopback a phone may also name the machine (`shelf-pc.local`).
        if listenHost == "localhost" || Self.isLoopbackIP(listenHost) { return false }
        return machineNames.contains(host) || (listensEverywhere && Self.isIPLiteral(host))
    }

    /// `Origin` is `http://` and the authority the request named (already checked by `allows`).
    func isSameOrigin(_ origin: String, authority: String?) -> Bool {
        guard let authority, origin.lowercased().hasPrefix("http://"),
            let sent = Self.split(String(origin.dropFirst("http://".count))), let named = Self.split(authority)
        else { return false }
        return sent.host == named.host && (sent.port ?? 80) == (named.port ?? 80)
    }

    /// `host[:port]` or `[v6][:port]`, lower-cased, without a trailing dot.
    static func split(_ authority: String) -> (host: String, port: Int?)? {
        let text = authority.lowercased()
        var host: Substring, port: Substring?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            if !rest.isEmpty { guard rest.hasPrefix(":") else { return nil }; port = rest.dropFirst() }
        } else if let colon = text.firstIndex(of: ":") {
            host = text[..<colon]
            port = text[text.index(after: colon)...]
        } else {
            host = text[...]
        }
        if host.hasSuffix(".") { host = host.dropLast() }
        guard !host.isEmpty else { return nil }
        if let port {
            guard let number = Int(port), (1...65_535).contains(number) else { return nil }
            return (String(host), number)
        }
        return (String(host), nil)
    }

    static func isIPLiteral(_ host: String) -> Bool {
        var bytes = [UInt8](repeating: 0, count: 16) // room for an in6_addr (or an in_addr)
        return inet_pton(AF_INET, host, &bytes) == 1 || inet_pton(AF_INET6, host, &bytes) == 1
    }

    static func isLoopbackIP(_ host: String) -> Bool {
        (host.hasPrefix("127.") && isIPLiteral(host)) || host == "::1"
    }

    static func currentMachineNames() -> Set<String> {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count) == 0 else { return [] }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self).lowercased()
        guard !name.isEmpty else { return [] }
        let short = name.split(separator: ".").first.map(String.init) ?? name
        return [name, short, short + ".local"]
    }
}
