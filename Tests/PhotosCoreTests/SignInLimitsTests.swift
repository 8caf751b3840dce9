import DatabaseAccess
import Foundation
import PhotosCore
import PhotosModel
import PhotosTestSupport
import SQLiteStore
import Testing

/// The sign-in limits (per (username, address), per address, per username with trusted
/// addresses) on both stores: in memory on SQLite, in the database on PostgreSQL.
@Suite("Sign-in limits")
struct SignInLimitsTests {
    static let password = "correct horse"

    /// A database with users alice and `Alice`, and an auth service with small limits on a test clock.
    static func make(
        _ store: TestStore, perPair: Int = 3, perAddress: Int = 10, perUsername: Int = 5
    ) async throws -> (TestDatabase, AuthService, TestClock) {
        let test = try await TestDatabase.make(store)
        let clock = TestClock()
        let auth = AuthService(
            database: test.database, bcryptCost: 4, signInMaxAttempts: perPair, signInWindowSeconds: 300,
            signInMaxAttemptsPerAddress: perAddress, signInMaxAttemptsPerUsername: perUsername, now: clock.now)
        for name in ["alice", "Alice"] { _ = try await auth.createUser(username: name, password: password, actor: testOperator) }
        return (test, auth, clock)
    }

    /// What one attempt came to, as a short word.
    static func attempt(_ auth: AuthService, _ username: String, _ password: String, from address: String) async throws -> String {
        switch try await auth.check(username: username, password: password, address: address) {
        case .valid: "ok"
        case .invalid: "invalid"
        case .limited(let error, _): error.message.contains("from this address") && !error.message.contains("username") ? "address"
            : error.message.contains("this username from") ? "pair" : "username"
        }
    }

    @Test("the one rule both limiters follow: the limits in order, the first reached refuses with when its oldest failure leaves the window; 0 is no limit; a trusted address skips the username limit")
    func theRule() {
        let limits = SignInLimits(perUsernameAndAddress: 3, perAddress: 5, perUsername: 4, windowSeconds: 300)
        let now = Date(timeIntervalSince1970: 1_000_000)
        func tallies(_ counts: [SignInLimit: Int], oldest: Date? = now.addingTimeInterval(-100)) -> (SignInLimit) -> SignInLimits.Tally {
            { SignInLimits.Tally(counted: counts[$0] ?? 0, oldestFailure: oldest) }
        }
        #expect(limits.refusal(trusted: false, at: now, tally: tallies([.usernameAndAddress: 2, .address: 4, .username: 3])) == nil)
        let pair = limits.refusal(trusted: false, at: now, tally: tallies([.usernameAndAddress: 3, .address: 5, .username: 4]))
        #expect(pair?.limit == .usernameAndAddress, "the first limit reached refuses")
        #expect(pair?.error.retryAfter == 200, "the oldest failure (100 s ago) leaves the 300 s window in 200 s")
        #expect(limits.refusal(trusted: false, at: now, tally: tallies([.address: 5]))?.limit == .address)
        #expect(limits.refusal(trusted: false, at: now, tally: tallies([.username: 4]))?.limit == .username)
        #expect(limits.refusal(trusted: true, at: now, tally: tallies([.username: 40])) == nil, "a trusted address is not held by the username limit")
        let inFlightOnly = limits.refusal(trusted: false, at: now, tally: tallies([.address: 5], oldest: nil))
        #expect(inFlightOnly?.error.retryAfter == 1, "only checks in flight fill it: try again in a second")
        var unlimited = limits
        unlimited.perAddress = 0
        #expect(unlimited.refusal(trusted: false, at: now, tally: tallies([.address: 1_000])) == nil)
    }

    @Test("usernames are case-sensitive, and so are the limits: failures for ALICE lock out neither alice nor Alice", arguments: TestStore.all)
    func caseSensitive(store: TestStore) async throws {
        let (test, auth, _) = try await Self.make(store)
        defer { test.close() }
        for _ in 0..<3 { #expect(try await Self.attempt(auth, "ALICE", "wrong horse", from: "127.0.0.2") == "invalid") }
        #expect(try await Self.attempt(auth, "ALICE", "wrong horse", from: "127.0.0.2") == "pair")
        #expect(try await Self.attempt(auth, "alice", Self.password, from: "127.0.0.2") == "ok")
        #expect(try await Self.attempt(auth, "Alice", Self.password, from: "127.0.0.2") == "ok")
        #expect(try await Self.attempt(auth, "alice", "Correct horse", from: "127.0.0.2") == "invalid", "passwords are exact too")
    }

    @Test("per (username, address): failures from one address do not lock the user out elsewhere", arguments: TestStore.all)
    func perPair(store: TestStore) async throws {
        let (test, auth, clock) = try await Self.make(store)
        defer { test.close() }
        for _ in 0..<3 { #expect(try await Self.attempt(auth, "alice", "wrong horse", from: "127.0.0.2") == "invalid") }
        #expect(try await Self.attempt(auth, "alice", Self.password, from: "127.0.0.2") == "pair", "even the right password waits")
        #expect(try await Self.attempt(auth, "alice", Self.password, from: "127.0.0.3") == "ok")
        // The window passes: the address may try again.
        clock.advance(seconds: 301)
        #expect(try await Self.attempt(auth, "alice", Self.password, from: "127.0.0.2") == "ok")
    }

    @Test("per address: fresh usernames from one address reach bcrypt at most perAddress times; other addresses are not held back", arguments: TestStore.all)
    func perAddress(store: TestStore) async throws {
        let (test, auth, _) = try await Self.make(store)
        defer { test.close() }
        var outcomes: [String] = []
        for n in 0..<15 { outcomes.append(try await Self.attempt(auth, "nobody\(n)", "whatever12", from: "127.0.0.2")) }
        #expect(outcomes.filter { $0 == "invalid" }.count == 10, "\(outcomes)")
        #expect(outcomes.suffix(5).allSatisfy { $0 == "address" }, "\(outcomes)")
        // A right password from that address is refused too (the address is the limit) …
        #expect(try await Self.attempt(auth, "alice", Self.password, from: "127.0.0.2") == "address")
        // … and nobody else is affected.
        #expect(try await Self.attempt(auth, "alice", Self.password, from: "127.0.0.3") == "ok")
        #expect(try await Self.attempt(auth, "nobody99", "whatever12", from: "127.0.0.3") == "invalid")
    }

    @Test("per username: many addresses guessing one account are stopped, but not where the user signed in before", arguments: TestStore.all)
    func perUsernameWithTrustedAddress(store: TestStore) async throws {
        let (test, auth, _) = try await Self.make(store, perPair: 2, perUsername: 5)
        defer { test.close() }
        // alice signs in from her usual address.
        #expect(try await Self.attempt(auth, "alice", Self.password, from: "10.0.0.7") == "ok")
        // Three addresses guess two passwords each: six failures, the per-username limit is five.
        var outcomes: [String] = []
        for address in ["127.0.0.2", "127.0.0.3", "127.0.0.4"] {
            for _ in 0..<2 { outcomes.append(try await Self.attempt(auth, "alice", "wrong horse", from: address)) }
        }
        #expect(outcomes == ["invalid", "invalid", "invalid", "invalid", "invalid", "username"], "\(outcomes)")
        // A new address is refused for alice …
        #expect(try await Self.attempt(auth, "alice", Self.password, from: "127.0.0.5") == "username")
        // … her usual one is not: the attackers cannot lock her out.
        #expect(try await Self.attempt(auth, "alice", Self.password, from: "10.0.0.7") == "ok")
        // Other users are not affected.
        #expect(try await Self.attempt(auth, "Alice", Self.password, from: "127.0.0.5") == "ok")
    }

    @Test("refusals by the limits are audited once per limit and window, with how many went unrecorded", arguments: TestStore.all)
    func refusalsAuditedPerWindow(store: TestStore) async throws {
        let (test, auth, clock) = try await Self.make(store)
        defer { test.close() }
        func signIn(_ password: String) async -> PhotosError.Code? {
            do {
                _ = try await auth.signIn(username: "alice", password: password, address: "127.0.0.2", actor: .client)
                return nil
            } catch let error as PhotosError {
                return error.code
            } catch {
                return .internal
            }
        }
        for _ in 0..<3 { #expect(await signIn("wrong horse") == .invalidCredentials) }
        for _ in 0..<40 { #expect(await signIn("wrong horse") == .tooManyAttempts) }
        let detail = test.postgres == nil ? "detail" : "detail::text"
        let rows = { try await test.database.read { connection in
            try await connection.query("SELECT \(raw: detail) FROM audit_trail WHERE session_id = 'api' AND step = 'auth.signInFailed' ORDER BY seq").map { try $0.string(0) }
        } }
        var details = try await rows()
        #expect(details.count == 4, "three failures and one row for 40 refusals: \(details)")
        #expect(details.last?.contains("tooManyAttempts") == true)
        #expect(details.last?.contains("usernameAndAddress") == true)
        // The next window: three new failures, then refused again; its row counts the 39 before.
        clock.advance(seconds: 301)
        for _ in 0..<3 { #expect(await signIn("wrong horse") == .invalidCredentials) }
        #expect(await signIn("wrong horse") == .tooManyAttempts)
        details = try await rows()
        #expect(details.count == 8, "\(details)")
        #expect(details.last?.replacingOccurrences(of: " ", with: "").contains(#""unrecordedBefore":39"#) == true, "\(details.last ?? "")")
    }
}
