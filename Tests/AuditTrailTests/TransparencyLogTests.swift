import AuditTrail
import Crypto
import Foundation
import Testing

/// The transparency log's pure parts: RFC 6962 hashing and proofs, C2SP signed notes and
/// checkpoints. (The Go checksum database's own packages check the same in the end-to-end tests.)
@Suite("Transparency log: Merkle proofs and signed notes")
struct TransparencyLogTests {
    /// The leaves of an in-memory tree, and its complete subtrees' hashes computed from them.
    struct Leaves {
        let hashes: [MerkleTree.Hash]

        init(_ data: [[UInt8]]) {
            hashes = data.map(MerkleTree.leafHash)
        }

        /// Leaves given by their leaf hashes (as a log stores them).
        init(leafHashes: [MerkleTree.Hash]) {
            hashes = leafHashes
        }

        func subtree(_ level: Int, _ index: Int64) -> MerkleTree.Hash {
            if level == 0 { return hashes[Int(index)] }
            return MerkleTree.nodeHash(subtree(level - 1, index * 2), subtree(level - 1, index * 2 + 1))
        }

        /// RFC 6962's MTH, by its definition (the reference the proofs are checked against).
        func reference(_ range: Range<Int>) -> MerkleTree.Hash {
            if range.count == 1 { return hashes[range.lowerBound] }
            var k = 1
            while k << 1 < range.count { k <<= 1 }
            return MerkleTree.nodeHash(reference(range.lowerBound..<range.lowerBound + k), reference(range.lowerBound + k..<range.upperBound))
        }
    }

    static func hex(_ bytes: some Sequence<UInt8>) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    @Test("RFC 6962's test tree: the root of its eight leaves is the one Certificate Transparency publishes")
    func knownRoot() {
        let inputs: [[UInt8]] = [
            [], [0x00], [0x10], [0x20, 0x21], [0x30, 0x31], [0x40, 0x41, 0x42, 0x43],
            [0x50, 0x51, 0x52, 0x53, 0x54, 0x55, 0x56, 0x57],
            [0x60, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6a, 0x6b, 0x6c, 0x6d, 0x6e, 0x6f],
        ]
        let leaves = Leaves(inputs)
        #expect(Self.hex(MerkleTree.root(size: 8, subtree: leaves.subtree)) == "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328")
        #expect(Self.hex(MerkleTree.root(size: 0) { _, _ in leaves.hashes[0] }) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    @Test("every inclusion and consistency proof of trees up to 40 leaves verifies; a changed leaf, index, hash or root does not")
    func proofs() {
        let leaves = Leaves((0..<40).map { [UInt8(truncatingIfNeeded: $0), 0xAB] })
        for size in 1...40 {
            let root = MerkleTree.root(size: Int64(size), subtree: leaves.subtree)
            #expect(root == leaves.reference(0..<size), "root of \(size)")
            for index in 0..<size {
                let proof = MerkleTree.inclusionProof(index: Int64(index), size: Int64(size), subtree: leaves.subtree)
                #expect(MerkleTree.verifyInclusion(leaf: leaves.hashes[index], index: Int64(index), size: Int64(size), proof: proof, root: root))
                #expect(proof.count <= Int64(size).bitWidth - (Int64(size) - 1).leadingZeroBitCount, "log₂ n hashes")
                if size > 1 {
                    let other = (index + 1) % size
                    #expect(!MerkleTree.verifyInclusion(leaf: leaves.hashes[other], index: Int64(index), size: Int64(size), proof: proof, root: root))
                    #expect(!MerkleTree.verifyInclusion(leaf: leaves.hashes[index], index: Int64(other), size: Int64(size), proof: proof, root: root))
                    var changed = proof
                    changed[0][0] ^= 1
                    #expect(!MerkleTree.verifyInclusion(leaf: leaves.hashes[index], index: Int64(index), size: Int64(size), proof: changed, root: root))
                }
            }
            for old in 1...size {
                let oldRoot = leaves.reference(0..<old)
                let proof = MerkleTree.consistencyProof(old: Int64(old), new: Int64(size), subtree: leaves.subtree)
                #expect(MerkleTree.verifyConsistency(old: Int64(old), new: Int64(size), oldRoot: oldRoot, newRoot: root, proof: proof), "\(old) → \(size)")
                if old < size {
                    var forged = oldRoot
                    forged[31] ^= 1
                    #expect(!MerkleTree.verifyConsistency(old: Int64(old), new: Int64(size), oldRoot: forged, newRoot: root, proof: proof))
                    if !proof.isEmpty {
                        var changed = proof
                        changed[changed.count - 1][0] ^= 1
                        #expect(!MerkleTree.verifyConsistency(old: Int64(old), new: Int64(size), oldRoot: oldRoot, newRoot: root, proof: changed))
                    }
                }
            }
        }
    }

    @Test("the pure core: appending leaf by leaf from nothing yields every complete subtree once, as it completes, and the right edge; a root or a proof reads exactly the subtrees computed from the sizes")
    func pureCore() throws {
        let leaves = Leaves((0..<70).map { [UInt8(truncatingIfNeeded: $0), 0xCD] })
        var frontier: [MerkleTree.Subtree: MerkleTree.Hash] = [:]
        var stored: [MerkleTree.Subtree: MerkleTree.Hash] = [:]
        for size in 0..<70 {
            let appended = try MerkleTree.append(leaf: leaves.hashes[size], at: Int64(size), frontier: frontier)
            for (node, hash) in appended.nodes {
                #expect(stored[node] == nil, "(\(node.level), \(node.index)) stored twice")
                #expect(hash == leaves.subtree(node.level, node.index), "(\(node.level), \(node.index))")
                stored[node] = hash
            }
            frontier = appended.frontier
            #expect(Set(frontier.keys) == Set(MerkleTree.rightEdge(of: Int64(size + 1))), "right edge of \(size + 1)")
            // The tree of size + 1 from what was stored alone.
            let root = try MerkleTree.root(size: Int64(size + 1)) { level, index in
                try #require(stored[MerkleTree.Subtree(level: level, index: index)])
            }
            #expect(root == leaves.reference(0..<size + 1))
        }
        // Without its left sibling, a right child cannot complete its parent.
        #expect(throws: MerkleTree.MissingSubtree.self) { try MerkleTree.append(leaf: leaves.hashes[1], at: 1, frontier: [:]) }

        func read(_ compute: ((Int, Int64) throws -> MerkleTree.Hash) throws -> Any) rethrows -> Set<MerkleTree.Subtree> {
            var seen = Set<MerkleTree.Subtree>()
            _ = try compute { level, index in
                seen.insert(MerkleTree.Subtree(level: level, index: index))
                return leaves.subtree(level, index)
            }
            return seen
        }
        for size in Int64(1)...70 {
            #expect(try read { try MerkleTree.root(size: size, subtree: $0) } == Set(MerkleTree.subtreesForRoot(size: size)))
            for index in stride(from: Int64(0), to: size, by: 3) {
                #expect(try read { try MerkleTree.inclusionProof(index: index, size: size, subtree: $0) }
                    == Set(MerkleTree.subtreesForInclusionProof(index: index, size: size)), "inclusion \(index) in \(size)")
            }
            for old in stride(from: Int64(1), through: size, by: 2) {
                #expect(try read { try MerkleTree.consistencyProof(old: old, new: size, subtree: $0) }
                    == Set(MerkleTree.subtreesForConsistencyProof(old: old, new: size)), "consistency \(old) → \(size)")
            }
        }
    }

    @Test("a signed note: the Go note package's own example verifies, and ours signs the same bytes the same way")
    func goExample() throws {
        // golang.org/x/mod/sumdb/note's documentation: PeterNeumann's key and note.
        let key = try #require(SignedNote.VerifierKey("PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW"))
        let encoded = "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n\n"
            + "\u{2014} PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n"
        let note = try SignedNote(parsing: encoded)
        #expect(note.isSigned(by: key))
        #expect(note.encoded == encoded)
        let seed = try #require(Data(base64Encoded: "AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz")).dropFirst()
        let signer = try Curve25519.Signing.PrivateKey(rawRepresentation: seed)
        let ours = try SignedNote.sign(note.text, with: [(name: "PeterNeumann", key: signer)])
        #expect(ours.encoded == encoded, "Ed25519 is deterministic: the same key signs the same note identically")
        #expect(key.description == "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW")

        var altered = note
        altered.text = altered.text.replacingOccurrences(of: "answer", with: "Answer")
        #expect(!altered.isSigned(by: key))
        let other = SignedNote.VerifierKey(name: "PeterNeumann", publicKey: Array(Curve25519.Signing.PrivateKey().publicKey.rawRepresentation))
        #expect(!note.isSigned(by: other))
        #expect(SignedNote.VerifierKey("PeterNeumann+c74f20a4+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW") == nil, "a key id that is not the key's")
        // A key whose base64 holds `+` itself (one in four random keys: found by CI).
        let plus = "photosd.test/audit+d2417449+ASZ2UC3yc+XqWHbE3uuRcmvPGoMyo3B5B0aBhIcsdeeE"
        #expect(SignedNote.VerifierKey(plus)?.description == plus)
        for _ in 0..<64 {
            let random = SignedNote.VerifierKey(name: "photosd.test/audit", publicKey: Array(Curve25519.Signing.PrivateKey().publicKey.rawRepresentation))
            #expect(SignedNote.VerifierKey(random.description) == random, "\(random)")
        }
    }

    @Test("a checkpoint's body: origin, size, base64 root; read back; a rotation's note carries both keys' signatures")
    func checkpoint() throws {
        let root = MerkleTree.Hash(SHA256.hash(data: Array("root".utf8)))
        let checkpoint = LogCheckpoint(origin: "photosd.example/audit", size: 42, root: root)
        #expect(checkpoint.body == "photosd.example/audit\n42\n\(Data(root).base64EncodedString())\n")
        #expect(try LogCheckpoint(parsing: checkpoint.body) == checkpoint)
        #expect(throws: SignedNote.Problem.self) { try LogCheckpoint(parsing: "photosd.example/audit\n042\nAAAA\n") }
        let old = Curve25519.Signing.PrivateKey()
        let new = Curve25519.Signing.PrivateKey()
        let note = try SignedNote.sign(checkpoint.body, with: [(checkpoint.origin, old), (checkpoint.origin, new)])
        let read = try SignedNote(parsing: note.encoded)
        for key in [old, new] {
            #expect(read.isSigned(by: SignedNote.VerifierKey(name: checkpoint.origin, publicKey: Array(key.publicKey.rawRepresentation))))
        }
        #expect(try LogCheckpoint(parsing: read.text) == checkpoint)
    }
}
