import AuditTrail
import Crypto
import Foundation
import PhotosTestSupport
import Testing

/// Our proofs and notes, checked by a verifier nobody here wrote: the Go checksum database's own
/// `sumdb/note` and `sumdb/tlog` (`GoTlogVerifier`).
@Suite("Transparency log: the Go checksum database's verifier")
struct GoVerifierTests {
    static let origin = "photosd.test/audit"

    /// A log of `count` leaves (each leaf's data a 32-byte row hash) and its subtrees.
    struct Log {
        let data: [[UInt8]]
        let leaves: TransparencyLogTests.Leaves

        init(count: Int) {
            data = (0..<count).map { Array(SHA256.hash(data: Array("row \($0)".utf8))) }
            leaves = TransparencyLogTests.Leaves(data)
        }

        func note(size: Int, key: Curve25519.Signing.PrivateKey) throws -> String {
            let checkpoint = LogCheckpoint(origin: GoVerifierTests.origin, size: Int64(size), root: MerkleTree.root(size: Int64(size), subtree: leaves.subtree))
            return try SignedNote.sign(checkpoint.body, with: [(GoVerifierTests.origin, key)]).encoded
        }
    }

    static func base64(_ hashes: [MerkleTree.Hash]) -> [String] { hashes.map { Data($0).base64EncodedString() } }

    @Test("inclusion and consistency proofs and signed checkpoints verify there; one byte of a leaf, a proof hash, or another key's signature fails there and here")
    func independentlyChecked() async throws {
        let key = Curve25519.Signing.PrivateKey()
        let verifierKey = SignedNote.VerifierKey(name: Self.origin, publicKey: Array(key.publicKey.rawRepresentation)).description
        let log = Log(count: 300)
        for (size, index, oldSize) in [(1, 0, 1), (7, 3, 4), (256, 255, 128), (257, 256, 256), (300, 17, 1), (300, 299, 213)] {
            let note = try log.note(size: size, key: key)
            let inclusion = MerkleTree.inclusionProof(index: Int64(index), size: Int64(size), subtree: log.leaves.subtree)
            let consistency = MerkleTree.consistencyProof(old: Int64(oldSize), new: Int64(size), subtree: log.leaves.subtree)
            let request: [String: Any] = [
                "key": verifierKey, "note": note, "leaf": Data(log.data[index]).base64EncodedString(), "index": index,
                "inclusion": Self.base64(inclusion), "oldNote": try log.note(size: oldSize, key: key), "consistency": Self.base64(consistency),
            ]
            let checked = try await GoTlogVerifier.check(request)
            #expect(checked.status == 0 && checked.stdout == "ok\n", "size \(size), leaf \(index), from \(oldSize): \(checked.output)")

            // One byte of the leaf's data (the row's hash) changed.
            var leaf = log.data[index]
            leaf[0] ^= 1
            var altered = request
            altered["leaf"] = Data(leaf).base64EncodedString()
            #expect(try await GoTlogVerifier.check(altered).status == 1, "a changed leaf passed in Go")
            let root = MerkleTree.root(size: Int64(size), subtree: log.leaves.subtree)
            #expect(!MerkleTree.verifyInclusion(leaf: MerkleTree.leafHash(leaf), index: Int64(index), size: Int64(size), proof: inclusion, root: root))

            // A proof hash changed.
            if !inclusion.isEmpty {
                var proof = inclusion
                proof[proof.count / 2][5] ^= 0x80
                altered = request
                altered["inclusion"] = Self.base64(proof)
                #expect(try await GoTlogVerifier.check(altered).status == 1, "a changed inclusion proof passed in Go")
                #expect(!MerkleTree.verifyInclusion(leaf: MerkleTree.leafHash(log.data[index]), index: Int64(index), size: Int64(size), proof: proof, root: root))
            }
            if !consistency.isEmpty {
                var proof = consistency
                proof[0][0] ^= 1
                altered = request
                altered["consistency"] = Self.base64(proof)
                #expect(try await GoTlogVerifier.check(altered).status == 1, "a changed consistency proof passed in Go")
            }

            // The same checkpoint signed by another key under the same name.
            altered = request
            altered["note"] = try log.note(size: size, key: Curve25519.Signing.PrivateKey())
            let otherKey = try await GoTlogVerifier.check(altered)
            #expect(otherKey.status == 1 && otherKey.stdout.contains("note"), "\(otherKey.output)")
            #expect(!(try SignedNote(parsing: altered["note"] as? String ?? "")).isSigned(by: try #require(SignedNote.VerifierKey(verifierKey))))
        }
    }

    @Test("a rewritten history fails the consistency check there: an old checkpoint against a new tree whose early leaves differ, even signed with the real key")
    func rewrittenHistory() async throws {
        let key = Curve25519.Signing.PrivateKey()
        let verifierKey = SignedNote.VerifierKey(name: Self.origin, publicKey: Array(key.publicKey.rawRepresentation)).description
        let log = Log(count: 64)
        let oldNote = try log.note(size: 40, key: key)
        // The forked log: leaf 10 rewritten, everything re-hashed and re-signed with the real key.
        var data = log.data
        data[10][0] ^= 1
        let forked = TransparencyLogTests.Leaves(data)
        let forkedNote = try SignedNote.sign(
            LogCheckpoint(origin: Self.origin, size: 64, root: MerkleTree.root(size: 64, subtree: forked.subtree)).body, with: [(Self.origin, key)]).encoded
        let proof = MerkleTree.consistencyProof(old: 40, new: 64, subtree: forked.subtree)
        let checked = try await GoTlogVerifier.check(["key": verifierKey, "note": forkedNote, "oldNote": oldNote, "consistency": Self.base64(proof)])
        #expect(checked.status == 1 && checked.stdout.contains("consistency"), "\(checked.output)")
    }
}
