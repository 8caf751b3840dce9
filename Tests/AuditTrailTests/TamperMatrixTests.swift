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

/// The tamper matrix: each kind of tampering, applied to a database in each state of its life
/// (fresh, after an erasure, after an archive, after a key rotation, after a restart), on both
/// stores. `audit verify` must name every tampering, and pass on every untouched database.
///
/// Each cell builds its database anew (a tampering never meets another's leftovers). The
/// tampering always hits trails written last, after the state's own history, and covered by the
/// newest checkpoint: rows newer than it are protected by their chain alone, by design.
@Suite("Tamper matrix", .serialized)
struct TamperMatrixTests {
    enum State: String, CaseIterable, CustomTestStringConvertible {
        case fresh, afterErasure, afterArchive, afterKeyRotation, afterRestart
        var testDescription: String { rawValue }
    }

    enum Tampering: String, CaseIterable, CustomTestStringConvertible {
        case alterRow, deleteNewestRows, deleteTrail, insertRow, listAsRedacted, forgeKeyHistory, alterArchivedRow, alterArchivedSession
        var testDescription: String { rawValue }
        /// Tamperings of an archive file: only in the state that has one.
        var needsAnArchive: Bool { self == .alterArchivedRow || self == .alterArchivedSession }
    }

    /// A database in `state`, with two client trails written last (`target`, 5 rows; `other`) and
    /// a checkpoint over everything.
    final class World: @unchecked Sendable {
        // @unchecked: one test's sequential awaits use it; `database` is replaced only by `restart`.
        let test: TestDatabase
        let clock = TestClock()
        var database: any DatabaseStore
        var auth: AuthService
        var sessions: SessionCoordinator
        var audit: AuditService
        var archives: [String] = []
        var target = ""
        var other = ""
        let keyPath: String

        init(_ store: TestStore, _ state: State) async throws {
            test = try await TestDatabase.make(store)
            database = test.database
            keyPath = test.directory.file("audit-signing.key")
            auth = AuthService(database: test.database, bcryptCost: 4, tokenLifetimeSeconds: 86_400 * 30, now: clock.now)
            sessions = try test.sessions(auth: auth, idleExpirySeconds: 3_600)
            audit = AuditService(database: test.database, signingKeyPath: keyPath, now: clock.now)
            _ = try await CatalogService(database: database).add(NewPhoto(title: "Sunset", priceCents: 250), actor: .system)
            _ = try await auth.createUser(username: "alice", password: "password123", actor: testOperator)
            // A history: sessions that move, one signs in and buys; a token sign-in; a checkpoint.
            for index in 0..<3 { _ = try await journey(signIn: index == 0) }
            _ = try await auth.signIn(username: "alice", password: "password123", actor: .client)
            try #require(try await audit.checkpoint() != nil)
            switch state {
            case .fresh:
                break
            case .afterErasure:
                _ = try await auth.createUser(username: "zq7erasable", password: "password123", actor: testOperator)
                let signedIn = try await journey(signIn: false)
                _ = try await sessions.apply(ClientAction(.signIn), to: signedIn)
                _ = try await sessions.apply(ClientAction(.submit, username: "zq7erasable", password: "password123"), to: signedIn)
                _ = try await sessions.erase(username: "zq7erasable", actor: testOperator)
            case .afterArchive:
                // Everything ends (idle past the expiry), then everything moves to an archive.
                clock.advance(seconds: 3_601)
                _ = try await sessions.sweep(holder: "matrix")
                _ = try await audit.checkpoint()
                clock.advance(seconds: 1)
                let path = test.directory.file("archive-1.sqlite")
                _ = try await audit.archive(before: clock.now(), to: path, openFile: AuditArchiveFiles.openForWriting)
                archives.append(path)
                _ = try await auth.signIn(username: "alice", password: "password123", actor: .client)
            case .afterKeyRotation:
                _ = try await audit.rotateKey()
                _ = try await journey(signIn: true)
            case .afterRestart:
                try await restart()
            }
            target = try await journey(signIn: true)
            other = try await journey(signIn: false)
            try #require(try await audit.checkpoint() != nil)
        }

        /// A session that views a photo, goes back and starts a purchase (and signs in).
        @discardableResult
        func journey(signIn: Bool) async throws -> String {
            let id = try await sessions.createSession().session.id
            _ = try await sessions.apply(ClientAction(.selectPhoto, photoId: 1), to: id)
            _ = try await sessions.apply(ClientAction(.back), to: id)
            _ = try await sessions.apply(ClientAction(.selectPhoto, photoId: 1), to: id)
            if signIn {
                _ = try await sessions.apply(ClientAction(.buy), to: id)
                _ = try await sessions.apply(ClientAction(.submit, username: "alice", password: "password123"), to: id)
            }
            return id
        }

        /// The store closed and opened again (its pending migrations applied), with new services
        /// over it: what a restart of photosd (a shutdown checkpoint, then a new process) leaves.
        func restart(checkpointFirst: Bool = true) async throws {
            if checkpointFirst { _ = try await audit.checkpoint() }
            var configuration = test.configuration()
            configuration.auditSigningKeyPath = keyPath
            let reopened = try await PhotosDatabase.open(configuration, logger: PostgresTestDatabase.logger)
            await database.close()
            database = reopened
            auth = AuthService(database: reopened, bcryptCost: 4, tokenLifetimeSeconds: 86_400 * 30, now: clock.now)
            let secret = try ServerSecret.loadOrCreate(path: test.directory.file("photosd-secret.key"))
            sessions = SessionCoordinator(
                database: reopened, auth: auth, idempotency: IdempotencyStore(secret: secret, retentionSeconds: 86_400), idleExpirySeconds: 3_600,
                experimentsMaxAge: .zero)
            audit = AuditService(database: reopened, signingKeyPath: keyPath, now: clock.now)
        }

        /// What `photos-admin audit verify --archive …` finds (the trusted key as it chooses it).
        func verify() async throws -> AuditChains.Problem? {
            try await audit.verify(
                publicKey: try audit.trustedKey(explicit: nil), archives: archives, openArchive: AuditArchiveFiles.openForReading,
                openScratch: AuditArchiveFiles.openScratch
            ).problem
        }

        /// Runs `sql` with the append-only triggers out of the way, as someone with the database's
        /// files or its superuser would.
        func behindTriggers(_ sql: String) async throws {
            let unlock = test.postgres != nil
                ? "ALTER TABLE audit_events DISABLE TRIGGER USER; ALTER TABLE audit_redactions DISABLE TRIGGER USER; ALTER TABLE audit_checkpoints DISABLE TRIGGER USER;"
                : """
                DROP TRIGGER IF EXISTS audit_events_no_update; DROP TRIGGER IF EXISTS audit_events_no_delete;
                DROP TRIGGER IF EXISTS audit_redactions_no_delete; DROP TRIGGER IF EXISTS audit_checkpoints_no_delete;
                DROP TRIGGER IF EXISTS audit_checkpoints_no_update;
                """
            try await database.write { connection in try await connection.executeScript(unlock + "\n" + sql) }
        }

        /// Closes every pool this world opened and drops its database, before the next cell
        /// opens its own: 70 cells closing in the background held enough of the shared test
        /// server's connections that other suites waited past their 3 s for one.
        func close() async {
            // The store in use: the test's, or the one `restart` opened (which closed the test's).
            await database.close()
            await test.postgres?.drop()
            test.directory.remove()
        }
    }

    /// Every cell: the untouched database verifies, the tampered one does not, and the problem
    /// names what was changed.
    @Test("each tampering, in each state of a database's life, is named by verify; the untouched database passes", arguments: TestStore.all, State.allCases)
    func matrix(store: TestStore, state: State) async throws {
        for tampering in Tampering.allCases where !tampering.needsAnArchive || state == .afterArchive {
            let world = try await World(store, state)
            do {
                let untouched = try await world.verify()
                #expect(untouched == nil, "\(state), untouched: \(String(describing: untouched))")
                try await apply(tampering, to: world)
                let found = try await world.verify()
                let problem = try #require(found, "\(store) \(state): \(tampering) went unnoticed")
                #expect(Self.names(problem, tampering, world), "\(store) \(state) \(tampering): \(problem)")
            } catch {
                await world.close()
                throw error
            }
            await world.close()
        }
    }

    /// An archive written before migration 0019 signed a version 1 statement (no sessions
    /// line). Such an archive still verifies, and verify says its sessions are not signed; a
    /// version 1 statement cannot be made by dropping a version 2 one's sessions (the bytes
    /// signed differ).
    @Test("an archive whose statement is version 1 (before 0019) still verifies and is said to leave its sessions unsigned; a v2 statement stripped to v1 fails", arguments: TestStore.all)
    func version1Archives(store: TestStore) async throws {
        let world = try await World(store, .afterArchive)
        defer { Task { await world.close() } }
        let path = try #require(world.archives.first)
        let file = try Connection(path: path, mode: .readWrite)
        let fileRow = try #require(try file.query("SELECT \(raw: AuditArchiveStatement.columns) FROM archive").first)
        let version2 = try AuditArchiveStatement.statement(fileRow)
        #expect(version2.version == 2 && version2.sessions != nil)

        // Stripped: the same signature over different bytes.
        func record(_ statement: AuditArchiveStatement) async throws {
            _ = try file.execute("UPDATE archive SET sessions = \(statement.sessions), sessions_digest = \(statement.sessionsDigest), signature = \(statement.signature), hash = \(statement.hash)")
            let unlock = world.test.postgres != nil ? "ALTER TABLE audit_archives DISABLE TRIGGER USER;" : "DROP TRIGGER IF EXISTS audit_archives_no_update;"
            try await world.database.write { connection in
                try await connection.executeScript(unlock)
                _ = try await connection.execute(
                    "UPDATE audit_archives SET sessions = \(statement.sessions), sessions_digest = \(statement.sessionsDigest), signature = \(statement.signature), hash = \(statement.hash) WHERE number = 1")
            }
        }
        var stripped = version2
        stripped.sessions = nil
        stripped.sessionsDigest = nil
        try await record(stripped)
        let problem = try #require(try await world.verify(), "a v2 statement stripped of its sessions line verified")
        #expect(problem.archive == 1, "\(problem)")

        // Signed as version 1 by the key (what a 0.4 photos-admin wrote): verifies, and is named.
        var version1 = stripped
        try version1.sign(with: try AuditSigningKey.loadOrCreate(path: world.keyPath))
        #expect(version1.version == 1 && String(decoding: version1.statement, as: UTF8.self).hasPrefix("photosd audit archive v1\n"))
        #expect(!String(decoding: version1.statement, as: UTF8.self).contains("sessions"))
        try await record(version1)
        let verification = try await world.audit.verify(
            publicKey: try world.audit.trustedKey(explicit: nil), archives: world.archives, openArchive: AuditArchiveFiles.openForReading,
            openScratch: AuditArchiveFiles.openScratch)
        #expect(verification.problem == nil, "\(String(describing: verification.problem))")
        #expect(verification.archivesWithUnsignedSessions == [1])
    }

    /// Whether `problem` is about what `tampering` changed.
    static func names(_ problem: AuditChains.Problem, _ tampering: Tampering, _ world: World) -> Bool {
        switch tampering {
        case .alterRow, .insertRow, .listAsRedacted, .deleteNewestRows:
            return problem.sessionID == world.target
        case .deleteTrail:
            return problem.sessionID == world.other
        case .forgeKeyHistory:
            // The key the checkpoints lead to is not the signing key; or, with an archive, its
            // statement does not verify under the forged first key.
            return problem.reason.contains("signing key") || problem.checkpoint != nil || problem.archive != nil
        case .alterArchivedRow:
            return problem.archive != nil || problem.reason.contains("archive")
        case .alterArchivedSession:
            return problem.archive != nil && problem.reason.contains("sessions")
        }
    }

    func apply(_ tampering: Tampering, to world: World) async throws {
        let target = world.target
        switch tampering {
        case .alterRow:
            try await world.behindTriggers("UPDATE audit_events SET detail = '{\"photoId\":2}' WHERE session_id = '\(target)' AND seq = 3")
        case .deleteNewestRows:
            try await world.behindTriggers("DELETE FROM audit_events WHERE session_id = '\(target)' AND seq > 3")
        case .deleteTrail:
            try await world.behindTriggers("DELETE FROM audit_events WHERE session_id = '\(world.other)'")
        case .insertRow:
            // A forged step at seq 3, the trail's later rows moved up by one, every hash from
            // there recomputed with the algorithm (not the key).
            try await world.database.write { connection in
                let rows = try await connection.query(
                    "SELECT id, session_id, seq, at, actor, user_id, username, coordinator, step, screen, detail, prev_hash, hash FROM audit_events WHERE session_id = \(target) ORDER BY seq")
                var records = try rows.map { try AuditVerifier.fields($0) }
                let forged = AuditRecord(
                    sessionID: target, seq: 3, at: records[2].at, actor: "client", userID: nil, username: nil, coordinator: "app",
                    step: "screen.push", screen: "photo", detail: "{\"photoId\":1}")
                records.insert(forged, at: 2)
                for index in records.indices { records[index].seq = index + 1 }
                let chained = AuditTrails.chain(records, after: AuditChains.genesisHash)
                try await connection.executeScript(world.test.postgres != nil
                    ? "ALTER TABLE audit_events DISABLE TRIGGER USER;"
                    : "DROP TRIGGER IF EXISTS audit_events_no_delete;")
                try await connection.execute("DELETE FROM audit_events WHERE session_id = \(target)")
                try await AuditChains.insert(chained: chained, on: connection)
            }
        case .listAsRedacted:
            // An erased user (a real erasure), a row rewritten and listed under them.
            _ = try await world.auth.createUser(username: "ghost", password: "password123", actor: testOperator)
            _ = try await world.sessions.erase(username: "ghost", actor: testOperator)
            let ghost = try await world.database.read {
                try await $0.queryOne("SELECT max(id) FROM users WHERE erased_at IS NOT NULL")?.int64(0) ?? 0
            }
            try await world.behindTriggers("""
                UPDATE audit_events SET actor = 'operator:mallory' WHERE session_id = '\(target)' AND seq = 2;
                INSERT INTO audit_redactions (event_id, user_id, at)
                SELECT id, \(ghost), at FROM audit_events WHERE session_id = '\(target)' AND seq = 2;
                """)
        case .forgeKeyHistory:
            // A history whose first key is someone else's, and the checkpoints it would
            // contradict deleted.
            let stranger = try AuditSigningKey.loadOrCreate(path: world.test.directory.file("stranger.key"))
            try Data((stranger.publicKeyHex + "\n").utf8).write(to: URL(fileURLWithPath: world.keyPath + ".history"))
            try await world.behindTriggers("DELETE FROM audit_checkpoints")
        case .alterArchivedRow:
            let path = try #require(world.archives.first)
            let file = try Connection(path: path, mode: .readWrite)
            try file.executeScript("""
                DROP TRIGGER IF EXISTS audit_events_no_update;
                UPDATE audit_events SET detail = '{"photoId":2}' WHERE id = (SELECT min(id) FROM audit_events WHERE step = 'screen.push');
                """)
        case .alterArchivedSession:
            // Who a session belonged to and when it ended, changed in the file: its rows untouched.
            let path = try #require(world.archives.first)
            let file = try Connection(path: path, mode: .readWrite)
            try file.executeScript("UPDATE sessions SET user_id = 1, ended_at = '2099-01-01T00:00:00.000Z' WHERE id = (SELECT min(id) FROM sessions)")
        }
    }
}
