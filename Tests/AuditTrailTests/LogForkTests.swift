@testable import AuditTrail
import DatabaseAccess
import Foundation
import Navigation
@testable import PhotosCore
import PhotosModel
import PhotosStorage
import PhotosTestSupport
import Sessions
import SQLiteStore
import Testing

/// The fork matrix: the key never signs a tree that does not extend one it signed — not after a
/// node altered in the database, rows rolled back below the signed size, an older backup
/// restored, or under another origin — and it goes on signing where that is safe (rows rolled
/// back above or at the signed size, a new log after a restore). Every note it signed is checked
/// against every earlier one of its log by the Go checksum database's verifier.
@Suite("Log forks: the key signs no tree that contradicts one it signed", .serialized)
struct LogForkTests {
    /// A database with services over it and the key in the test's directory.
    final class World: @unchecked Sendable {
        // @unchecked: one test's sequential awaits use it; `database` is replaced only by `restore`.
        let test: TestDatabase
        var database: any DatabaseStore
        var sessions: SessionCoordinator
        var audit: AuditService
        let keyPath: String
        /// A restored PostgreSQL database, dropped at `close`.
        var restored: PostgresTestDatabase?

        init(_ store: TestStore, origin: String? = nil) async throws {
            test = try await TestDatabase.make(store)
            database = test.database
            keyPath = test.directory.file("audit-signing.key")
            sessions = try test.sessions(auth: test.auth())
            audit = AuditService(database: test.database, signingKeyPath: keyPath, logOrigin: origin)
            _ = try await CatalogService(database: database).add(NewPhoto(title: "Sunset", priceCents: 250), actor: .system)
        }

        /// Services over `database` (after a restore), the same key.
        func reopen(_ database: any DatabaseStore, origin: String? = nil) throws {
            self.database = database
            let secret = try ServerSecret.loadOrCreate(path: test.directory.file("photosd-secret.key"))
            let auth = AuthService(database: database, bcryptCost: 4, tokenLifetimeSeconds: 3_600)
            sessions = SessionCoordinator(
                database: database, auth: auth, idempotency: IdempotencyStore(secret: secret, retentionSeconds: 86_400), idleExpirySeconds: 0,
                experimentsMaxAge: .zero)
            audit = AuditService(database: database, signingKeyPath: keyPath, logOrigin: origin)
        }

        /// `count` sessions of four rows each (start, action, push, …).
        func journeys(_ count: Int) async throws {
            for _ in 0..<count {
                let id = try await sessions.createSession().session.id
                _ = try await sessions.apply(ClientAction(.selectPhoto, photoId: 1), to: id)
                _ = try await sessions.apply(ClientAction(.back), to: id)
            }
        }

        /// The signed notes in the database, oldest first.
        func notes() async throws -> [(number: Int, size: Int64, note: String)] {
            try await database.read { connection in
                try await connection.query("SELECT number, tree_size, note FROM audit_checkpoints WHERE note IS NOT NULL ORDER BY number").map {
                    (try $0.int("number"), try $0.int64("tree_size"), try $0.string("note"))
                }
            }
        }

        func head() async throws -> AuditLogTree.Head { try await database.read { try await AuditLogTree.head(on: $0) } }

        /// What someone who can write the database (and not read the key) does: `sql` with the
        /// append-only triggers out of the way.
        func behindTriggers(_ sql: String) async throws {
            let unlock = test.postgres != nil || restored != nil
                ? """
                ALTER TABLE audit_events DISABLE TRIGGER USER; ALTER TABLE audit_checkpoints DISABLE TRIGGER USER;
                ALTER TABLE audit_log DISABLE TRIGGER USER; ALTER TABLE audit_log_leaf_runs DISABLE TRIGGER USER; ALTER TABLE audit_log_nodes DISABLE TRIGGER USER;
                ALTER TABLE audit_log_tiles DISABLE TRIGGER USER;
                """
                : """
                DROP TRIGGER IF EXISTS audit_events_no_update; DROP TRIGGER IF EXISTS audit_events_no_delete;
                DROP TRIGGER IF EXISTS audit_checkpoints_no_delete; DROP TRIGGER IF EXISTS audit_checkpoints_no_update;
                DROP TRIGGER IF EXISTS audit_log_grows_only; DROP TRIGGER IF EXISTS audit_log_leaf_runs_no_delete;
                DROP TRIGGER IF EXISTS audit_log_leaf_runs_no_update; DROP TRIGGER IF EXISTS audit_log_nodes_no_update;
                DROP TRIGGER IF EXISTS audit_log_nodes_no_delete; DROP TRIGGER IF EXISTS audit_log_tiles_only_extended;
                DROP TRIGGER IF EXISTS audit_log_tiles_no_delete;
                """
            try await database.write { connection in try await connection.executeScript(unlock + "\n" + sql) }
        }

        /// The database's log as it was at `size` leaves, and its rows with it: every row after
        /// leaf `size - 1` deleted (integrated or not), the leaves, tiles and nodes beyond it, the
        /// head moved back; with `checkpoints`, the checkpoints that signed more go too.
        func rollBack(toSize size: Int64, checkpoints: Bool = false) async throws {
            let lastID = try await database.read { connection in
                try await connection.queryOne(
                    "SELECT first_event_id + (\(size - 1) - first_index) AS event_id FROM audit_log_leaf_runs WHERE first_index <= \(size - 1) ORDER BY first_index DESC LIMIT 1")?.int64("event_id")
            }
            let last = try #require(lastID)
            let tile = (size - 1) / AuditLogTree.tileWidth, kept = ((size - 1) % AuditLogTree.tileWidth + 1) * 32
            var sql = """
                DELETE FROM audit_events WHERE id > \(last);
                DELETE FROM audit_log_leaf_runs WHERE first_index >= \(size);
                UPDATE audit_log_leaf_runs SET count = \(size) - first_index WHERE first_index + count > \(size);
                DELETE FROM audit_log_tiles WHERE idx > \(tile);
                UPDATE audit_log_tiles SET hashes = \(test.postgres != nil || restored != nil ? "substring(hashes FROM 1 FOR \(kept))" : "substr(hashes, 1, \(kept))") WHERE idx = \(tile);
                UPDATE audit_log SET size = \(size), integrated_until_id = \(last);
                """
            for level in AuditLogTree.lowestStoredLevel..<40 { sql += "\nDELETE FROM audit_log_nodes WHERE level = \(level) AND idx >= \(size >> Int64(level));" }
            if checkpoints { sql += "\nDELETE FROM audit_checkpoints WHERE tree_size > \(size);" }
            try await behindTriggers(sql)
        }

        func close() async {
            await database.close()
            await test.postgres?.drop()
            await restored?.drop()
            test.directory.remove()
        }
    }

    /// Every note of each origin, checked by Go against each earlier one of that origin, with a
    /// consistency proof from the database's tree (which extends them all when nothing forked).
    static func expectConsistent(_ world: World) async throws {
        let key = try AuditSigningKey.load(path: world.keyPath)
        let notes = try await world.notes()
        var checked = 0
        for (offset, new) in notes.enumerated() {
            let body = try LogCheckpoint(parsing: SignedNote(parsing: new.note).text)
            let verifier = key.noteVerifierKey(origin: body.origin).description
            for old in notes.prefix(offset) {
                let oldBody = try LogCheckpoint(parsing: SignedNote(parsing: old.note).text)
                guard oldBody.origin == body.origin, old.size > 0 else { continue }
                let proof = try await world.database.read { try await AuditLogTree.consistencyProof(old: old.size, new: new.size, on: $0) }
                let checked1 = try await GoTlogVerifier.check([
                    "key": verifier, "note": new.note, "oldNote": old.note, "consistency": GoVerifierTests.base64(proof),
                ])
                #expect(checked1.status == 0, "checkpoint \(new.number) against \(old.number): \(checked1.output)")
                checked += 1
            }
        }
        #expect(checked > 0, "no pair of notes was checked")
    }

    /// What a refused signature leaves: no new note, the file beside the key as it was, the
    /// refusal (naming both sizes) from `checkpoint`, `logFork` and `verify`.
    static func expectRefused(_ world: World, signed: SignedTreeHead, notes before: Int, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        await #expect(throws: LogFork.self, sourceLocation: sourceLocation) { try await world.audit.checkpoint() }
        do {
            try await world.audit.checkpoint()
        } catch let fork as LogFork {
            #expect(fork.signed.size == signed.size && fork.description.contains("\(signed.size)"), "\(fork)", sourceLocation: sourceLocation)
        }
        #expect(try await world.notes().count == before, "a note was signed", sourceLocation: sourceLocation)
        #expect(try SignedTreeHeadFile.read(keyPath: world.keyPath) == signed, sourceLocation: sourceLocation)
        #expect(try await world.audit.logFork() != nil, sourceLocation: sourceLocation)
        let verification = try await world.audit.verify(publicKey: try world.audit.trustedKey(explicit: nil))
        #expect(verification.logFork != nil && verification.problem != nil, "\(String(describing: verification.problem))", sourceLocation: sourceLocation)
    }

    @Test("a right-edge hash altered in the database: the next checkpoint is refused, check and verify name both heads", arguments: TestStore.all)
    func alteredNode(store: TestStore) async throws {
        let world = try await World(store)
        defer { Task { await world.close() } }
        try await world.journeys(6)
        let first = try #require(try await world.audit.checkpoint())
        let signed = try #require(try SignedTreeHeadFile.read(keyPath: world.keyPath))
        #expect(signed.size == first.treeSize && signed.checkpoint == first.number)
        #expect(try await world.audit.logFork() == nil)
        // The newest leaf's hash, in the lowest complete subtree on the tree's right edge.
        let size = signed.size
        #expect(size < AuditLogTree.tileWidth, "the right edge is in the partial tile")
        let offset = (size - 1) * 32
        try await world.behindTriggers(
            store == .sqlite
                ? "UPDATE audit_log_tiles SET hashes = CAST(substr(hashes, 1, \(offset)) || randomblob(32) AS BLOB) WHERE idx = 0"
                : "UPDATE audit_log_tiles SET hashes = overlay(hashes PLACING sha256(random()::text::bytea) FROM \(offset + 1) FOR 32) WHERE idx = 0")
        try await world.journeys(2)
        try await Self.expectRefused(world, signed: signed, notes: 1)
    }

    enum Rollback: String, CaseIterable, CustomTestStringConvertible {
        case above, at, below, belowWithCheckpoints
        var testDescription: String { rawValue }
    }

    @Test("rows rolled back above or at the signed size: signing goes on, consistent; below it (with the checkpoints deleted too): refused", arguments: TestStore.all, Rollback.allCases)
    func rollback(store: TestStore, rollback: Rollback) async throws {
        let world = try await World(store)
        defer { Task { await world.close() } }
        try await world.journeys(6)
        try #require(try await world.audit.checkpoint() != nil)
        let signed = try #require(try SignedTreeHeadFile.read(keyPath: world.keyPath))
        // Rows after the checkpoint, made leaves but signed by nothing.
        try await world.journeys(3)
        let newest = try await world.database.read { try await AuditChains.settledNewestID(on: $0) }
        try await world.audit.integrate(until: newest)
        #expect(try await world.head().size > signed.size + 3)
        switch rollback {
        case .above: try await world.rollBack(toSize: signed.size + 2)
        case .at: try await world.rollBack(toSize: signed.size)
        case .below: try await world.rollBack(toSize: signed.size - 3)
        case .belowWithCheckpoints: try await world.rollBack(toSize: signed.size - 3, checkpoints: true)
        }
        try await world.journeys(2)
        switch rollback {
        case .above, .at:
            let written = try #require(try await world.audit.checkpoint())
            #expect(try SignedTreeHeadFile.read(keyPath: world.keyPath) == SignedTreeHead(of: written))
            try await Self.expectConsistent(world)
        case .below:
            try await Self.expectRefused(world, signed: signed, notes: 1)
        case .belowWithCheckpoints:
            // Only the head outside the database knows what was signed.
            try await Self.expectRefused(world, signed: signed, notes: 0)
            #expect(try await world.audit.logFork()?.signedIn == world.audit.signedHeadPath)
        }
    }

    @Test("an older backup restored: refused before and after new rows, named by verify; a new log goes on, its first note naming the old log's last head", arguments: TestStore.all)
    func restoredBackup(store: TestStore) async throws {
        let world = try await World(store)
        defer { Task { await world.close() } }
        try await world.journeys(4)
        try #require(try await world.audit.checkpoint() != nil)
        let oldOrigin = try await world.audit.origin()
        // The backup, taken as docs/deploy.md and docs/postgres.md say.
        let backup = world.test.directory.file("backup.db")
        let dump: Data? = if let postgres = world.test.postgres { try await postgres.dump() } else { nil }
        if dump == nil { try await DatabaseMaintenance.backup(world.database, to: backup) }
        try await world.journeys(4)
        try #require(try await world.audit.checkpoint() != nil)
        let signed = try #require(try SignedTreeHeadFile.read(keyPath: world.keyPath))
        #expect(signed.checkpoint == 2)

        // Restored: the backup's file in place of the database, or a database made from the dump.
        await world.database.close()
        let restored: any DatabaseStore
        if let dump {
            let database = try await PostgresTestDatabase.create()
            world.restored = database
            try await database.restore(dump)
            var configuration = world.test.configuration()
            configuration.databasePath = database.url()
            restored = try await PhotosDatabase.open(configuration, logger: PostgresTestDatabase.logger)
        } else {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: world.test.path + suffix) }
            try FileManager.default.copyItem(atPath: backup, toPath: world.test.path)
            restored = try PhotosDatabase.open(path: world.test.path, durability: .full, readerCount: 2)
        }
        try world.reopen(restored)
        // The restored database verifies by itself; only the head beside the key shows it went back.
        let fork = try #require(try await world.audit.logFork())
        #expect(fork.isBehind && fork.signed == signed && fork.signedIn == world.audit.signedHeadPath, "\(fork)")
        try await world.journeys(6)
        try await Self.expectRefused(world, signed: signed, notes: 1)

        // The way on: a new log over this database.
        await #expect(throws: PhotosError.self) { try await world.audit.restartLog(origin: oldOrigin) }
        let first = try await world.audit.restartLog(origin: "restored.example/photos")
        let body = try LogCheckpoint(parsing: SignedNote(parsing: try #require(first.note)).text)
        #expect(body.origin == "restored.example/photos")
        #expect(body.extensions == ["previous \(oldOrigin) \(signed.size) \(Data(signed.root).base64EncodedString())"])
        #expect(try await world.audit.origin() == "restored.example/photos")
        #expect(try await world.audit.logFork() == nil)
        try await world.journeys(2)
        try #require(try await world.audit.checkpoint() != nil)
        let verification = try await world.audit.verify(publicKey: try world.audit.trustedKey(explicit: nil))
        #expect(verification.problem == nil, "\(String(describing: verification.problem))")
        try await Self.expectConsistent(world)
    }

    @Test("a trail whose newest rows were deleted (by someone who can write the database) gets no receipt, not a shorter one that checks", arguments: TestStore.all)
    func shortenedTrail(store: TestStore) async throws {
        let world = try await World(store)
        defer { Task { await world.close() } }
        let id = try await world.sessions.createSession().session.id
        for _ in 0..<3 {
            _ = try await world.sessions.apply(ClientAction(.selectPhoto, photoId: 1), to: id)
            _ = try await world.sessions.apply(ClientAction(.back), to: id)
        }
        try #require(try await world.audit.checkpoint() != nil)
        guard case .receipt(let whole) = try await world.audit.receipt(sessionID: id) else {
            Issue.record("no receipt for the whole trail")
            return
        }
        #expect(try whole.check(key: try AuditSigningKey.load(path: world.keyPath).noteVerifierKey(origin: try await world.audit.origin())).rows == whole.rows.count)
        try await world.behindTriggers("DELETE FROM audit_events WHERE session_id = '\(id)' AND seq > 4")
        guard case .notIntact(let damage) = try await world.audit.receipt(sessionID: id) else {
            Issue.record("a receipt was served for a trail cut short")
            return
        }
        #expect(damage.newestSeq == 4 && damage.recordedSeq == whole.rows.count, "\(damage)")
    }

    @Test("one origin per log: stored at the first checkpoint; a process without the setting uses it, one configured with another is refused naming the setting", arguments: TestStore.all)
    func origin(store: TestStore) async throws {
        let world = try await World(store, origin: "shop.example/log")
        defer { Task { await world.close() } }
        try await world.journeys(2)
        try #require(try await world.audit.checkpoint() != nil)
        #expect(try await world.head().origin == "shop.example/log")

        let other = AuditService(database: world.database, signingKeyPath: world.keyPath, logOrigin: "other.example/log")
        try await world.journeys(1)
        do {
            try await other.checkpoint()
            Issue.record("a checkpoint under another origin was signed")
        } catch let error as PhotosError {
            #expect(error.message.contains("audit.logOrigin") && error.message.contains("shop.example/log"), "\(error.message)")
        }
        await #expect(throws: PhotosError.self) { try await other.origin() }
        #expect(try await world.notes().count == 1)

        let unset = AuditService(database: world.database, signingKeyPath: world.keyPath)
        #expect(try await unset.origin() == "shop.example/log")
        let written = try #require(try await unset.checkpoint())
        #expect(try LogCheckpoint(parsing: SignedNote(parsing: try #require(written.note)).text).origin == "shop.example/log")
        world.audit = unset
        try await Self.expectConsistent(world)
    }

    @Test("a rotation's checkpoint carries the new key, signed by both; the notes stay one consistent log", arguments: TestStore.all)
    func rotation(store: TestStore) async throws {
        let world = try await World(store)
        defer { Task { await world.close() } }
        try await world.journeys(3)
        try #require(try await world.audit.checkpoint() != nil)
        let old = try AuditSigningKey.load(path: world.keyPath)
        let rotation = try await world.audit.rotateKey()
        let new = try AuditSigningKey.load(path: world.keyPath)
        #expect(new.publicKeyHex == rotation.newPublicKey)
        let origin = try await world.audit.origin()
        let notes = try await world.database.read { try await AuditReceipts.rotationNotes(on: $0) }
        #expect(notes.count == 1)
        let note = try SignedNote(parsing: try #require(notes.first))
        let body = try LogCheckpoint(parsing: note.text)
        #expect(body.nextKey == new.noteVerifierKey(origin: origin))
        #expect(note.isSigned(by: old.noteVerifierKey(origin: origin)) && note.isSigned(by: new.noteVerifierKey(origin: origin)))
        #expect(RotationNotes.split(notes.joined(separator: "\n") + "\n" + notes.joined(separator: "\n")) == notes + notes)
        try await world.journeys(2)
        try #require(try await world.audit.checkpoint() != nil)
        #expect(try SignedTreeHeadFile.read(keyPath: world.keyPath)?.checkpoint == 3)
        // Go checks the notes under the key that signed each: the new key's from the rotation on.
        let all = try await world.notes()
        for (index, pair) in zip(all, all.dropFirst()).enumerated() {
            let proof = try await world.database.read { try await AuditLogTree.consistencyProof(old: pair.0.size, new: pair.1.size, on: $0) }
            let signer = index == 0 ? old : new
            let checked = try await GoTlogVerifier.check([
                "key": signer.noteVerifierKey(origin: origin).description, "note": pair.1.note, "oldNote": pair.0.note,
                "consistency": GoVerifierTests.base64(proof),
            ])
            // The rotation's note (the second) is signed by both keys: the old key opens the first
            // pair, the new key the second.
            #expect(checked.status == 0, "checkpoints \(pair.0.number) → \(pair.1.number): \(checked.output)")
        }
    }
}
