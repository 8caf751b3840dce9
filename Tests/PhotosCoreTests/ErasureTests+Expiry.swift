import AuditTrail
import DatabaseAccess
import Foundation
import Navigation
import PhotosCore
import PhotosModel
import PhotosTestSupport
import Sessions
import Testing

extension ErasureTests {
    /// `users erase` on one instance while another's sweep ends the same user's idle sessions.
    /// Both write through the sessions' own path (each write kept only if the session is still
    /// as read), so whichever comes second finds the session moved and reads it again: an idle
    /// session ends once (one `session.expired`, by whichever got there), a session in use is
    /// signed out once (`auth.signOut`, reason `userErased`), the erasure is not refused, and
    /// nothing is left that names or works as the user.
    @Test("erasure racing the expiry sweep on another instance: each idle session ends once, each live one is signed out once, nothing of the user is left", arguments: TestStore.all)
    func erasureRacingExpiry(store: TestStore) async throws {
        let test = try await TestDatabase.make(store)
        defer { test.close() }
        let clock = TestClock()
        let hour: TimeInterval = 3_600
        let auth = test.auth(tokenLifetimeSeconds: 86_400 * 30, now: clock.now)
        let erasing = try test.sessions(auth: auth, idleExpirySeconds: Int(hour))
        let sweeping = try test.sessions(auth: auth, idleExpirySeconds: Int(hour))
        _ = try await CatalogService(database: test.database).add(NewPhoto(title: "Sunset", priceCents: 250), actor: .system)

        // Rounds with a user each: the two orders of the race differ from run to run.
        for round in 0..<4 {
            let name = "\(Self.name)\(round)"
            let user = try await auth.createUser(username: name, password: "password123", actor: .operator("ops"))
            var idle: [String] = []
            for _ in 0..<4 { idle.append(try await Self.signedIn(as: name, on: erasing)) }
            clock.advance(seconds: hour + 1)
            var live: [String] = []
            for _ in 0..<2 { live.append(try await Self.signedIn(as: name, on: erasing)) }

            let (report, swept) = try await withThrowingTaskGroup(of: (ErasureReport?, SessionCoordinator.SweepReport?).self) { group in
                group.addTask { (try await erasing.erase(username: name, actor: .operator("ops")), nil) }
                group.addTask { (nil, try await sweeping.sweep(holder: "sweeper")) }
                // And each idle session's end asked for directly, last first (the erasure goes
                // first to last): the two meet in the middle.
                for id in idle.reversed() {
                    group.addTask { _ = try await sweeping.expireIfIdle(sessionID: id); return (nil, nil) }
                }
                var report: ErasureReport?
                var swept: SessionCoordinator.SweepReport?
                for try await (erased, sweep) in group {
                    report = report ?? erased
                    swept = swept ?? sweep
                }
                return (report, swept)
            }
            let erased = try #require(report)
            #expect(erased.userId == user.id)
            #expect(erased.sessionsSignedOut == live.count, "round \(round): only the sessions in use are signed out")
            #expect(swept?.ran == true)

            for id in idle {
                let events = try await erasing.events(sessionID: id, after: 0, limit: 1_000)
                #expect(events.filter { $0.step == "session.expired" }.count == 1, "round \(round): \(id) ended \(events.map(\.step))")
                #expect(events.last?.step == "session.expired")
                #expect(!events.contains { $0.step == "auth.signOut" }, "round \(round): an ended session was signed out")
                #expect(events.allSatisfy { $0.username == nil }, "a row still names the erased user")
            }
            for id in live {
                let events = try await erasing.events(sessionID: id, after: 0, limit: 1_000)
                let signOuts = events.filter { $0.step == "auth.signOut" }
                #expect(signOuts.count == 1 && signOuts.first?.detail.contains("userErased") == true, "round \(round): \(events.map(\.step))")
                #expect(!events.contains { $0.step == "session.expired" })
                #expect(try await sweeping.session(id: id).user == nil)
            }
            let left = try await test.database.read { connection in
                (
                    tokens: try await connection.queryOne("SELECT count(*) FROM tokens WHERE user_id = \(user.id)")?.int(0) ?? -1,
                    signedIn: try await connection.queryOne("SELECT count(*) FROM sessions WHERE user_id = \(user.id)")?.int(0) ?? -1,
                    named: try await connection.queryOne("SELECT count(*) FROM sessions WHERE state LIKE \("%\(name)%")")?.int(0) ?? -1
                )
            }
            #expect(left.tokens == 0, "tokens survived the erasure")
            #expect(left.signedIn == 0, "sessions stayed signed in as the erased user")
            #expect(left.named == 0, "a session's state holds the erased name")
            #expect(try await auth.user(named: name) == nil)
        }
        let verification = try await test.database.read { try await AuditChains.verify(on: $0) }
        #expect(verification.isIntact, "\(String(describing: verification.problem))")
    }

    /// A new session on `sessions`, signed in as `name`.
    static func signedIn(as name: String, on sessions: SessionCoordinator) async throws -> String {
        let id = try await sessions.createSession().session.id
        _ = try await sessions.apply(ClientAction(.signIn), to: id)
        _ = try await sessions.apply(ClientAction(.submit, username: name, password: "password123"), to: id)
        return id
    }
}
