import AuditTrail
import DatabaseAccess
import Foundation
import Navigation
import PhotosCore
import PhotosModel
import PhotosTestSupport
import Sessions
import Testing

/// `users erase` on both stores: what goes, what stays, and that every proof still holds.
/// One test at a time, as the suites that start photosd are: together they loaded the machine
/// enough that the PostgreSQL outage test's timing bound failed.
@Suite("Erasure", .serialized)
struct ErasureTests {
    /// A name no other part of the database contains, so that a byte search means something.
    static let name = "zq7erasable"

    /// A user with a purchase, a live signed-in session, a refused sign-in and an idempotency
    /// answer; and a second user who is kept.
    static func populated(_ store: TestStore) async throws -> (TestDatabase, AuthService, SessionCoordinator, live: String, kept: String) {
        let test = try await TestDatabase.make(store)
        let auth = test.auth()
        let sessions = try test.sessions(auth: auth)
        _ = try await CatalogService(database: test.database).add(NewPhoto(title: "Sunset", url: "https://example.com/1.jpg", priceCents: 250), actor: .system)
        _ = try await auth.createUser(username: name, password: "password123", actor: .operator("ops"))
        _ = try await auth.createUser(username: "keeper", password: "password123", actor: .operator("ops"))
        // A session that buys photo 1, keyed (its answer quotes the name), and stays signed in.
        let live = try await sessions.createSession().session.id
        _ = try await sessions.apply(ClientAction(.selectPhoto, photoId: 1), to: live)
        _ = try await sessions.apply(ClientAction(.buy), to: live)
        _ = try await sessions.apply(ClientAction(.submit, username: name, password: "wrong-password"), to: live)
        _ = try await sessions.apply(ClientAction(.submit, username: name, password: "password123"), to: live, idempotencyKey: "k1")
        let bought = try await sessions.apply(ClientAction(.buy), to: live)
        #expect(bought.outcome == .purchased)
        // The kept user, signed in elsewhere.
        let kept = try await sessions.createSession().session.id
        _ = try await sessions.apply(ClientAction(.signIn), to: kept)
        _ = try await sessions.apply(ClientAction(.submit, username: "keeper", password: "password123"), to: kept)
        return (test, auth, sessions, live, kept)
    }

    @Test("erase: the name goes from every row and file, the sessions are signed out, purchases stay, verify passes and counts", arguments: TestStore.all)
    func erase(store: TestStore) async throws {
        let (test, auth, sessions, live, kept) = try await Self.populated(store)
        defer { test.close() }
        let user = try #require(try await auth.user(named: Self.name))

        let report = try await sessions.erase(username: Self.name, actor: .operator("ops"))
        #expect(report.userId == user.id)
        #expect(report.sessionsSignedOut == 1)
        #expect(report.tokensDeleted == 1)
        #expect(report.answersDeleted >= 1)
        #expect(report.auditRowsRedacted == 0)  // every row was written with commitments

        // The live session is signed out (on the operator's authority), the other untouched.
        let signedOut = try await sessions.session(id: live)
        #expect(signedOut.user == nil)
        let events = try await sessions.events(sessionID: live, after: 0, limit: 1_000)
        #expect(events.last?.step == "auth.signOut" && events.last?.actor == "operator:ops" && events.last?.detail.contains("userErased") == true)
        #expect(events.allSatisfy { $0.username == nil }, "a row still names the erased user")
        #expect(try await sessions.session(id: kept).user?.username == "keeper")
        // No one can sign in as them; purchases still point at their id.
        #expect(try await auth.user(named: Self.name) == nil)
        let purchases = try await test.database.read { try await $0.queryOne("SELECT count(*) FROM purchases WHERE user_id = \(user.id)")?.int(0) }
        #expect(purchases == 1)
        // The step: which user, by whom, no name.
        let operatorRows = try await test.database.read { try await AuditChains.rows(sessionID: AuditTrails.operatorSession, limit: 100, on: $0) }
        let erased = try #require(operatorRows.last)
        #expect(erased.step == "user.erased" && erased.actor == "operator:ops" && erased.username == nil)
        #expect(erased.detail.contains("\"userId\":\(user.id)") && !erased.detail.contains(Self.name))

        let verification = try await test.database.read { try await AuditChains.verify(on: $0) }
        #expect(verification.isIntact, "\(String(describing: verification.problem))")
        #expect(verification.redactedRows > 0)

        // The name is taken again by someone new, who shares nothing with the erased one.
        let newcomer = try await auth.createUser(username: Self.name, password: "password456", actor: .operator("ops"))
        #expect(newcomer.id != user.id)
        #expect(try await test.database.read { try await $0.queryOne("SELECT count(*) FROM purchases WHERE user_id = \(newcomer.id)")?.int(0) } == 0)
        #expect(try await sessions.events(sessionID: live, after: 0, limit: 1_000).allSatisfy { $0.username == nil })
        #expect(try await test.database.read { try await AuditChains.verify(on: $0) }.isIntact)

        // Nowhere in the stored bytes but where the newcomer put it: erase them too and search.
        _ = try await sessions.erase(username: Self.name, actor: .operator("ops"))
        await test.database.close()
        let bytes = try await test.storedBytes()
        #expect(bytes.range(of: Data(Self.name.utf8)) == nil, "the erased name's bytes are still stored")
        #expect(bytes.range(of: Data("keeper".utf8)) != nil, "the byte search finds a name that was not erased")
    }

    @Test("rows from before name commitments: erasure redacts them, verify proves their place and counts them; a redaction without an erasure fails", arguments: TestStore.all)
    func rowsBeforeCommitments(store: TestStore) async throws {
        let test = try await TestDatabase.make(store)
        defer { test.close() }
        let auth = test.auth()
        let sessions = try test.sessions(auth: auth)
        let user = try await auth.createUser(username: Self.name, password: "password123", actor: .operator("ops"))
        let other = try await auth.createUser(username: "keeper", password: "password123", actor: .operator("ops"))
        // Rows as photosd wrote them before 0011: the clear name in `username`, and in a refused
        // sign-in's detail; hashed over it, in the chain like any other.
        let at = ISO8601Timestamp.now()
        _ = try await test.database.write { connection in
            let head = try await AuditChains.head(of: AuditTrails.apiSession, on: connection)
            let records = [
                AuditRecord(sessionID: AuditTrails.apiSession, seq: head.seq + 1, at: at, actor: "client", userID: user.id, username: Self.name, coordinator: nil, step: "auth.signIn", screen: nil, detail: "{}"),
                AuditRecord(sessionID: AuditTrails.apiSession, seq: head.seq + 2, at: at, actor: "client", userID: nil, username: nil, coordinator: nil, step: "auth.signInFailed", screen: nil, detail: #"{"attemptedUsername":"\#(Self.name)"}"#),
                AuditRecord(sessionID: AuditTrails.apiSession, seq: head.seq + 3, at: at, actor: "client", userID: other.id, username: "keeper", coordinator: nil, step: "auth.signIn", screen: nil, detail: "{}"),
            ]
            _ = try await AuditChains.insert(records, after: head.hash, on: connection)
        }
        try await Self.fixRedactionBoundAsMigration0017Would(test)
        #expect(try await test.database.read { try await AuditChains.verify(on: $0) }.isIntact)
        // The trigger still refuses any other change to a row.
        await #expect(throws: (any Error).self) {
            try await test.database.write { try await $0.execute("UPDATE audit_events SET username = NULL WHERE username = 'keeper'") }
        }

        let report = try await sessions.erase(username: Self.name, actor: .operator("ops"))
        #expect(report.auditRowsRedacted == 2)
        let verification = try await test.database.read { try await AuditChains.verify(on: $0) }
        #expect(verification.isIntact, "\(String(describing: verification.problem))")
        #expect(verification.redactedBeforeCommitments == 2)
        let trail = try await test.database.read { try await AuditChains.rows(sessionID: AuditTrails.apiSession, limit: 100, on: $0) }
        #expect(!trail.contains { $0.username == Self.name || $0.detail.contains(Self.name) })
        #expect(trail.contains { $0.username == "keeper" })

        // A name removed without an erasure is caught: list a kept user's row as redacted.
        _ = try await test.database.write { connection in
            try await connection.execute(
                "INSERT INTO audit_redactions (event_id, user_id, at) SELECT id, \(other.id), \(at) FROM audit_events WHERE username = 'keeper'")
        }
        let forged = try await test.database.read { try await AuditChains.verify(on: $0) }
        #expect(forged.problem?.reason.contains("not erased") == true, "\(String(describing: forged.problem))")
    }

    /// Rows with a clear name written into a database made at the newest schema stand for rows
    /// from before 0011: the bound migration 0017 fixes is set to what it would have found then
    /// (its own rule: the newest row that holds a name, or is listed).
    static func fixRedactionBoundAsMigration0017Would(_ test: TestDatabase) async throws {
        let unfix: SQL = test.postgres != nil
            ? "DROP TRIGGER audit_redaction_bound_no_update ON audit_redaction_bound"
            : "DROP TRIGGER audit_redaction_bound_no_update"
        _ = try await test.database.write { connection in
            try await connection.execute(unfix)
            return try await connection.execute(
                """
                UPDATE audit_redaction_bound SET until_id = (SELECT coalesce(max(id), 0) FROM audit_events
                WHERE username IS NOT NULL OR (step = 'auth.signInFailed' AND json_extract(detail, '$.attemptedUsername') IS NOT NULL))
                """)
        }
    }

    /// A database with two users (the one to erase, and `keeper`), and one row from before 0011
    /// naming `keeper` (the bound set as 0017 would have found it).
    static func withLegacyRowOfKeeper(_ store: TestStore) async throws -> (TestDatabase, SessionCoordinator, erased: User, keeper: User, at: String) {
        let test = try await TestDatabase.make(store)
        let auth = test.auth()
        let sessions = try test.sessions(auth: auth)
        let erased = try await auth.createUser(username: Self.name, password: "password123", actor: .operator("ops"))
        let keeper = try await auth.createUser(username: "keeper", password: "password123", actor: .operator("ops"))
        let at = ISO8601Timestamp.now()
        _ = try await test.database.write { connection in
            let head = try await AuditChains.head(of: AuditTrails.apiSession, on: connection)
            _ = try await AuditChains.insert([
                AuditRecord(sessionID: AuditTrails.apiSession, seq: head.seq + 1, at: at, actor: "client", userID: keeper.id, username: "keeper", coordinator: nil, step: "auth.signIn", screen: nil, detail: "{}"),
            ], after: head.hash, on: connection)
        }
        try await fixRedactionBoundAsMigration0017Would(test)
        return (test, sessions, erased, keeper, at)
    }

    /// What lets a test change audit rows and delete redaction listings, on `store`.
    static func unlockRedactions(_ store: TestStore) -> String {
        store == .postgres
            ? "ALTER TABLE audit_events DISABLE TRIGGER USER; ALTER TABLE audit_redactions DISABLE TRIGGER USER"
            : "DROP TRIGGER audit_events_no_update; DROP TRIGGER audit_redactions_no_delete"
    }

    @Test("a listing that does not hold: a row written since 0011, or one naming someone else, hidden behind an erased user's redaction, is named by verify", arguments: TestStore.all)
    func forgedRedactions(store: TestStore) async throws {
        let (test, sessions, erased, _, at) = try await Self.withLegacyRowOfKeeper(store)
        defer { test.close() }
        // A live session's rows, written since 0011.
        _ = try await CatalogService(database: test.database).add(NewPhoto(title: "Sunset", url: "https://example.com/1.jpg", priceCents: 250), actor: .system)
        let live = try await sessions.createSession().session.id
        _ = try await sessions.apply(ClientAction(.selectPhoto, photoId: 1), to: live)
        _ = try await sessions.erase(username: Self.name, actor: .operator("ops"))
        #expect(try await test.database.read { try await AuditChains.verify(on: $0) }.isIntact)
        let unlock = Self.unlockRedactions(store)

        // 1. A live row rewritten and listed under the erased user.
        _ = try await test.database.write { connection in
            try await connection.executeScript(unlock)
            try await connection.execute("UPDATE audit_events SET actor = 'operator:mallory', detail = '{\"photoId\":2}' WHERE session_id = \(live) AND seq = 2")
            return try await connection.execute(
                "INSERT INTO audit_redactions (event_id, user_id, at) SELECT id, \(erased.id), \(at) FROM audit_events WHERE session_id = \(live) AND seq = 2")
        }
        let rewritten = try await test.database.read { try await AuditChains.verify(on: $0) }
        #expect(rewritten.problem?.sessionID == live && rewritten.problem?.reason.contains("no longer held names") == true, "\(String(describing: rewritten.problem))")
        _ = try await test.database.write { connection in
            try await connection.execute("DELETE FROM audit_redactions WHERE user_id = \(erased.id) AND event_id IN (SELECT id FROM audit_events WHERE session_id = \(live))")
        }
        #expect(try await test.database.read { try await AuditChains.verify(on: $0) }.problem?.reason.contains("altered") == true)
    }

    @Test("a row from before 0011 naming a kept user, rewritten and listed under an erased user or a made-up erased one, is named", arguments: TestStore.all)
    func forgedRedactionOfAnotherUsersRow(store: TestStore) async throws {
        let (test, sessions, erased, other, at) = try await Self.withLegacyRowOfKeeper(store)
        defer { test.close() }
        _ = try await sessions.erase(username: Self.name, actor: .operator("ops"))
        let unlock = Self.unlockRedactions(store)
        _ = try await test.database.write { connection in
            try await connection.executeScript(unlock)
            try await connection.execute("UPDATE audit_events SET detail = '{\"forged\":true}' WHERE username = 'keeper'")
            // A made-up erased user, too.
            try await connection.execute(
                "INSERT INTO users (id, username, password_hash, created_at, erased_at) VALUES (9999, 'erased:9999', '', \(at), \(at))")
            return 0
        }
        for listedUnder in [erased.id, Int64(9999)] {
            _ = try await test.database.write { connection in
                try await connection.execute("DELETE FROM audit_redactions WHERE event_id IN (SELECT id FROM audit_events WHERE username = 'keeper')")
                return try await connection.execute(
                    "INSERT INTO audit_redactions (event_id, user_id, at) SELECT id, \(listedUnder), \(at) FROM audit_events WHERE username = 'keeper'")
            }
            let verification = try await test.database.read { try await AuditChains.verify(on: $0) }
            #expect(verification.problem?.reason.contains("names user \(other.id)") == true, "\(listedUnder): \(String(describing: verification.problem))")
        }
    }

    @Test("erasure racing sign-ins (token API and a session's submit) leaves nothing that works and no name anywhere", arguments: TestStore.all)
    func erasureRacingSignIns(store: TestStore) async throws {
        let test = try await TestDatabase.make(store)
        defer { test.close() }
        // bcrypt at cost 10 (tens of ms): the erasure lands while passwords are being checked.
        let auth = AuthService(
            database: test.database, bcryptCost: 10, signInMaxAttempts: 1_000, signInMaxAttemptsPerAddress: 1_000, signInMaxAttemptsPerUsername: 1_000)
        let sessions = try test.sessions(auth: auth)
        _ = try await CatalogService(database: test.database).add(NewPhoto(title: "Sunset", url: "https://example.com/1.jpg", priceCents: 250), actor: .system)
        let user = try await auth.createUser(username: Self.name, password: "password123", actor: .operator("ops"))
        var waiting: [String] = []
        for _ in 0..<6 {
            let id = try await sessions.createSession().session.id
            _ = try await sessions.apply(ClientAction(.signIn), to: id)
            waiting.append(id)
        }
        let signIns = Task {
            await withTaskGroup(of: Void.self) { group in
                for round in 0..<4 {
                    for _ in 0..<3 {
                        group.addTask { _ = try? await auth.signIn(username: Self.name, password: "password123", actor: .client) }
                    }
                    for id in waiting where round < 2 {
                        group.addTask { _ = try? await sessions.apply(ClientAction(.submit, username: Self.name, password: "password123"), to: id) }
                    }
                    await group.waitForAll()
                }
            }
        }
        try await Task.sleep(for: .milliseconds(150))
        var erasedOnce = false
        for _ in 0..<20 where !erasedOnce {
            do {
                _ = try await sessions.erase(username: Self.name, actor: .operator("ops"))
                erasedOnce = true
            } catch let error as PhotosError where error.code == .conflict {
                continue
            }
        }
        #expect(erasedOnce)
        await signIns.value
        let left = try await test.database.read { connection in
            (
                tokens: try await connection.queryOne("SELECT count(*) FROM tokens WHERE user_id = \(user.id)")?.int(0) ?? -1,
                signedIn: try await connection.queryOne("SELECT count(*) FROM sessions WHERE user_id = \(user.id)")?.int(0) ?? -1,
                named: try await connection.queryOne("SELECT count(*) FROM sessions WHERE state LIKE \("%\(Self.name)%")")?.int(0) ?? -1
            )
        }
        #expect(left.tokens == 0, "tokens survived the erasure")
        #expect(left.signedIn == 0, "sessions stayed signed in as the erased user")
        #expect(left.named == 0, "a session's state holds the erased name")
        #expect(try await test.database.read { try await AuditChains.verify(on: $0) }.isIntact)
    }

    @Test("a renamed user is caught: the name no longer opens the commitment their user.created step holds", arguments: TestStore.all)
    func renamedUser(store: TestStore) async throws {
        let test = try await TestDatabase.make(store)
        defer { test.close() }
        _ = try await test.auth().createUser(username: "keeper", password: "password123", actor: .operator("ops"))
        #expect(try await test.database.read { try await AuditChains.verify(on: $0) }.isIntact)
        _ = try await test.database.write { try await $0.execute("UPDATE users SET username = 'mallory' WHERE username = 'keeper'") }
        let verification = try await test.database.read { try await AuditChains.verify(on: $0) }
        #expect(verification.problem?.reason.contains("committed to") == true, "\(String(describing: verification.problem))")
    }

    @Test("users erase refuses what it cannot do: an unknown name, an erased one", arguments: TestStore.all)
    func refusals(store: TestStore) async throws {
        let test = try await TestDatabase.make(store)
        defer { test.close() }
        let auth = test.auth()
        let sessions = try test.sessions(auth: auth)
        await #expect(throws: PhotosError.self) { try await sessions.erase(username: "nobody", actor: .operator("ops")) }
        let user = try await auth.createUser(username: Self.name, password: "password123", actor: .operator("ops"))
        _ = try await sessions.erase(username: Self.name, actor: .operator("ops"))
        await #expect(throws: PhotosError.self) { try await sessions.erase(username: NameCommitment.erasedName(userID: user.id), actor: .operator("ops")) }
        await #expect(throws: PhotosError.self) { try await sessions.erase(username: Self.name, actor: .operator("ops")) }
    }
}
