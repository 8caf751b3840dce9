@testable import AuditTrail
import Crypto
import Foundation
import PhotosModel
import PhotosTestSupport
import SQLiteStore
import Testing

/// `TlogWitness`, the C2SP tlog-witness behind `audit witness serve`, over a real state file:
/// every answer of add-checkpoint, a cosignature that checks (and that Go's `note.Open` with the
/// log's key alone passes over), state that never goes back, and concurrent requests that
/// cannot roll it back.
@Suite("A C2SP tlog-witness")
struct TlogWitnessTests {
    /// A log in memory: its key, its leaves, its signed checkpoints and proofs.
    struct Log {
        let origin: String
        let key = Curve25519.Signing.PrivateKey()
        var leaves: [[UInt8]] = []
        var verifier: SignedNote.VerifierKey { SignedNote.VerifierKey(name: origin, publicKey: Array(key.publicKey.rawRepresentation)) }

        mutating func grow(_ count: Int) {
            for _ in 0..<count { leaves.append((0..<32).map { _ in UInt8.random(in: 0...255) }) }
        }

        func tree(_ size: Int) -> TransparencyLogTests.Leaves { TransparencyLogTests.Leaves(Array(leaves.prefix(size))) }

        func checkpoint(_ size: Int, signedBy signer: Curve25519.Signing.PrivateKey? = nil) throws -> String {
            let root = MerkleTree.root(size: Int64(size), subtree: tree(size).subtree)
            return try SignedNote.sign(LogCheckpoint(origin: origin, size: Int64(size), root: root).body, with: [(origin, signer ?? key)]).encoded
        }

        func proof(_ old: Int, _ new: Int) -> [String] {
            guard old > 0, old < new else { return [] }
            return MerkleTree.consistencyProof(old: Int64(old), new: Int64(new), subtree: tree(new).subtree).map { Data($0).base64EncodedString() }
        }

        func request(old: Int, size: Int, proof: [String]? = nil, signedBy signer: Curve25519.Signing.PrivateKey? = nil) throws -> String {
            "old \(old)\n" + (proof ?? self.proof(old, size)).map { $0 + "\n" }.joined() + "\n" + (try checkpoint(size, signedBy: signer))
        }
    }

    static func witness(_ directory: TemporaryDirectory, logs: [SignedNote.VerifierKey]) async throws -> TlogWitness {
        try await TlogWitness(
            name: "witness.example/w1", key: try AuditSigningKey.loadOrCreate(path: directory.file("witness.key")), logs: logs,
            state: try Connection(path: directory.file("state.db")))
    }

    @Test("every answer: 200 with a cosignature that checks, 409 with the size it holds, 422 for a proof that fails or a fork, 400, 403, 404; refusals change nothing")
    func answers() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var log = Log(origin: "shop.example/log")
        log.grow(40)
        let witness = try await Self.witness(directory, logs: [log.verifier])
        let cosigner = await witness.cosignerKey
        #expect(CosignerKey(cosigner.description) == cosigner)

        func cosigned(_ answer: TlogWitness.Answer, _ size: Int) throws -> Bool {
            guard answer.status == 200 else { return false }
            let note = try SignedNote(parsing: try log.checkpoint(size) + answer.body)
            guard let time = cosigner.cosignedTime(of: note) else { return false }
            return abs(Double(time) - Date().timeIntervalSince1970) < 120
        }
        // First contact: old 0, no proof.
        #expect(try cosigned(try await witness.addCheckpoint(try log.request(old: 0, size: 5)), 5))
        // Growth with a proof.
        #expect(try cosigned(try await witness.addCheckpoint(try log.request(old: 5, size: 13)), 13))
        // A stale old size: 409 with the witness's size, then the retry from it.
        let stale = try await witness.addCheckpoint(try log.request(old: 5, size: 20))
        #expect(stale == TlogWitness.Answer(status: 409, contentType: "text/x.tlog.size", body: "13\n"))
        #expect(try cosigned(try await witness.addCheckpoint(try log.request(old: 13, size: 20)), 20))
        // The same size again: cosigned; the same size with another root: 409.
        #expect(try cosigned(try await witness.addCheckpoint(try log.request(old: 20, size: 20)), 20))
        var forked = log
        forked.leaves[3] = Array(repeating: 7, count: 32)
        #expect(try await witness.addCheckpoint(try forked.request(old: 20, size: 20)).status == 409)
        // A proof that fails, and a fork with its own (valid for it) proof: 422.
        var bad = log.proof(20, 30)
        bad[0] = Data(repeating: 1, count: 32).base64EncodedString()
        #expect(try await witness.addCheckpoint(try log.request(old: 20, size: 30, proof: bad)).status == 422)
        #expect(try await witness.addCheckpoint(try forked.request(old: 20, size: 30)).status == 422)
        // Malformed, old above the size, another log, another key under the log's name.
        #expect(try await witness.addCheckpoint(try log.request(old: 31, size: 30)).status == 400)
        #expect(try await witness.addCheckpoint("old 01\n\n" + (try log.checkpoint(30))).status == 400)
        #expect(try await witness.addCheckpoint("old 20\n" + (try log.checkpoint(30))).status == 400)
        #expect(try await witness.addCheckpoint("old 20\nnot base64\n\n" + (try log.checkpoint(30))).status == 400)
        var other = Log(origin: "other.example/log")
        other.grow(3)
        #expect(try await witness.addCheckpoint(try other.request(old: 0, size: 3)).status == 404)
        #expect(try await witness.addCheckpoint(try log.request(old: 20, size: 30, signedBy: Curve25519.Signing.PrivateKey())).status == 403)
        // None of that moved it: still at 20, and honest growth goes on.
        #expect(try await witness.cosigned(origin: log.origin)?.size == 20)
        #expect(try cosigned(try await witness.addCheckpoint(try log.request(old: 20, size: 40)), 40))
    }

    @Test("a witness restarted on its state file goes on from where it was; twenty racing requests from one old size: one moves it, the rest get 409, it never goes back")
    func stateHolds() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var log = Log(origin: "shop.example/log")
        log.grow(64)
        let first = try await Self.witness(directory, logs: [log.verifier])
        #expect(try await first.addCheckpoint(try log.request(old: 0, size: 8)).status == 200)
        let again = try await Self.witness(directory, logs: [log.verifier])
        #expect(try await again.addCheckpoint(try log.request(old: 0, size: 8)) == .init(status: 409, contentType: "text/x.tlog.size", body: "8\n"))
        let requests = try (9...28).map { try log.request(old: 8, size: $0) }
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for request in requests { group.addTask { try await again.addCheckpoint(request).status } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(statuses.filter { $0 == 200 }.count == 1 && statuses.filter { $0 == 409 }.count == 19, "\(statuses)")
        let size = try #require(try await again.cosigned(origin: log.origin)?.size)
        #expect((9...28).contains(size))
        // A request from a smaller tree can never take it back.
        #expect(try await again.addCheckpoint(try log.request(old: 8, size: 8)).status == 409)
        #expect(try await again.cosigned(origin: log.origin)?.size == size)
    }

    @Test("Go's note.Open with the log's key alone accepts a note carrying a cosignature; a receipt's check with --witness counts it, and a quorum it lacks fails at witnesses")
    func cosignedNotes() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var log = Log(origin: "shop.example/log")
        log.grow(6)
        let witness = try await Self.witness(directory, logs: [log.verifier])
        let answer = try await witness.addCheckpoint(try log.request(old: 0, size: 6))
        let cosignedNote = try log.checkpoint(6) + answer.body
        let go = try await GoTlogVerifier.check(["key": log.verifier.description, "note": cosignedNote])
        #expect(go.status == 0, "\(go.output)")
        // A receipt of leaf 5 against the cosigned checkpoint (a hand-made one-row receipt is
        // enough for the witness step: the rest is ReceiptTests').
        let note = try SignedNote(parsing: cosignedNote)
        let cosigner = await witness.cosignerKey
        let stranger = CosignerKey(name: "other.example/w", publicKey: Array(Curve25519.Signing.PrivateKey().publicKey.rawRepresentation))
        #expect(cosigner.cosignedTime(of: note) != nil && stranger.cosignedTime(of: note) == nil)
        let receipt = AuditReceipt(sessionId: "s", rows: [], inclusion: .init(logIndex: 0, treeSize: 6, hashes: []), checkpoint: cosignedNote)
        #expect(receipt.cosigners([cosigner, stranger]).map(\.key) == [cosigner])
    }
}
