import AuditTrail
import DatabaseAccess
import Navigation
import PhotosCore
import PhotosModel
import PhotosTestSupport
@testable import Sessions
import Testing

/// On SQLite an action on a state and facts this process knows is decided without a read, and
/// the writer's transaction checks what was assumed (`SQLiteSessionActions.writeDecision`). PostgreSQL's
/// form, with its round trips counted, is in `PostgresRoundTripTests`.
@Suite("Known facts on SQLite")
struct KnownFactsTests {
    @Test("an action on what this process knows is the write alone; what changed elsewhere is read and decided again")
    func writeAloneOnKnownFacts() async throws {
        let h = try await SessionHarness.make(.sqlite)
        defer { h.close() }
        let test = try h.test
        let (first, second) = (try h.sessions, try test.sessions(auth: try h.auth))
        let writer = try #require(test.database as? any GroupCommitStore)
        /// The result of `apply` on `coordinator`, the writes it committed, and whether it wrote
        /// on known facts (`held`), tried and was refused (`refused`), or read first (neither).
        func counted(
            _ coordinator: SessionCoordinator, _ action: ClientAction, on id: String, key: String? = nil
        ) async throws -> (result: ActionResult, writes: Int, held: Bool, refused: Bool) {
            let before = (coordinator.known.counts, writer.writerStatistics.requests)
            let result = try await coordinator.apply(action, to: id, expectVersion: nil, idempotencyKey: key, actor: .client)
            let after = (coordinator.known.counts, writer.writerStatistics.requests)
            #expect(result.error == nil, "\(action.name): \(String(describing: result.error))")
            return (result, after.1 - before.1, after.0.held > before.0.held, after.0.refused > before.0.refused)
        }
        let id = try await first.createSession(layout: .stack, link: nil, actor: .client).session.id
        // Photo 3 is not known here yet: read, then write. Then it is: the write alone.
        let unknown = try await counted(first, ClientAction(.selectPhoto, photoId: 3), on: id)
        #expect(unknown.writes == 1 && !unknown.held && !unknown.refused)
        #expect(try await counted(first, ClientAction(.back), on: id).held)
        let viewed = try await counted(first, ClientAction(.selectPhoto, photoId: 3), on: id)
        #expect(viewed.writes == 1 && viewed.held)
        #expect(viewed.result.session.navigation.first?.screens.last?.purchased == false)

        // Another coordinator (another process on the file) moves the session: the write keeps
        // nothing, the read and the write follow.
        _ = try await second.apply(ClientAction(.back), to: id)
        let afterMove = try await counted(first, ClientAction(.selectPhoto, photoId: 3), on: id)
        #expect(afterMove.writes == 1 && afterMove.refused, "the refused write rolled back, then the read and one write")
        #expect(afterMove.result.session.navigation.first?.screens.map(\.screen) == [.photos, .photo])
        #expect(afterMove.result.session.version == 6)

        // Signed in (a credential check: the usual way); then the photo is bought elsewhere.
        _ = try await first.apply(ClientAction(.back), to: id)
        _ = try await first.apply(ClientAction(.signIn), to: id)
        _ = try await first.apply(ClientAction(.submit, username: "alice", password: SessionHarness.password), to: id)
        #expect(try await counted(first, ClientAction(.selectPhoto, photoId: 3), on: id).held)
        #expect(try await counted(first, ClientAction(.back), on: id).held)
        try await h.buyOutside("alice", photoID: 3)
        let owned = try await counted(first, ClientAction(.selectPhoto, photoId: 3), on: id)
        #expect(owned.refused && !owned.held)
        #expect(owned.result.session.navigation.first?.screens.last?.purchased == true)
        // Now known to be bought: the write alone again.
        #expect(try await counted(first, ClientAction(.back), on: id).held)
        let ownedAgain = try await counted(first, ClientAction(.selectPhoto, photoId: 3), on: id)
        #expect(ownedAgain.held && ownedAgain.result.session.navigation.first?.screens.last?.purchased == true)

        // The token is revoked elsewhere: the write refuses the token assumed live; the session is signed out.
        try await h.signOutEverywhere("alice")
        let signedOut = try await counted(first, ClientAction(.back), on: id)
        #expect(signedOut.refused)
        #expect(signedOut.result.session.user == nil)
        #expect(try await test.sessions(auth: try h.auth).session(id: id).user == nil)

        // A retry of an answer the other coordinator stored, reaching this one while it holds an
        // older state: the writer's transaction finds the stored answer and returns it, writing
        // nothing.
        let answered = try await second.apply(ClientAction(.selectPhoto, photoId: 3), to: id, expectVersion: nil, idempotencyKey: "k-1", actor: .client)
        _ = try await second.apply(ClientAction(.back), to: id, expectVersion: nil, idempotencyKey: "k-2", actor: .client)
        let newest = try await first.session(id: id)
        let retried = try await counted(first, ClientAction(.selectPhoto, photoId: 3), on: id, key: "k-1")
        #expect(retried.result.session == answered.session)
        #expect(retried.writes == 1 && !retried.held && !retried.refused, "one write request, which wrote nothing")
        #expect(try await first.session(id: id).version == newest.version)
        let verification = try await test.database.read { try await AuditChains.verify(on: $0, publicKey: nil) }
        #expect(verification.isIntact, "\(String(describing: verification.problem))")
    }

    @Test("a tabs session too: the purchase list known is assumed by its length; a purchase elsewhere is read again, one here is added")
    func tabsOnKnownFacts() async throws {
        let h = try await SessionHarness.make(.sqlite)
        defer { h.close() }
        let coordinator = try h.sessions
        func apply(_ action: ClientAction, _ id: String) async throws -> (result: ActionResult, held: Bool, refused: Bool) {
            let before = coordinator.known.counts
            let result = try await coordinator.apply(action, to: id, expectVersion: nil, idempotencyKey: nil, actor: .client)
            let after = coordinator.known.counts
            #expect(result.error == nil, "\(action.name): \(String(describing: result.error))")
            return (result, after.held > before.held, after.refused > before.refused)
        }
        func listed(_ result: ActionResult) -> [Int64]? {
            result.session.tabs?.items.first { $0.tab == .purchases }?.screens.first?.photos?.map(\.id)
        }
        let id = try await h.newSession(layout: .tabs)
        try await h.signIn(id)
        // The list was read with the sign-in (a credential check: the usual way), and is known since.
        let known = try await apply(ClientAction(.selectTab, tab: .purchases), id)
        #expect(known.held && listed(known.result) == [])
        // Bought elsewhere: the write finds the list longer than assumed, and the read lists it.
        try await h.buyOutside("alice", photoID: 2)
        let elsewhere = try await apply(ClientAction(.selectTab, tab: .photos), id)
        #expect(elsewhere.refused && !elsewhere.held)
        #expect(listed(elsewhere.result) == [2])
        // Bought here: added to the list known, newest first, and the next action is the write alone.
        _ = try await apply(ClientAction(.selectPhoto, photoId: 3), id)
        #expect(try await apply(ClientAction(.buy), id).held)
        let bought = try await apply(ClientAction(.buy), id)
        #expect(bought.held && bought.result.outcome == .purchased)
        #expect(listed(bought.result) == [3, 2])
        let shown = try await apply(ClientAction(.selectTab, tab: .purchases), id)
        #expect(shown.held && shown.result.session.navigation.first?.screens.first?.photos?.map(\.id) == [3, 2])
        let verification = try await h.test.database.read { try await AuditChains.verify(on: $0, publicKey: nil) }
        #expect(verification.isIntact)
    }
}
