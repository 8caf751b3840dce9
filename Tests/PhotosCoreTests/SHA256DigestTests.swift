import Crypto
import Foundation
import PhotosModel
import Testing

/// PhotosModel's own SHA-256 (it depends on no package) is SHA-256: the FIPS 180-4 examples,
/// and swift-crypto's digest for every length from 0 to 300 bytes (every padding case around
/// the 56- and 64-byte edges), a megabyte, and input given in pieces.
@Suite("SHA256Digest")
struct SHA256DigestTests {
    static func hex(_ bytes: some Sequence<UInt8>) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    @Test("the FIPS 180-4 examples")
    func examples() {
        #expect(Self.hex(SHA256Digest.hash(Array("".utf8))) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(Self.hex(SHA256Digest.hash(Array("abc".utf8))) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(Self.hex(SHA256Digest.hash(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)))
            == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }

    @Test("equals swift-crypto's SHA-256 at every length up to 300 bytes, on a megabyte, and fed in pieces")
    func matchesSwiftCrypto() {
        var generator = SystemRandomNumberGenerator()
        for length in 0...300 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            #expect(SHA256Digest.hash(bytes) == Array(SHA256.hash(data: bytes)), "length \(length)")
        }
        let megabyte = (0..<1_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        #expect(SHA256Digest.hash(megabyte) == Array(SHA256.hash(data: megabyte)))
        var pieces = SHA256Digest()
        var start = 0
        while start < 1_000 {
            let end = min(1_000, start + Int.random(in: 0...130, using: &generator))
            pieces.update(megabyte[start..<end])
            start = end
        }
        #expect(pieces.finalize() == Array(SHA256.hash(data: megabyte[0..<1_000])))
        // finalize does not end the hash: more may follow.
        pieces.update([1, 2, 3])
        #expect(pieces.finalize() == Array(SHA256.hash(data: Array(megabyte[0..<1_000]) + [1, 2, 3])))
    }
}
