import CCrypto

/// SHA-256 from libcrypto (OpenSSL), which libcurl links anyway: a photo's identity is the hash of its bytes.
/// Not swift-crypto: building it would add minutes to every CI run for this one digest.
package final class SHA256 {
    private let context: OpaquePointer

    package init() {
        guard let context = EVP_MD_CTX_new(), EVP_DigestInit_ex(context, EVP_sha256(), nil) == 1 else {
            fatalError("libcrypto could not start a SHA-256 digest")
        }
        self.context = context
    }

    deinit { EVP_MD_CTX_free(context) }

    /// The digest of `bytes` as 64 lowercase hex digits.
    package static func hex<Bytes: Collection<UInt8>>(of bytes: Bytes) -> String {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let hashed = bytes.withContiguousStorageIfAvailable { buffer in
            EVP_Digest(buffer.baseAddress, buffer.count, &digest, &length, EVP_sha256(), nil)
        } ?? Array(bytes).withUnsafeBufferPointer { buffer in
            EVP_Digest(buffer.baseAddress, buffer.count, &digest, &length, EVP_sha256(), nil)
        }
        guard hashed == 1 else { fatalError("libcrypto could not compute a SHA-256 digest") }
        return hexDigits(digest.prefix(Int(length)))
    }

    package func update(_ bytes: [UInt8]) {
        guard bytes.withUnsafeBufferPointer({ EVP_DigestUpdate(context, $0.baseAddress, $0.count) }) == 1 else {
            fatalError("libcrypto could not extend a SHA-256 digest")
        }
    }

    /// The digest of everything passed to `update`, as 64 lowercase hex digits; call it once, last.
    package func finalizeHex() -> String {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        guard EVP_DigestFinal_ex(context, &digest, &length) == 1 else {
            fatalError("libcrypto could not finish a SHA-256 digest")
        }
        return Self.hexDigits(digest.prefix(Int(length)))
    }

    private static func hexDigits(_ digest: ArraySlice<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(digest.count * 2)
        for byte in digest { text.append(digits[Int(byte >> 4)]); text.append(digits[Int(byte & 0xF)]) }
        return String(decoding: text, as: UTF8.self)
    }
}
