import AuditTrail
import Crypto
import DatabaseAccess
import Foundation
@testable import Navigation
import PhotosCore
import PhotosTestSupport
import SQLiteStore
import Testing
import PhotosModel
@testable import Sessions

@Suite("SessionCoordinator")
struct SessionCoordinatorTests {
    @Test("expectVersion: a stale version is a version_conflict and writes nothing", arguments: TestStore.all)
    func expectVersion(store: TestStore) async throws {
        let h = try await SessionHarness.make(store)
        defer { h.close() }
        let id = try await h.newSession()
        let ok = try await h.sessions.apply(ClientAction(.selectPhoto, photoId: 1), to: id, expectVersion: 1)
        #expect(ok.session.version == 2)
        await #expect(throws: PhotosError(.versionConflict, "session is at version 2, not 1")) {
            try await h.sessions.apply(ClientAction(.back), to: id, expectVersion: 1)
        }
        #expect(try await h.sessions.events(sessionID: id).count == 5)
    }

    @Test("a retried buy with the same Idempotency-Key returns the first answer and one purchase", arguments: TestStore.all)
    func idempotentBuy(store: TestStore) async throws {
        let h = try await SessionHarness.make(store)
        defer { h.close() }
        let id = try await h.newSession()
        try await h.signIn(id)
        try await h.act(id, .selectPhoto, photoId: 1)
        try await h.act(id, .buy)
        let first = try await h.sessions.apply(ClientAction(.buy), to: id, idempotencyKey: "key-1")
        let rowsAfterFirst = try await h.sessions.events(sessionID: id, limit: 1_000).count
        let retried = try await h.sessions.apply(ClientAction(.buy), to: id, idempotencyKey: "key-1")
        #expect(retried == first)
        #expect(try await h.purchaseCount() == 1)
        #expect(try await h.sessions.events(sessionID: id, limit: 1_000).count == rowsAfterFirst)
        await #expect(throws: PhotosError.self) {
            try await h.sessions.apply(ClientAction(.back), to: id, idempotencyKey: "key-1")
        }
    }

    @Test("a retried sign-in returns the same token, which the database holds only encrypted", arguments: TestStore.all)
    func idempotentSignIn(store: TestStore) async throws {
        let h = try await SessionHarness.make(store)
        defer { h.close() }
        let id = try await h.newSession()
        try await h.act(id, .signIn)
        let action = ClientAction(.submit, username: "alice", password: SessionHarness.password)
        let first = try await h.sessions.apply(action, to: id, idempotencyKey: "sign-in-1")
        let retried = try await h.sessions.apply(action, to: id, idempotencyKey: "sign-in-1")
        let token = try #require(first.token)
        #expect(retried.token == token)
        #expect(retried == first)
        try await h.test.database.close()
        let bytes = try await h.test.storedBytes()
        #expect(bytes.count > 10_000, "nothing was searched")
        #expect(bytes.range(of: Data(SessionHarness.password.utf8)) == nil)
        #expect(bytes.range(of: Data(token.utf8)) == nil)
        #expect(bytes.range(of: Data("sign-in-1".utf8)) == nil)
    }

    @Test("the database alone reveals nothing of a stored sign-in: no plain key hash, no token without the server secret", arguments: TestStore.all)
    func idempotencyNeedsTheServerSecret(store: TestStore) async throws {
        let h = try await SessionHarness.make(store)
        defer { h.close() }
        let id = try await h.newSession()
        try await h.act(id, .signIn)
        let action = ClientAction(.submit, username: "alice", password: SessionHarness.password)
        let key = "1"  // clients use small counters: guessable
        let first = try await h.sessions.apply(action, to: id, idempotencyKey: key)
        let token = try #require(first.token)
        let row = try #require(try await h.test.database.read { try await $0.queryOne("SELECT key, request_hash, response FROM idempotency_keys") })
        // Before: key = SHA-256("1"), found by anyone who hashes small numbers.
        #expect(try row.string(0) != SecureToken.sha256Hex(key))
        #expect(try row.string(1) != SecureToken.sha256Hex(action.fingerprint))
        // The sealed token cannot be opened with a key derived from the idempotency key alone
        // (the first version's scheme), nor by a server with another secret.
        let stored = try JSONSerialization.jsonObject(with: Data(row.string(2).utf8)) as? [String: Any]
        let sealed = try #require((stored?["sealedToken"] as? String).flatMap { Data(base64Encoded: $0) })
        let oldKey = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: Data(key.utf8)), salt: Data(id.utf8),
            info: Data("photosd idempotent token".utf8), outputByteCount: 32)
        #expect(throws: (any Error).self) { try AES.GCM.open(try AES.GCM.SealedBox(combined: sealed), using: oldKey) }
        let otherServer = SessionCoordinator(
            database: try h.test.database, auth: try h.auth,
            idempotency: IdempotencyStore(secret: ServerSecret(key: SymmetricKey(size: .bits256)), retentionSeconds: 3_600))
        // A server with another secret cannot even find the stored answer: to it the retry is a
        // new submit (refused, the session is no longer on signIn), and no token comes back.
        let elsewhere = try await otherServer.apply(action, to: id, idempotencyKey: key)
        #expect(elsewhere.token == nil)
        #expect(elsewhere.error?.code == .actionNotAvailable)
        // The real server answers the retry with the same token.
        #expect(try await h.sessions.apply(action, to: id, idempotencyKey: key).token == token)
        // The secret file is private.
        let attributes = try FileManager.default.attributesOfItem(atPath: try h.test.directory.file("photosd-secret.key"))
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
    }

    @Test("idempotency answers expire: pruned after the retention, and a late retry is a new request")
    func idempotencyExpires() async throws {
        let test = try TestDatabase()
        defer { test.close() }
        let clock = TestClock()
        let auth = test.auth(now: clock.now)
        _ = try await test.catalog.add(NewPhoto(title: "Sunset", priceCents: 250), actor: testOperator)
        let coordinator = try test.sessions(auth: auth, idempotencyRetentionSeconds: 60)
        let id = try await coordinator.createSession().session.id
        let first = try await coordinator.apply(ClientAction(.selectPhoto, photoId: 1), to: id, idempotencyKey: "k")
        clock.advance(seconds: 30)
        #expect(try await coordinator.apply(ClientAction(.selectPhoto, photoId: 1), to: id, idempotencyKey: "k") == first)
        let idempotency = IdempotencyStore(secret: try ServerSecret.loadOrCreate(path: test.directory.file("photosd-secret.key")), retentionSeconds: 60)
        #expect(try await idempotency.prune(now: clock.now(), in: test.database) == 0)
        clock.advance(seconds: 31)
        // Past the retention a retry is a new request (here refused: photo has no selectPhoto).
        let late = try await coordinator.apply(ClientAction(.selectPhoto, photoId: 1), to: id, idempotencyKey: "k")
        #expect(late.session.version == first.session.version)
        #expect(late.error?.code == .actionNotAvailable)
        clock.advance(seconds: 61)
        #expect(try await idempotency.prune(now: clock.now(), in: test.database) == 1)
        #expect(try await test.database.read { try await $0.queryOne("SELECT count(*) FROM idempotency_keys")?.int(0) } == 0)
    }

    @Test("a sign-in whose session reached signIn while its password was not yet checked is checked then, not a version_conflict", arguments: TestStore.all)
    func credentialRace(store: TestStore) async throws {
        let h = try await SessionHarness.make(store)
        defer { h.close() }
        let id = try await h.newSession()
        // Hold the session's writes so that the signIn below and the submit's read both happen
        // before either commits: the submit reads `photos` (no password check) and reaches the
        // transaction after signIn has presented the sign-in screen. Each step waits until the
        // one before is queued behind the hold (not a guessed sleep: CI machines are busy).
        let hold = try await h.test.holdWrites(to: id)
        let signIn = Task { try await h.sessions.apply(ClientAction(.signIn), to: id) }
        #expect(try await h.test.waitForBlockedWrites(1), "signIn never reached its transaction")
        let submit = Task { try await h.sessions.apply(ClientAction(.submit, username: "alice", password: SessionHarness.password), to: id) }
        #expect(try await h.test.waitForBlockedWrites(2), "submit never reached its transaction")
        try await hold.release()
        #expect(try await signIn.value.error == nil)
        let result = try await submit.value
        #expect(result.error == nil)
        #expect(result.outcome == .signedIn)
        #expect(result.session.user?.username == "alice")
    }

    @Test("a session whose token was revoked is signed out at its next action, audited", arguments: TestStore.all)
    func revokedTokenSignsOut(store: TestStore) async throws {
        let h = try await SessionHarness.make(store)
        defer { h.close() }
        let id = try await h.newSession()
        try await h.signIn(id)
        _ = try await h.auth.signOut(username: "alice", actor: testOperator)
        let next = try await h.act(id, .selectPhoto, photoId: 1)
        #expect(next.session.user == nil)
        #expect(steps(next.events).first == "auth.signOut - - {\"reason\":\"tokenInvalid\"}")
        #expect(next.events.first?.actor == "system")
    }

    @Test("bad parameters and unknown sessions change nothing", arguments: TestStore.all)
    func badInput(store: TestStore) async throws {
        let h = try await SessionHarness.make(store)
        defer { h.close() }
        let id = try await h.newSession()
        await #expect(throws: PhotosError.badRequest("selectPhoto needs photoId")) { try await h.sessions.apply(ClientAction(.selectPhoto), to: id) }
        await #expect(throws: PhotosError.notFound("no photo with id 99")) { try await h.sessions.apply(ClientAction(.selectPhoto, photoId: 99), to: id) }
        await #expect(throws: PhotosError.self) { try await h.sessions.apply(ClientAction(.back), to: "no-such-session") }
        await #expect(throws: PhotosError.self) { try await h.sessions.apply(ClientAction(.back), to: id, idempotencyKey: "") }
        #expect(try await h.sessions.session(id: id).version == 1)
        #expect(try await h.sessions.events(sessionID: id).count == 3)
    }

    @Test("operator sign-in resumes a purchase flow waiting on signIn; operator purchase completes buy", arguments: TestStore.all)
    func operatorCommands(store: TestStore) async throws {
        let h = try await SessionHarness.make(store)
        defer { h.close() }
        let id = try await h.newSession()
        try await h.act(id, .selectPhoto, photoId: 2)
        try await h.act(id, .buy)
        await #expect(throws: PhotosError.self) { try await h.sessions.operatorPurchase(sessionID: id, actor: testOperator) }
        let signedIn = try await h.sessions.operatorSignIn(sessionID: id, username: "alice", actor: testOperator)
        #expect(stacks(signedIn.session) == "[photos, photo, buy]")
        #expect(signedIn.events.allSatisfy { $0.actor == "operator:tester" })
        await #expect(throws: PhotosError.self) { try await h.sessions.operatorSignIn(sessionID: id, username: "alice", actor: testOperator) }
        let bought = try await h.sessions.operatorPurchase(sessionID: id, actor: testOperator)
        #expect(bought.outcome == .purchased)
        #expect(stacks(bought.session) == "[photos, photo]")
        #expect(try await h.purchaseCount() == 1)
        try await h.checkInvariants(id)
    }

    @Test("50 concurrent actions on one session are serialized: versions strictly increase, none lost", arguments: TestStore.all)
    func concurrentActionsOnOneSession(store: TestStore) async throws {
        let h = try await SessionHarness.make(store)
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
        let events = try await h.sessions.events(sessionID: id, limit: 10_000)
        let accepted = events.filter { $0.step == "action" }.count
        let rejected = events.filter { $0.step == "action.rejected" }.count
        #expect(accepted + rejected == 50)
        #expect(try await h.sessions.session(id: id).version == 1 + accepted)
        #expect(Set(versions).count >= accepted)
        try await h.checkInvariants(id)
    }
}

@Suite("One read, one write")
struct OneReadOneWriteTests {
    /// The session as the coordinator reads it for an action (its row, its state decoded).
    static func load(_ id: String, _ h: SessionHarness) async throws -> SessionCoordinator.LoadedSession {
        let snapshot = try await h.test.database.readForAction(ActionRead(
            sessionID: id, facts: FactsWanted(), namedByRow: true, answerKey: nil, answersSince: ""))
        switch try h.sessions.found(snapshot, sessionID: id) {
        case .live(let loaded): return loaded
        case .ended, .missing: throw PhotosError.notFound("session \(id) is not live")
        }
    }

    @Test("a write whose session moved since it was read keeps nothing, and the action is decided again", arguments: TestStore.all)
    func movedSessionWritesNothing(store: TestStore) async throws {
        let h = try await SessionHarness.make(store)
        defer { h.close() }
        let id = try await h.newSession()
        let database = try h.test.database
        // Decide an action on the session as read now…
        let read = try await Self.load(id, h)
        let decision = try SessionMachine.decide(SessionMachine.Input(
            sessionID: id, version: read.version, state: read.state, lastSeq: read.trailSeq,
            action: ClientAction(.selectPhoto, photoId: 1), actor: .client, facts: SessionFacts(now: "2026-11-23T00:00:00.000Z", photos: [1: SessionHarness.photos[0]])))
        let prepared = PreparedWrite(decision, sessionID: id, lastSeq: read.trailSeq, previousHash: read.trailHash)
        // …then let another action move it, and write the first decision as read.
        try await h.act(id, .selectPhoto, photoId: 2)
        let before = try await h.savedState(id)
        let outcome = try await database.writeDecision(
            prepared.write(.update(expectedVersion: read.version, expectedTrailSeq: read.trailSeq), at: "2026-11-23T00:00:00.000Z"))
        #expect(outcome == .moved)
        let after = try await h.savedState(id)
        #expect(after.0 == before.0)
        #expect(after.1 == before.1, "no audit row of the refused write")
        // A rejected action moves no version but appends to the trail: the trail seq guards it.
        let version = try await h.view(id).version
        let rejected = try await h.coordinator.apply(ClientAction(.showTerms), to: id)
        #expect(rejected.error?.code == .actionNotAvailable)
        #expect(try await h.view(id).version == version)
        // The session row carries its trail's head, equal to the trail's last row.
        let head = (try await Self.load(id, h), try await database.read { try await AuditChains.head(of: id, on: $0) })
        #expect(head.0.trailSeq == head.1.seq)
        #expect(head.0.trailHash == head.1.hash)
        try await h.checkInvariants(id)
    }
}

@Suite("Hand-written JSON")
struct HandWrittenJSONTests {
    @Test("escapes as JSON must: quotes, backslashes, control characters; non-ASCII and slashes as they are")
    func escaping() throws {
        let state = SessionState(
            user: SessionUser(id: 7, username: "a\"b\\c\nd\te\u{01}é😀/"), tokenId: 3,
            stacks: [StackState(presentation: .root, presenter: "app", screens: [ScreenState(.photos, owner: "app")])],
            coordinators: CoordinatorState(id: "app", role: .app),
            top: TopScreen(screen: .photos, actions: [.selectPhoto]))
        let decoded = try JSONDecoder().decode(SessionState.self, from: Data(state.jsonText.utf8))
        #expect(decoded == state)
        #expect(state.jsonText.contains(#""username":"a\"b\\c\nd\te\u0001é😀/""#), "\(state.jsonText)")
        expectWritten(state.jsonText, readsBackAs: state)
    }

    @Test("the writer is the only encoder of the state, the session object and the answer: none of their types is Encodable")
    func oneSource() {
        let types: [any Decodable.Type] = [
            SessionState.self, SessionUser.self, StackState.self, ScreenState.self, TopScreen.self, TabsState.self, CoordinatorState.self,
            SessionView.self, ExperimentView.self, StackView.self, TabsView.self, TabItemView.self, PurchasedPhotoView.self, ScreenView.self,
            CoordinatorView.self, ActionResult.self, ActionError.self,
        ]
        for type in types {
            #expect(!(type is any Encodable.Type), "\(type) is Encodable again: a second encoder to keep in step with SessionJSON")
        }
    }
}
