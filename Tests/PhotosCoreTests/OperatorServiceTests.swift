import DatabaseAccess
import Foundation
import PhotosCore
import PhotosModel
import PhotosTestSupport
import Testing

/// The console's operators on both stores: bcrypt hashes, unique names, roles, removal ending
/// their console sessions.
@Suite("Operators")
struct OperatorServiceTests {
    @Test("add, list and remove; a taken name is a conflict; removing ends the operator's console sessions", arguments: TestStore.all)
    func lifecycle(store: TestStore) async throws {
        let test = try await TestDatabase.make(store)
        defer { test.close() }
        let operators = OperatorService(database: test.database, bcryptCost: 4)
        let viewer = try await operators.add(name: "vera", role: .viewer, password: "watching closely", actor: testOperator)
        let actor = try await operators.add(name: "otto", role: .operator, password: "acting carefully", actor: testOperator)
        #expect(try await operators.list().map(\.name) == ["otto", "vera"])
        #expect(try await operators.list().map(\.role) == [.operator, .viewer])
        do {
            _ = try await operators.add(name: "vera", role: .operator, password: "another password", actor: testOperator)
            Issue.record("a taken name was added")
        } catch let error as PhotosError {
            #expect(error.code == .conflict)
        }
        // The hash is bcrypt's, never the password.
        let stored = try await test.database.read { try await $0.queryOne("SELECT password_hash FROM operators WHERE name = 'vera'")?.string(0) }
        #expect(stored?.hasPrefix("$2") == true && stored?.contains("watching") == false)
        // Two console sessions of otto's, one of vera's: removing otto ends his two only.
        try await test.database.write { connection in
            for (hash, id) in [("a", actor.id), ("b", actor.id), ("c", viewer.id)] {
                try await connection.execute(
                    "INSERT INTO console_sessions (id_hash, operator_id, csrf_token, created_at, last_seen) VALUES (\(hash), \(id), 'csrf', 'now', 'now')")
            }
        }
        let (removed, ended) = try await operators.remove(name: "otto", actor: testOperator)
        #expect(removed.name == "otto" && ended == 2)
        #expect(try await test.database.read { try await $0.queryOne("SELECT count(*) FROM console_sessions")?.int(0) } == 1)
        do {
            _ = try await operators.remove(name: "otto", actor: testOperator)
            Issue.record("a missing operator was removed")
        } catch let error as PhotosError {
            #expect(error.code == .notFound)
        }
        await #expect(throws: PhotosError.self) { try await operators.add(name: "bad name!", role: .viewer, password: "long enough", actor: testOperator) }
    }
}

/// The console's sign-ins on both stores: the cookie stored only as a hash, idle expiry that
/// each request moves on, sign-out, and removal of the operator ending them.
@Suite("Console sessions")
struct ConsoleSessionsTests {
    @Test("sign in, find, expire when idle, sign out; wrong credentials start nothing", arguments: TestStore.all)
    func lifecycle(store: TestStore) async throws {
        let test = try await TestDatabase.make(store)
        defer { test.close() }
        let clock = TestClock()
        let operators = OperatorService(database: test.database, bcryptCost: 4, now: clock.now)
        let sessions = ConsoleSessions(database: test.database, idleMinutes: 30, bcryptCost: 4, now: clock.now)
        _ = try await operators.add(name: "vera", role: .viewer, password: "watching closely", actor: testOperator)
        #expect(try await sessions.signIn(name: "vera", password: "not it") == nil)
        #expect(try await sessions.signIn(name: "nobody", password: "watching closely") == nil)
        let (cookie, session) = try #require(try await sessions.signIn(name: "vera", password: "watching closely"))
        #expect(session.operator.role == .viewer && session.csrfToken.count >= 40 && cookie.count >= 40)
        // Only the hash is kept.
        let stored = try await test.database.read { try await $0.query("SELECT id_hash, csrf_token FROM console_sessions").map { try $0.string(0) } }
        #expect(stored == [SecureToken.sha256Hex(cookie)])
        // Each request within 30 minutes restarts the idle time.
        clock.advance(seconds: 25 * 60)
        #expect(try await sessions.session(cookie: cookie) == session)
        clock.advance(seconds: 25 * 60)
        #expect(try await sessions.session(cookie: cookie) == session, "50 minutes after sign-in, but 25 idle")
        clock.advance(seconds: 31 * 60)
        #expect(try await sessions.session(cookie: cookie) == nil, "idle 31 minutes")
        #expect(try await test.database.read { try await $0.queryOne("SELECT count(*) FROM console_sessions")?.int(0) } == 0, "the expired one is gone")
        #expect(try await sessions.session(cookie: "made-up") == nil)
        // Sign-out ends it; removing the operator ends theirs.
        let second = try #require(try await sessions.signIn(name: "vera", password: "watching closely"))
        try await sessions.signOut(cookie: second.cookie)
        #expect(try await sessions.session(cookie: second.cookie) == nil)
        let third = try #require(try await sessions.signIn(name: "vera", password: "watching closely"))
        _ = try await operators.remove(name: "vera", actor: testOperator)
        #expect(try await sessions.session(cookie: third.cookie) == nil)
    }
}
