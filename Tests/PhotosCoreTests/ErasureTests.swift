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
        let purchases = try await test.database.read { try await $0.queryOne("SELECT count(*) FROM purchases WHERE user_id = ?", user.id)?.int(0) }
        #expect(purchases == 1)
        // The step: which user, by whom, no name.
        let operatorRows = try await test.database.read { try await AuditLog.rows(sessionID: AuditTrails.operatorSession, limit: 100, on: $0) }
        let erased = try #require(operatorRows.last)
        #expect(erased.step == "user.erased" && erased.actor == "operator:ops" && erased.username == nil)
        #expect(erased.detail.contains("\"userId\":\(user.id)") && !erased.detail.contains(Self.name))

        let verification = try await test.database.read { try await AuditLog.verify(on: $0) }
        #expect(verification.isIntact, "\(String(describing: verification.problem))")
        #expect(verification.redactedRows > 0)

        // The name is taken again by someone new, who shares nothing with the erased one.
        let newcomer = try await auth.createUser(username: Self.name, password: "password456", actor: .operator("ops"))
        #expect(newcomer.id != user.id)
        #expect(try await test.database.read { try await $0.queryOne("SELECT count(*) FROM purchases WHERE user_id = ?", newcomer.id)?.int(0) } == 0)
        #expect(try await sessions.events(sessionID: live, after: 0, limit: 1_000).allSatisfy { $0.username == nil })
        #expect(try await test.database.read { try await AuditLog.verify(on: $0) }.isIntact)

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
            let head = try await AuditLog.head(of: AuditTrails.apiSession, on: connection)
            let records = [
                AuditRecord(sessionID: AuditTrails.apiSession, seq: head.seq + 1, at: at, actor: "client", userID: user.id, username: Self.name, coordinator: nil, step: "auth.signIn", screen: nil, detail: "{}"),
                AuditRecord(sessionID: AuditTrails.apiSession, seq: head.seq + 2, at: at, actor: "client", userID: nil, username: nil, coordinator: nil, step: "auth.signInFailed", screen: nil, detail: #"{"attemptedUsername":"\#(Self.name)"}"#),
                AuditRecord(sessionID: AuditTrails.apiSession, seq: head.seq + 3, at: at, actor: "client", userID: other.id, username: "keeper", coordinator: nil, step: "auth.signIn", screen: nil, detail: "{}"),
            ]
            _ = try await AuditLog.insert(records, after: head.hash, on: connection)
        }
        #expect(try await test.database.read { try await AuditLog.verify(on: $0) }.isIntact)
        // The trigger still refuses any other change to a row.
        await #expect(throws: (any Error).self) {
            try await test.database.write { try await $0.execute("UPDATE audit_events SET username = NULL WHERE username = 'keeper'") }
        }

        let report = try await sessions.erase(username: Self.name, actor: .operator("ops"))
        #expect(report.auditRowsRedacted == 2)
        let verification = try await test.database.read { try await AuditLog.verify(on: $0) }
        #expect(verification.isIntact, "\(String(describing: verification.problem))")
        #expect(verification.redactedBeforeCommitments == 2)
        let trail = try await test.database.read { try await AuditLog.rows(sessionID: AuditTrails.apiSession, limit: 100, on: $0) }
        #expect(!trail.contains { $0.username == Self.name || $0.detail.contains(Self.name) })
        #expect(trail.contains { $0.username == "keeper" })

        // A name removed without an erasure is caught: list a kept user's row as redacted.
        _ = try await test.database.write { connection in
            try await connection.execute(
                "INSERT INTO audit_redactions (event_id, user_id, at) SELECT id, ?, ? FROM audit_events WHERE username = 'keeper'", other.id, at)
        }
        let forged = try await test.database.read { try await AuditLog.verify(on: $0) }
        #expect(forged.problem?.reason.contains("not erased") == true, "\(String(describing: forged.problem))")
    }

    @Test("a renamed user is caught: the name no longer opens the commitment their user.created step holds", arguments: TestStore.all)
    func renamedUser(store: TestStore) async throws {
        let test = try await TestDatabase.make(store)
        defer { test.close() }
        _ = try await test.auth().createUser(username: "keeper", password: "password123", actor: .operator("ops"))
        #expect(try await test.database.read { try await AuditLog.verify(on: $0) }.isIntact)
        _ = try await test.database.write { try await $0.execute("UPDATE users SET username = 'mallory' WHERE username = 'keeper'") }
        let verification = try await test.database.read { try await AuditLog.verify(on: $0) }
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
