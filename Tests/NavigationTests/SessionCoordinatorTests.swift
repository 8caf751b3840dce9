import Foundation
@testable import Navigation
import PhotosCore
import PhotosTestSupport
import SQLiteStore
import Testing

@Suite("SessionCoordinator")
struct SessionCoordinatorTests {
    @Test("expectVersion: a stale version is a version_conflict and writes nothing")
    func expectVersion() async throws {
        let h = try await SessionHarness.make()
        defer { h.close() }
        let id = try await h.newSession()
        let ok = try await h.coordinator.apply(ClientAction(.selectPhoto, photoId: 1), to: id, expectVersion: 1)
        #expect(ok.session.version == 2)
        await #expect(throws: PhotosError(.versionConflict, "session is at version 2, not 1")) {
            try await h.coordinator.apply(ClientAction(.back), to: id, expectVersion: 1)
        }
        #expect(try await h.coordinator.events(sessionID: id).count == 5)
    }

    @Test("a retried buy with the same Idempotency-Key returns the first answer and one purchase")
    func idempotentBuy() async throws {
        let h = try await SessionHarness.make()
        defer { h.close() }
        let id = try await h.newSession()
        try await h.signIn(id)
        try await h.act(id, .selectPhoto, photoId: 1)
        try await h.act(id, .buy)
        let first = try await h.coordinator.apply(ClientAction(.buy), to: id, idempotencyKey: "key-1")
        let rowsAfterFirst = try await h.coordinator.events(sessionID: id, limit: 1_000).count
        let retried = try await h.coordinator.apply(ClientAction(.buy), to: id, idempotencyKey: "key-1")
        #expect(retried == first)
        #expect(try await h.purchaseCount() == 1)
        #expect(try await h.coordinator.events(sessionID: id, limit: 1_000).count == rowsAfterFirst)
        await #expect(throws: PhotosError.self) {
            try await h.coordinator.apply(ClientAction(.back), to: id, idempotencyKey: "key-1")
        }
    }

    @Test("a retried sign-in returns the same token, which the database holds only encrypted")
    func idempotentSignIn() async throws {
        let h = try await SessionHarness.make()
        defer { h.close() }
        let id = try await h.newSession()
        try await h.act(id, .signIn)
        let action = ClientAction(.submit, username: "alice", password: SessionHarness.password)
        let first = try await h.coordinator.apply(action, to: id, idempotencyKey: "sign-in-1")
        let retried = try await h.coordinator.apply(action, to: id, idempotencyKey: "sign-in-1")
        let token = try #require(first.token)
        #expect(retried.token == token)
        #expect(retried == first)
        h.test.database.close()
        var bytes = Data()
        for suffix in ["", "-wal"] { bytes.append(FileManager.default.contents(atPath: h.test.path + suffix) ?? Data()) }
        #expect(bytes.range(of: Data(token.utf8)) == nil)
        #expect(bytes.range(of: Data("sign-in-1".utf8)) == nil)
    }

    @Test("a session whose token was revoked is signed out at its next action, audited")
    func revokedTokenSignsOut() async throws {
        let h = try await SessionHarness.make()
        defer { h.close() }
        let id = try await h.newSession()
        try await h.signIn(id)
        _ = try await h.auth.signOut(username: "alice", actor: testOperator)
        let next = try await h.act(id, .selectPhoto, photoId: 1)
        #expect(next.session.user == nil)
        #expect(steps(next.events).first == "auth.signOut - - {\"reason\":\"tokenInvalid\"}")
        #expect(next.events.first?.actor == "system")
    }

    @Test("bad parameters and unknown sessions change nothing")
    func badInput() async throws {
        let h = try await SessionHarness.make()
        defer { h.close() }
        let id = try await h.newSession()
        await #expect(throws: PhotosError.badRequest("selectPhoto needs photoId")) { try await h.coordinator.apply(ClientAction(.selectPhoto), to: id) }
        await #expect(throws: PhotosError.notFound("no photo with id 99")) { try await h.coordinator.apply(ClientAction(.selectPhoto, photoId: 99), to: id) }
        await #expect(throws: PhotosError.self) { try await h.coordinator.apply(ClientAction(.back), to: "no-such-session") }
        await #expect(throws: PhotosError.self) { try await h.coordinator.apply(ClientAction(.back), to: id, idempotencyKey: "") }
        #expect(try await h.coordinator.session(id: id).version == 1)
        #expect(try await h.coordinator.events(sessionID: id).count == 3)
    }

    @Test("operator sign-in resumes a purchase flow waiting on signIn; operator purchase completes buy")
    func operatorCommands() async throws {
        let h = try await SessionHarness.make()
        defer { h.close() }
        let id = try await h.newSession()
        try await h.act(id, .selectPhoto, photoId: 2)
        try await h.act(id, .buy)
        await #expect(throws: PhotosError.self) { try await h.coordinator.operatorPurchase(sessionID: id, actor: testOperator) }
        let signedIn = try await h.coordinator.operatorSignIn(sessionID: id, username: "alice", actor: testOperator)
        #expect(stacks(signedIn.session) == "[photos, photo, buy]")
        #expect(signedIn.events.allSatisfy { $0.actor == "operator:tester" })
        await #expect(throws: PhotosError.self) { try await h.coordinator.operatorSignIn(sessionID: id, username: "alice", actor: testOperator) }
        let bought = try await h.coordinator.operatorPurchase(sessionID: id, actor: testOperator)
        #expect(bought.outcome == .purchased)
        #expect(stacks(bought.session) == "[photos, photo]")
        #expect(try await h.purchaseCount() == 1)
        try await h.checkInvariants(id)
    }

    @Test("50 concurrent actions on one session are serialized: versions strictly increase, none lost")
    func concurrentActionsOnOneSession() async throws {
        let h = try await SessionHarness.make()
        defer { h.close() }
        let id = try await h.newSession()
        let coordinator = h.coordinator
        let versions = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<50 {
                group.addTask {
                    // selectPhoto is always offered on photos; back on photo: half of them may be refused.
                    let action = index % 2 == 0 ? ClientAction(.selectPhoto, photoId: 1) : ClientAction(.back)
                    return try await coordinator.apply(action, to: id).session.version
                }
            }
            var versions: [Int] = []
            for try await version in group { versions.append(version) }
            return versions
        }
        let events = try await h.coordinator.events(sessionID: id, limit: 10_000)
        let accepted = events.filter { $0.step == "action" }.count
        let rejected = events.filter { $0.step == "action.rejected" }.count
        #expect(accepted + rejected == 50)
        #expect(try await h.coordinator.session(id: id).version == 1 + accepted)
        #expect(Set(versions).count >= accepted)
        try await h.checkInvariants(id)
    }
}

@Suite("Hand-written JSON")
struct HandWrittenJSONTests {
    @Test("escapes like JSONEncoder: quotes, backslashes, control characters, non-ASCII")
    func escaping() throws {
        let state = SessionState(
            user: SessionUser(id: 7, username: "a\"b\\c\nd\te\u{01}é😀/"), tokenId: 3,
            stacks: [StackState(presentation: .root, presenter: "app", screens: [ScreenState(.photos, owner: "app")])],
            coordinators: CoordinatorState(kind: .app, id: "app", presentation: nil, photoId: nil, stackIndex: nil, initialDepth: nil, children: []),
            top: TopScreen(screen: .photos, actions: [.selectPhoto]))
        let decoded = try JSONDecoder().decode(SessionState.self, from: Data(state.jsonText.utf8))
        #expect(decoded == state)
        let parsedOurs = try JSONSerialization.jsonObject(with: Data(state.jsonText.utf8)) as? NSDictionary
        let parsedTheirs = try JSONSerialization.jsonObject(with: Data(try encodeSorted(state).utf8)) as? NSDictionary
        #expect(parsedOurs == parsedTheirs)
    }
}
