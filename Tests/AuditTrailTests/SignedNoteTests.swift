import AuditTrail
import Crypto
import Foundation
import Testing

/// Signed notes read as C2SP signed-note says: other keys' signatures, of any algorithm, kept and
/// left unverified (a witness's cosignature); no control character; at most 100 signatures.
@Suite("Signed notes per C2SP signed-note")
struct SignedNoteTests {
    static let origin = "shop.example/log"

    static func checkpoint(_ key: Curve25519.Signing.PrivateKey) throws -> SignedNote {
        try SignedNote.sign(LogCheckpoint(origin: origin, size: 7, root: try #require(MerkleTree.Hash(Array(repeating: 1, count: 32)))).body, with: [(origin, key)])
    }

    /// A signature line of `name` with `bytes` after a 4-byte key id.
    static func line(_ name: String, id: UInt32 = 0x0102_0304, bytes: Int) -> String {
        let idBytes = withUnsafeBytes(of: id.bigEndian) { Array($0) }
        return "\u{2014} \(name) \(Data(idBytes + Array(repeating: 7, count: bytes)).base64EncodedString())\n"
    }

    @Test("a cosigned checkpoint (a 72-byte cosignature/v1 line of another key) parses; the log's signature still verifies, the other is kept unverified")
    func cosignedParses() throws {
        let key = Curve25519.Signing.PrivateKey()
        let verifier = SignedNote.VerifierKey(name: Self.origin, publicKey: Array(key.publicKey.rawRepresentation))
        let cosigned = try Self.checkpoint(key).encoded + Self.line("witness.example/w1", bytes: 72)
        let note = try SignedNote(parsing: cosigned)
        #expect(note.signatures.count == 2 && note.signatures[1].signature.count == 72 && note.signatures[1].keyName == "witness.example/w1")
        #expect(note.isSigned(by: verifier))
        // A line of the log's own name and id with another length is not a signature of it.
        let odd = try SignedNote(parsing: Self.checkpoint(key).text + "\n" + Self.line(Self.origin, id: verifier.keyID, bytes: 72))
        #expect(!odd.isSigned(by: verifier))
        #expect(try SignedNote(parsing: note.encoded) == note, "it round-trips")
    }

    @Test("control characters, more than 100 signatures, a key name with '+' or a space, an empty signature: refused")
    func refused() throws {
        let key = Curve25519.Signing.PrivateKey()
        let good = try Self.checkpoint(key)
        let ninetyNine = (0..<99).map { Self.line("w\($0)", bytes: 72) }.joined()
        #expect(try SignedNote(parsing: good.encoded + ninetyNine).signatures.count == 100)
        for (text, words) in [
            (good.encoded + ninetyNine + Self.line("w100", bytes: 72), "more than 100"),
            (good.encoded.replacingOccurrences(of: "\n7\n", with: "\n7\r\n"), "control character"),
            ("shop\u{7}.example/log\n7\nAQ==\n\n" + Self.line("k", bytes: 64), "control character"),
            (good.encoded + Self.line("a+b", bytes: 64), "malformed"),
            (good.encoded + "\u{2014} a b \(Data([1, 2, 3, 4]).base64EncodedString())\n", "malformed"),
            (good.encoded + "\u{2014} k \(Data([1, 2, 3, 4]).base64EncodedString())\n", "malformed"),
        ] {
            let problem = #expect(throws: SignedNote.Problem.self) { try SignedNote(parsing: text) }
            #expect(problem?.description.contains(words) == true, "\(words): \(String(describing: problem))")
        }
    }
}
