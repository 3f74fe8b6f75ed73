import Foundation
import Testing
import ShelfDigest

@Suite struct SHA256Tests {
    @Test("Matches the FIPS test vectors, including a message spanning blocks")
    func knownVectors() {
        #expect(SHA256.hex(of: Array("".utf8)) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hex(of: Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            SHA256.hex(of: Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(
            SHA256.hex(of: [UInt8](repeating: 0x61, count: 1_000_000))
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test("Feeding the bytes in pieces gives the same digest")
    func incrementalUpdates() {
        let bytes = (0..<1000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        var hasher = SHA256()
        hasher.update(Array(bytes[0..<3])); hasher.update(Array(bytes[3..<130])); hasher.update(Array(bytes[130...]))
        #expect(hasher.finalizeHex() == SHA256.hex(of: bytes))
    }

    @Test("A copy of a hasher goes on by itself: feeding one does not change the other's digest")
    func copiesAreIndependent() {
        var first = SHA256()
        first.update(Array("ab".utf8))
        var second = first
        second.update(Array("c".utf8))
        #expect(first.finalizeHex() == SHA256.hex(of: Array("ab".utf8)))
        #expect(second.finalizeHex() == SHA256.hex(of: Array("abc".utf8)))
    }
}
