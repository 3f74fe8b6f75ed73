#if canImport(Glibc)
    import Glibc
#endif

/// This machine's IPv4 addresses, as its interfaces list them (loopback's among them): where a page served on all
/// addresses is reached from beyond the machine.
package enum HostAddresses {
    package static var ipv4: [String] {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return [] }
        defer { freeifaddrs(list) }
        return sequence(first: first, next: { $0.pointee.ifa_next }).compactMap { entry in
            guard let address = entry.pointee.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET) else {
                return nil
            }
            var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            guard
                getnameinfo(
                    address, socklen_t(MemoryLayout<sockaddr_in>.size), &host, socklen_t(host.count), nil, 0,
                    NI_NUMERICHOST) == 0
            else { return nil }
            return String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
    }

    /// The first address that is not loopback's, nil on a machine with none.
    package static var beyondLoopback: String? { ipv4.first { !$0.hasPrefix("127.") } }
}
