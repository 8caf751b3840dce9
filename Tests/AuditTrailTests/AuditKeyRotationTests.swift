@testable import AuditTrail
import DatabaseAccess
import Foundation
@testable import PhotosCore
import PhotosModel
import PhotosTestSupport
import Testing

/// `photos-admin audit key --rotate` (design §15): the rotation is a checkpoint signed by the
/// old key naming the new one, and `audit verify` follows the chain of keys from the first.
@Suite("Audit key rotation")
struct AuditKeyRotationTests {
    static func append(_ trail: String, _ count: Int, on database: any DatabaseStore) async throws {
        try await database.write { connection in
            let writer = try await AuditTrailWriter(sessionID: trail, on: connection)
            for index in 0..<count {
                writer.record(AuditEntry(actor: .client, coordinator: "app", step: .screenPush, screen: "photo", detail: ["photoId": .int(Int64(index))]))
            }
            _ = try await writer.write(at: ISO8601Timestamp.now())
        }
    }

    @Test("after a rotation, checkpoints are signed by the new key and verify follows the chain from the first key; the new key alone does not verify the past", arguments: TestStore.all)
    func rotation(store: TestStore) async throws {
        let test = try await TestDatabase.make(store)
        defer { test.close() }
        let audit = AuditService(database: test.database, signingKeyPath: test.directory.file("audit-signing.key"))
        try await Self.append("s1", 3, on: test.database)
        let first = try #require(try await audit.checkpoint())
        let old = try await audit.checkedSigningKey().publicKeyHex
        let rotation = try await audit.rotateKey()
        #expect(rotation.oldPublicKey == old && rotation.newPublicKey != old && !rotation.finishedInterrupted)
        #expect(rotation.checkpoint == first.number + 1)
        #expect(try await audit.checkedSigningKey().publicKeyHex == rotation.newPublicKey, "the key file holds the new key")
        try await Self.append("s1", 2, on: test.database)
        try await Self.append("s2", 1, on: test.database)
        let after = try #require(try await audit.checkpoint())
        #expect(after.publicKey == rotation.newPublicKey)
        // The rotation itself: signed by the old key, naming the new one.
        let checkpoints = try await test.database.read { try await $0.query("SELECT number, public_key, next_public_key FROM audit_checkpoints ORDER BY number") }
        #expect(try checkpoints.map { try $0.string(1) } == [old, old, rotation.newPublicKey])
        #expect(checkpoints.map { $0.optionalString(2) } == [nil, rotation.newPublicKey, nil])

        // Trusted: the first key given, or the first of the history; the chain does the rest.
        let oldKey = try AuditPublicKey(hex: old)
        let verified = try await audit.verify(publicKey: oldKey)
        #expect(verified.problem == nil, "\(String(describing: verified.problem))")
        #expect(verified.keyRotations == [rotation.checkpoint])
        #expect(try audit.trustedKey(explicit: nil) == oldKey, "without --public-key, the history's first key is trusted")
        let newOnly = try await audit.verify(publicKey: try AuditPublicKey(hex: rotation.newPublicKey))
        #expect(newOnly.problem?.checkpoint == 1, "the new key must not vouch for what the old one signed: \(String(describing: newOnly.problem))")

        // A second rotation: the history keeps both old keys, oldest first.
        let second = try await audit.rotateKey()
        #expect(second.oldPublicKey == rotation.newPublicKey)
        let history = try String(contentsOfFile: audit.keyHistoryPath, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(history == [old, rotation.newPublicKey])
        #expect(try await audit.verify(publicKey: oldKey).keyRotations == [rotation.checkpoint, second.checkpoint])
    }

    @Test("two processes with their own key files: once one rotates, the other refuses to sign (never two keys at once) until it has the new key", arguments: TestStore.all)
    func twoHoldersNeverSignWithDifferentKeys(store: TestStore) async throws {
        let test = try await TestDatabase.make(store)
        defer { test.close() }
        let here = AuditService(database: test.database, signingKeyPath: test.directory.file("a/audit-signing.key"))
        let there = AuditService(database: test.database, signingKeyPath: test.directory.file("b/audit-signing.key"))
        for path in ["a", "b"] { try FileManager.default.createDirectory(atPath: test.directory.file(path), withIntermediateDirectories: true) }
        try await Self.append("s1", 1, on: test.database)
        _ = try await here.checkpoint()
        try FileManager.default.copyItem(atPath: here.signingKeyPath, toPath: there.signingKeyPath)
        try await Self.append("s1", 1, on: test.database)
        #expect(try await there.checkpoint() != nil, "the same key signs from either")
        let rotation = try await here.rotateKey()
        try await Self.append("s1", 1, on: test.database)
        await #expect(throws: PhotosError.self) { try await there.checkpoint() }
        do {
            _ = try await there.checkpoint()
        } catch let error as PhotosError {
            #expect(error.message.contains("rotated at checkpoint \(rotation.checkpoint)"), "\(error.message)")
        }
        #expect(try await here.checkpoint()?.publicKey == rotation.newPublicKey)
        // Given the new key, the other signs again.
        try FileManager.default.removeItem(atPath: there.signingKeyPath)
        try FileManager.default.copyItem(atPath: here.signingKeyPath, toPath: there.signingKeyPath)
        try await Self.append("s1", 1, on: test.database)
        #expect(try await there.checkpoint()?.publicKey == rotation.newPublicKey)
        #expect(try await here.verify(publicKey: try AuditPublicKey(hex: rotation.oldPublicKey)).problem == nil)
    }

    @Test("a rotation stopped after its checkpoint, before the new key replaced the file: checkpoints are refused, naming it; running it again finishes it", arguments: TestStore.all)
    func interruptedRotation(store: TestStore) async throws {
        let test = try await TestDatabase.make(store)
        defer { test.close() }
        let audit = AuditService(database: test.database, signingKeyPath: test.directory.file("audit-signing.key"))
        try await Self.append("s1", 2, on: test.database)
        _ = try await audit.checkpoint()
        let oldBytes = try Data(contentsOf: URL(fileURLWithPath: audit.signingKeyPath))
        let rotation = try await audit.rotateKey()
        // As if killed before the rename: the new key still in .next, the old in place.
        try FileManager.default.moveItem(atPath: audit.signingKeyPath, toPath: audit.signingKeyPath + ".next")
        #expect(FileManager.default.createFile(atPath: audit.signingKeyPath, contents: oldBytes, attributes: [.posixPermissions: 0o600]))
        try await Self.append("s1", 1, on: test.database)
        await #expect(throws: PhotosError.self) { try await audit.checkpoint() }
        let finished = try await audit.rotateKey()
        #expect(finished.finishedInterrupted && finished.checkpoint == rotation.checkpoint && finished.newPublicKey == rotation.newPublicKey)
        #expect(try await audit.checkpoint()?.publicKey == rotation.newPublicKey)
        let count = try await test.database.read { try await $0.queryOne("SELECT count(*) FROM audit_checkpoints WHERE next_public_key IS NOT NULL")?.int(0) }
        #expect(count == 1, "finishing made no second rotation")
        #expect(try await audit.verify(publicKey: try AuditPublicKey(hex: rotation.oldPublicKey)).problem == nil)
    }
}
