import AuditTrail
import DatabaseAccess
import Foundation
import Navigation
import PhotosCore
import PhotosModel
import PhotosTestSupport
import Sessions
import Testing

/// `sessions.idleExpirySeconds` on both stores: an idle session ends at its next request or at
/// the sweep, with a `session.expired` step; afterwards it answers `410 session_expired`.
/// One test at a time, as the suites that start photosd are: together they loaded the machine
/// enough that the PostgreSQL outage test's timing bound failed.
@Suite("Session expiry", .serialized)
struct SessionExpiryTests {
    static let hour: TimeInterval = 3_600

    static func world(_ store: TestStore) async throws -> (TestDatabase, TestClock, AuthService, SessionCoordinator) {
        let test = try await TestDatabase.make(store)
        let clock = TestClock()
        let auth = test.auth(tokenLifetimeSeconds: 86_400 * 30, now: clock.now)
        let sessions = try test.sessions(auth: auth, idleExpirySeconds: Int(hour))
        _ = try await CatalogService(database: test.database).add(NewPhoto(title: "Sunset", priceCents: 250), actor: .system)
        _ = try await auth.createUser(username: "alice", password: "password123", actor: testOperator)
        return (test, clock, auth, sessions)
    }

    static func expectExpired(_ body: () async throws -> Void) async {
        do {
            try await body()
            Issue.record("expected session_expired")
        } catch let error as PhotosError {
            #expect(error.code == .sessionExpired, "\(error)")
        } catch {
            Issue.record("expected session_expired, got \(error)")
        }
    }

    @Test("an idle session ends at its next action (even one this process decided on known facts); then every request is 410; its events stay", arguments: TestStore.all)
    func endsAtNextAction(store: TestStore) async throws {
        let (test, clock, _, sessions) = try await Self.world(store)
        defer { test.close() }
        let id = try await sessions.createSession().session.id
        _ = try await sessions.apply(ClientAction(.signIn), to: id)
        _ = try await sessions.apply(ClientAction(.submit, username: "alice", password: "password123"), to: id)
        _ = try await sessions.apply(ClientAction(.selectPhoto, photoId: 1), to: id)
        // Used just under the expiry: lives on.
        clock.advance(seconds: Self.hour - 1)
        _ = try await sessions.apply(ClientAction(.back), to: id)
        clock.advance(seconds: Self.hour)
        await Self.expectExpired { _ = try await sessions.apply(ClientAction(.selectPhoto, photoId: 1), to: id) }

        let events = try await sessions.events(sessionID: id, after: 0, limit: 1_000)
        let last = try #require(events.last)
        #expect(last.step == "session.expired" && last.actor == "system")
        let count = events.count
        // Every later request: 410, nothing written.
        await Self.expectExpired { _ = try await sessions.apply(ClientAction(.back), to: id) }
        await Self.expectExpired { _ = try await sessions.session(id: id) }
        #expect(try await sessions.events(sessionID: id, after: 0, limit: 1_000).count == count)
        // The state is dropped, the token revoked.
        let row = try #require(try await test.database.read { try await $0.queryOne("SELECT state, ended_at, token_id, user_id FROM sessions WHERE id = \(id)") })
        #expect(try row.string(0) == "{}" && row.optionalString(1) != nil && row.optionalInt64(2) == nil && row.optionalInt64(3) == nil)
        let live = try await test.database.read { try await $0.queryOne("SELECT count(*) FROM tokens WHERE revoked_at IS NULL")?.int(0) }
        #expect(live == 0)
        #expect(try await test.database.read { try await AuditChains.verify(on: $0) }.isIntact)
    }

    @Test("reading an idle session ends it", arguments: TestStore.all)
    func endsAtRead(store: TestStore) async throws {
        let (test, clock, _, sessions) = try await Self.world(store)
        defer { test.close() }
        let id = try await sessions.createSession().session.id
        clock.advance(seconds: Self.hour + 1)
        await Self.expectExpired { _ = try await sessions.session(id: id) }
        #expect(try await sessions.events(sessionID: id, after: 0, limit: 100).last?.step == "session.expired")
    }

    @Test("the sweep ends the idle sessions and only those, prunes expired tokens, and runs on one holder at a time", arguments: TestStore.all)
    func sweep(store: TestStore) async throws {
        let (test, clock, _, sessions) = try await Self.world(store)
        defer { test.close() }
        let idle = try await (0..<3).asyncMap { _ in try await sessions.createSession().session.id }
        clock.advance(seconds: Self.hour + 1)
        let fresh = try await sessions.createSession().session.id
        let report = try await sessions.sweep(holder: "a")
        #expect(report.ran && report.ended == 3)
        for id in idle { #expect(try await sessions.events(sessionID: id, after: 0, limit: 100).last?.step == "session.expired") }
        #expect(try await sessions.session(id: fresh).top?.screen == .photos)
        // Another holder while "a" holds the lease: nothing.
        #expect(try await sessions.sweep(holder: "b").ran == false)
        // Past the lease (and the expiry of `fresh`), "b" may; a token past its expiry is pruned.
        clock.advance(seconds: Self.hour)
        let old = "2020-01-01T00:00:00.000Z"
        _ = try await test.database.write { connection in
            try await connection.execute(
                "INSERT INTO tokens (token_hash, user_id, issued_at, expires_at) VALUES ('x', 1, \(old), '2020-01-02T00:00:00.000Z')")
            try await connection.execute("INSERT INTO sign_in_attempts (username_key, state, at, address) VALUES ('alice', 'failed', \(old), 'a')")
            try await connection.execute("INSERT INTO sign_in_trusted_addresses (username_key, address, at) VALUES ('alice', 'a', \(old))")
        }
        let second = try await sessions.sweep(holder: "b")
        #expect(second.ran && second.ended == 1)  // `fresh`, idle by now
        #expect(second.pruned == SessionSweep.Pruned(tokens: 1, signInAttempts: 1, trustedAddresses: 1))
        #expect(try await test.database.read { try await AuditChains.verify(on: $0) }.isIntact)
    }
}

extension SessionExpiryTests {
    @Test("the sweep walks pages of live sessions created before the cutoff, with ties in created_at, ending each idle one once", arguments: TestStore.all)
    func sweepPages(store: TestStore) async throws {
        let (test, clock, _, sessions) = try await Self.world(store)
        defer { test.close() }
        // Seven sessions created at one instant (the clock stands still): ties the cursor must walk.
        let idle = try await (0..<7).asyncMap { _ in try await sessions.createSession().session.id }
        clock.advance(seconds: Self.hour + 1)
        let fresh = try await sessions.createSession().session.id
        let report = try await sessions.sweep(holder: "a", pageSize: 2)
        #expect(report.ended == 7)
        for id in idle { #expect(try await sessions.events(sessionID: id, after: 0, limit: 100).last?.step == "session.expired") }
        #expect(try await sessions.session(id: fresh).top?.screen == .photos)
        // Ended sessions are out of the walk: a second sweep reads nothing and ends nothing.
        #expect(try await sessions.sweep(holder: "a", pageSize: 2).ended == 0)
    }

    @Test("the sweep reads through indexes: its walk reads only live sessions created before the cutoff, and its pruning no whole table (SQLite's plans)")
    func sweepQueryPlans() async throws {
        let test = try await TestDatabase.make(.sqlite)
        defer { test.close() }
        let walkQuery = SessionSweep.pageQuery(cutoff: "x", after: .start, limit: 10)
        let pruneQueries = SessionSweep.pruneQueries(now: "x", attempts: "x", trusted: "x")
        let plans = try await test.database.read { connection in
            var plans: [String: String] = [:]
            for sql in [walkQuery] + pruneQueries {
                plans[sql.text] = try await connection.query("EXPLAIN QUERY PLAN \(sql)").map { try $0.string(3) }.joined(separator: "; ")
            }
            return plans
        }
        let walk = try #require(plans[walkQuery.text])
        #expect(walk.contains("sessions_live_by_created") && !walk.contains("SCAN sessions"), "\(walk)")
        for sql in pruneQueries {
            let plan = try #require(plans[sql.text])
            #expect(plan.contains("USING") && plan.contains("INDEX") && !plan.hasPrefix("SCAN"), "\(sql): \(plan)")
        }
    }
}

extension Sequence {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}
