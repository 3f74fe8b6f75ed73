import CCrypto

/// SHA-256 from libcrypto (OpenSSL), which libcurl links anyway: a photo's identity is the hash of its bytes.
/// Not swift-crypto: building it would add minutes to every CI run for this one digest.
package struct SHA256 {
    /// libcrypto's digest state, copied on write so that a copy of this value hashes on by itself.
    private final class Context {
        let pointer: OpaquePointer
        init(copying other: Context? = nil) {
            guard let pointer = EVP_MD_CTX_new() else { fatalError("libcrypto could not allocate a digest") }
            let started =
                if let other { EVP_MD_CTX_copy_ex(pointer, other.pointer) } else {
                    EVP_DigestInit_ex(pointer, EVP_sha256(), nil)
                }
            guard started == 1 else { fatalError("libcrypto could not start a SHA-256 digest") }
            self.pointer = pointer
        }
        deinit { EVP_MD_CTX_free(pointer) }
    }

    private var context = Context()

    package init() {}

    /// The digest of `bytes` as 64 lowercase hex digits.
    package static func hex<Bytes: Collection<UInt8>>(of bytes: Bytes) -> String {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let hashed =
            bytes.withContiguousStorageIfAvailable { buffer in
                EVP_Digest(buffer.baseAddress, buffer.count, &digest, &length, EVP_sha256(), nil)
            }
            ?? Array(bytes).withUnsafeBufferPointer { buffer in
                EVP_Digest(buffer.baseAddress, buffer.count, &digest, &length, EVP_sha256(), nil)
            }
        guard hashed == 1 else { fatalError("libcrypto could not compute a SHA-256 digest") }
        return hexDigits(digest.prefix(Int(length)))
    }

    package mutating func update(_ bytes: [UInt8]) {
        makeUnique()
        guard bytes.withUnsafeBufferPointer({ EVP_DigestUpdate(context.pointer, $0.baseAddress, $0.count) }) == 1 else {
            fatalError("libcrypto could not extend a SHA-256 digest")
        }
    }

    /// The digest of everything passed to `update`, as 64 lowercase hex digits; call it once, last.
    package mutating func finalizeHex() -> String {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        makeUnique()
        guard EVP_DigestFinal_ex(context.pointer, &digest, &length) == 1 else {
            fatalError("libcrypto could not finish a SHA-256 digest")
        }
        return Self.hexDigits(digest.prefix(Int(length)))
    }

    private mutating func makeUnique() {
        if !isKnownUniquelyReferenced(&context) { context = Context(copying: context) }
    }

    private static func hexDigits(_ digest: ArraySlice<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(digest.count * 2)
        for byte in digest { text.append(digits[Int(byte >> 4)]); text.append(digits[Int(byte & 0xF)]) }
        return String(decoding: text, as: UTF8.self)
    }
}
