@testable import AuditTrail
import Crypto
import DatabaseAccess
import Foundation
import Navigation
import PhotosModel
import PhotosTestSupport
import Sessions
import Testing

/// Witnesses' cosignatures stored beside the checkpoints (`audit_cosignatures`) and what is
/// served with them: the newest checkpoint with its quorum, on both stores.
@Suite("Cosignatures: stored beside the checkpoint, served with its quorum")
struct AuditCosignaturesTests {
    struct Witness {
        let name: String
        let key = Curve25519.Signing.PrivateKey()
        var cosigner: CosignerKey { CosignerKey(name: name, publicKey: Array(key.publicKey.rawRepresentation)) }

        /// Its cosignature line on `note`'s text.
        func line(_ note: String, time: UInt64 = 1_800_000_000) throws -> String {
            SignedNote.line(try Cosignature.sign(body: try SignedNote(parsing: note).text, name: name, key: key, time: time))
        }
    }

    @Test("served: newest checkpoint without witnesses, the newest with the quorum with them; a line that does not verify is refused; one per witness and checkpoint; append-only; receipts pending until the quorum", arguments: TestStore.all)
    func quorum(testStore: TestStore) async throws {
        let world = try await LogForkTests.World(testStore)
        defer { Task { await world.close() } }
        let (one, two) = (Witness(name: "w.example/1"), Witness(name: "w.example/2"))
        let both = try #require(WitnessPolicy(keys: [one.cosigner, two.cosigner], quorum: 2))
        let either = try #require(WitnessPolicy(keys: [one.cosigner, two.cosigner], quorum: 1))
        #expect(WitnessPolicy(keys: [], quorum: 1) == nil)
        try await world.journeys(2)
        let first = try #require(try await world.audit.checkpoint())
        let note = try #require(first.note)
        func served(_ policy: WitnessPolicy?) async throws -> AuditCosignatures.Served? {
            try await world.database.read { try await AuditCosignatures.served(policy, on: $0) }
        }
        func store(_ line: String, _ witness: Witness, _ number: Int) async throws -> AuditCosignatures.Stored {
            let cosigner = witness.cosigner
            return try await world.database.write { try await AuditCosignatures.store(line, of: cosigner, checkpoint: Int64(number), at: "2026-11-29T00:00:00.000Z", on: $0) }
        }
        let size = try #require(first.treeSize)
        let plain = try await served(nil)
        #expect(plain == AuditCosignatures.Served(number: Int64(first.number), size: size, note: note, cosignatures: 0))
        #expect(try await served(both) == nil)
        #expect(try await served(either) == nil)

        #expect(try await store(try one.line(note), one, first.number) == .stored)
        #expect(try await served(both) == nil)
        #expect(try await served(either)?.cosignatures == 1)
        // Another body's cosignature, another key's line under the witness's name: refused, nothing stored.
        let forged = try two.line("other.example/log\n1\n\(Data(count: 32).base64EncodedString())\n\n\u{2014} x AAAAAAAA\n")
        #expect(try await store(forged, two, first.number) == .refused("the cosignature of \(two.cosigner.name) does not verify over checkpoint \(first.number)"))
        #expect(try await store(try one.line(note), two, first.number) == .refused("the cosignature of \(two.cosigner.name) does not verify over checkpoint \(first.number)"))
        #expect(try await served(both) == nil)
        #expect(try await store(try two.line(note), two, first.number) == .stored)
        #expect(try await store(try one.line(note, time: 1_800_000_001), one, first.number) == .alreadyStored, "a second cosignature of one witness is ignored")

        let cosigned = try #require(try await served(both))
        #expect(cosigned.number == Int64(first.number) && cosigned.cosignatures == 2)
        let parsed = try SignedNote(parsing: cosigned.note)
        #expect(one.cosigner.cosignedTime(of: parsed) == 1_800_000_000 && two.cosigner.cosignedTime(of: parsed) != nil)
        #expect(cosigned.note.hasPrefix(note))

        // A newer checkpoint cosigned by one: served with one witness's quorum, not with both's.
        try await world.journeys(1)
        let second = try #require(try await world.audit.checkpoint())
        #expect(try await store(try one.line(try #require(second.note)), one, second.number) == .stored)
        #expect(try await served(both)?.number == Int64(first.number))
        #expect(try await served(either)?.number == Int64(second.number))

        // The receipt of a session only the second checkpoint covers: pending with both's quorum.
        let id = try await world.sessions.createSession().session.id
        _ = try await world.sessions.apply(ClientAction(.selectPhoto, photoId: 1), to: id)
        let third = try #require(try await world.audit.checkpoint())
        let witnessed = AuditService(database: world.database, signingKeyPath: world.keyPath, witnesses: both)
        guard case .pending = try await witnessed.receipt(sessionID: id) else { Issue.record("a receipt without its quorum"); return }
        let before = try #require(try await witnessed.receiptStamp(sessionID: id))
        #expect(try await store(try one.line(try #require(third.note)), one, third.number) == .stored)
        #expect(try await witnessed.receiptStamp(sessionID: id) == before, "one cosignature of two changes nothing served")
        #expect(try await store(try two.line(try #require(third.note)), two, third.number) == .stored)
        #expect(try await witnessed.receiptStamp(sessionID: id) != before)
        guard case .receipt(let receipt) = try await witnessed.receipt(sessionID: id) else { Issue.record("no receipt with the quorum"); return }
        #expect(receipt.cosigners([one.cosigner, two.cosigner]).count == 2)
        #expect(try await witnessed.newestCheckpointNote() == served(both)?.note)

        // Append-only.
        await #expect(throws: (any Error).self) { _ = try await world.database.write { try await $0.execute("UPDATE audit_cosignatures SET line = 'x'") } }
        await #expect(throws: (any Error).self) { _ = try await world.database.write { try await $0.execute("DELETE FROM audit_cosignatures") } }
    }
}
