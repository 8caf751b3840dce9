import DatabaseAccess
import Foundation
@testable import PhotosCore
import PhotosTestSupport
import SQLiteStore
import Synchronization
import Testing
import PhotosModel

@Suite("AuthService")
struct AuthServiceTests {
    @Test("sign-in with the right password issues a token that validates")
    func signIn() async throws {
        let test = try TestDatabase()
        defer { test.close() }
        let auth = test.auth()
        let alice = try await auth.createUser(username: "alice", password: "correct horse", actor: testOperator)
        let (user, issued) = try await auth.signIn(username: "alice", password: "correct horse", actor: .client)
        #expect(user == alice)
        #expect(issued.token.count >= 43)  // 256 bits, base64url
        #expect(try await auth.validate(token: issued.token) == alice)
    }

    @Test("a wrong password and an unknown user both give invalid_credentials, and are audited")
    func wrongPasswordAndUnknownUser() async throws {
        let test = try TestDatabase()
        defer { test.close() }
        let auth = test.auth()
        _ = try await auth.createUser(username: "alice", password: "correct horse", actor: testOperator)
        await #expect(throws: PhotosError.invalidCredentials) {
            try await auth.signIn(username: "alice", password: "wrong horse", actor: .client)
        }
        await #expect(throws: PhotosError.invalidCredentials) {
            try await auth.signIn(username: "mallory", password: "correct horse", actor: .client)
        }
        let steps = try await test.database.read { connection in
            try await connection.query("SELECT step, detail FROM audit_trail WHERE session_id = 'api' ORDER BY seq").map { "\(try $0.string(0)):\(try $0.string(1))" }
        }
        // An unknown name is not recorded: it may be a password typed into the wrong field.
        #expect(steps == [#"auth.signInFailed:{"attemptedUserId":1}"#, #"auth.signInFailed:{"unknownUser":true}"#])
    }

    @Test("the decoy hash is computed only when a sign-in names an unknown user, once")
    func lazyDecoy() async throws {
        let test = try TestDatabase()
        defer { test.close() }
        let cost = 5  // no other test uses it: the decoys are per process and per cost
        let auth = AuthService(database: test.database, bcryptCost: cost)
        _ = try await auth.createUser(username: "alice", password: "correct horse", actor: testOperator)
        _ = try await auth.listUsers()
        _ = try await auth.authenticate(username: "alice", password: "correct horse")
        #expect(!DecoyHash.isComputed(cost: cost), "building the service, adding and listing users, a right password: no decoy")
        await #expect(throws: PhotosError.invalidCredentials) { try await auth.authenticate(username: "nobody", password: "whatever1") }
        #expect(DecoyHash.isComputed(cost: cost))
        let hash = DecoyHash.hash(cost: cost)
        await #expect(throws: PhotosError.invalidCredentials) { try await auth.authenticate(username: "nobody2", password: "whatever1") }
        #expect(DecoyHash.hash(cost: cost) == hash)
    }

    @Test("after auth.bcryptCost changes, the decoy has the stored hashes' cost, not the configured one")
    func decoyAtStoredCost() async throws {
        let test = try TestDatabase()
        defer { test.close() }
        // Costs no other test uses: the decoys are per process and per cost.
        let stored = 6, configured = 9
        let before = AuthService(database: test.database, bcryptCost: stored)
        for name in ["alice", "bob", "carol"] { _ = try await before.createUser(username: name, password: "correct horse", actor: testOperator) }
        let after = AuthService(database: test.database, bcryptCost: configured)
        await #expect(throws: PhotosError.invalidCredentials) { try await after.authenticate(username: "nobody", password: "whatever1") }
        #expect(DecoyHash.isComputed(cost: stored))
        #expect(!DecoyHash.isComputed(cost: configured), "the decoy followed the configuration, not the stored hashes")
        #expect(DecoyHash.cost(of: DecoyHash.hash(cost: stored)) == stored)

        // The console's operators the same way.
        let operators = OperatorService(database: test.database, bcryptCost: 7)
        _ = try await operators.add(name: "vera", role: .viewer, password: "watching closely", actor: testOperator)
        let console = ConsoleSessions(database: test.database, idleMinutes: 30, bcryptCost: 10)
        #expect(try await console.signIn(name: "nobody", password: "watching closely") == nil)
        #expect(DecoyHash.isComputed(cost: 7) && !DecoyHash.isComputed(cost: 10))
    }

    @Test("50 concurrent wrong passwords for one user: exactly signInMaxAttempts reach bcrypt")
    func limiterIsAtomic() async throws {
        let test = try TestDatabase()
        defer { test.close() }
        let auth = AuthService(database: test.database, bcryptCost: 4, signInMaxAttempts: 5, signInWindowSeconds: 300)
        _ = try await auth.createUser(username: "alice", password: "correct horse", actor: testOperator)
        let codes = await withTaskGroup(of: PhotosError.Code?.self) { group in
            for _ in 0..<50 {
                group.addTask {
                    do {
                        _ = try await auth.signIn(username: "alice", password: "wrong horse", actor: .client)
                        return nil
                    } catch let error as PhotosError {
                        return error.code
                    } catch {
                        return nil
                    }
                }
            }
            var codes: [PhotosError.Code?] = []
            for await code in group { codes.append(code) }
            return codes
        }
        #expect(codes.filter { $0 == .invalidCredentials }.count == 5)
        #expect(codes.filter { $0 == .tooManyAttempts }.count == 45)
        // The audit trail: 5 checked, and one row for the 45 refused unchecked (a refusal by the
        // limits is recorded once per limit and window, not once per request).
        let reasons = try await test.database.read { connection in
            try await connection.query("SELECT json_extract(detail, '$.reason') FROM audit_trail WHERE session_id = 'api' AND step = 'auth.signInFailed'").map { $0.optionalString(0) }
        }
        #expect(reasons.filter { $0 == nil }.count == 5)
        #expect(reasons.filter { $0 == "tooManyAttempts" }.count == 1)
        // Even the right password now waits for the window.
        await #expect(throws: PhotosError.self) { try await auth.signIn(username: "alice", password: "correct horse", actor: .client) }
    }

    @Test("an expired token is refused")
    func expiredToken() async throws {
        let test = try TestDatabase()
        defer { test.close() }
        let clock = TestClock()
        let auth = test.auth(tokenLifetimeSeconds: 60, now: clock.now)
        _ = try await auth.createUser(username: "alice", password: "correct horse", actor: testOperator)
        let (_, issued) = try await auth.signIn(username: "alice", password: "correct horse", actor: .client)
        clock.advance(seconds: 59)
        _ = try await auth.validate(token: issued.token)
        clock.advance(seconds: 2)
        await #expect(throws: PhotosError.unauthorized("token expired")) { try await auth.validate(token: issued.token) }
    }

    @Test("a revoked token is refused; sign-out by username revokes all")
    func revokedToken() async throws {
        let test = try TestDatabase()
        defer { test.close() }
        let auth = test.auth()
        _ = try await auth.createUser(username: "alice", password: "correct horse", actor: testOperator)
        let (_, first) = try await auth.signIn(username: "alice", password: "correct horse", actor: .client)
        let (_, second) = try await auth.signIn(username: "alice", password: "correct horse", actor: .client)
        _ = try await auth.signOut(token: first.token, actor: .client)
        await #expect(throws: PhotosError.unauthorized("token revoked")) { try await auth.validate(token: first.token) }
        _ = try await auth.validate(token: second.token)
        #expect(try await auth.signOut(username: "alice", actor: testOperator) == 1)
        await #expect(throws: PhotosError.unauthorized("token revoked")) { try await auth.validate(token: second.token) }
        await #expect(throws: PhotosError.unauthorized("unknown token")) { try await auth.validate(token: "not-a-token") }
    }

    @Test("duplicate and malformed usernames, short passwords are refused")
    func badUsers() async throws {
        let test = try TestDatabase()
        defer { test.close() }
        let auth = test.auth()
        _ = try await auth.createUser(username: "alice", password: "correct horse", actor: testOperator)
        await #expect(throws: PhotosError(.conflict, "user alice already exists")) {
            try await auth.createUser(username: "alice", password: "another one", actor: testOperator)
        }
        for bad in ["", "has space", "x'; DROP TABLE users; --", String(repeating: "a", count: 65), "émile"] {
            await #expect(throws: PhotosError.self) { try await auth.createUser(username: bad, password: "long enough", actor: testOperator) }
        }
        await #expect(throws: PhotosError.self) { try await auth.createUser(username: "bob", password: "short", actor: testOperator) }
        #expect(try await auth.listUsers().map(\.username) == ["alice"])
    }
}

@Suite("Offload")
struct OffloadTests {
    @Test("never runs more than its limit at once, and runs everything")
    func bounded() async {
        let offload = Offload(limit: 2)
        let running = RunningCount()
        let results = await withTaskGroup(of: Int.self) { group in
            for index in 0..<16 {
                group.addTask {
                    await offload.run {
                        running.value.withLock { $0.now += 1; $0.most = max($0.most, $0.now) }
                        usleep(5_000)
                        running.value.withLock { $0.now -= 1 }
                        return index
                    }
                }
            }
            var results: [Int] = []
            for await value in group { results.append(value) }
            return results
        }
        #expect(results.sorted() == Array(0..<16))
        #expect(running.value.withLock { $0.most } <= 2)
        #expect(running.value.withLock { $0.most } >= 1)
        #expect(Offload().limit >= 1)
    }
}

/// How many jobs run now, and the most at once.
private final class RunningCount: Sendable {
    let value = Mutex((now: 0, most: 0))
}
