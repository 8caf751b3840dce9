import DatabaseAccess
import Navigation
import PhotosCore
import PhotosModel
import PhotosTestSupport
@testable import Sessions
import Testing

/// The action contract (`SessionActions`) as each store keeps it, called directly: what a write
/// refuses keeps nothing, whatever the refusal, and inside `withSessionLocked` a refusal leaves the
/// transaction usable for the next write.
@Suite("The action contract")
struct SessionActionsContractTests {
    /// A decision to select `photo` on the session as read now, ready to write.
    static func prepared(_ id: String, _ h: SessionHarness, photo: Int64 = 1) async throws -> (PreparedWrite, SessionCoordinator.LoadedSession) {
        let read = try await OneReadOneWriteTests.load(id, h)
        let decision = try SessionMachine.decide(SessionMachine.Input(
            sessionID: id, version: read.version, state: read.state, lastSeq: read.trailSeq, action: ClientAction(.selectPhoto, photoId: photo),
            actor: .client, facts: SessionFacts(now: "2026-11-25T00:00:00.000Z", photos: [photo: SessionHarness.photos[Int(photo) - 1]])))
        return (PreparedWrite(decision, sessionID: id, lastSeq: read.trailSeq, previousHash: read.trailHash), read)
    }

    @Test("a write whose assumption no longer holds, or that finds an answer stored, keeps nothing; under the lock a refusal leaves the transaction usable", arguments: TestStore.all)
    func refusalsKeepNothing(store: TestStore) async throws {
        let h = try await SessionHarness.make(store)
        defer { h.close() }
        let database = try h.test.database
        let id = try await h.newSession()
        let alice = try #require(try await h.auth.user(named: "alice")).id
        try await h.buyOutside("alice", photoID: 2)
        let (prepared, read) = try await Self.prepared(id, h)
        let expected = ActionWrite.Kind.update(expectedVersion: read.version, expectedTrailSeq: read.trailSeq)
        let stale = ActionWrite.Assumptions(notBought: .init(userID: alice, photoIDs: [2]))
        let before = try await h.savedState(id)

        // Refused on its own: nothing of it is kept.
        #expect(try await database.writeDecision(prepared.write(expected, at: "2026-11-25T00:00:00.000Z", assumptions: stale)).isStale)
        #expect(try await database.writeDecision(prepared.write(
            .update(expectedVersion: read.version + 1, expectedTrailSeq: read.trailSeq), at: "2026-11-25T00:00:00.000Z")) == .moved)
        let after = try await h.savedState(id)
        #expect(after.0 == before.0 && after.1 == before.1, "no state and no audit row of a refused write")

        // Under the lock: read (the same statement as outside it), refused, then written, in
        // one transaction.
        let locked = try await database.withSessionLocked(id) { actions in
            try await actions.readForAction(ActionRead(
                sessionID: id, facts: FactsWanted(photoIDs: [1], userIDs: [alice]), namedByRow: true, answerKey: nil, answersSince: ""))
        }
        #expect(locked.session?.version == read.version && locked.session?.stateText != nil)
        #expect(locked.photos.map(\.id).contains(1) && (locked.purchases[alice] ?? []).isEmpty, "alice owns photo 2, not 1: \(locked.purchases)")
        let outcomes = try await database.withSessionLocked(id) { actions in
            [
                try await actions.writeDecision(prepared.write(expected, at: "2026-11-25T00:00:00.000Z", assumptions: stale)),
                try await actions.writeDecision(prepared.write(expected, at: "2026-11-25T00:00:00.000Z")),
            ]
        }
        #expect(outcomes.first?.isStale == true)
        #expect(outcomes.last == .written)
        #expect(try await h.view(id).version == read.version + 1)

        // An answer stored under the key: a second write under it is refused (SQLite returns
        // the answer, PostgreSQL calls it stale), and keeps nothing.
        let (next, nextRead) = try await Self.prepared(id, h, photo: 3)
        let answer = AnswerRecord(key: "stored-key", requestHash: "h", response: "{}", createdAt: "2026-11-25T00:00:00.000Z")
        let saved = try await database.withSessionLocked(id) { actions in
            try await actions.writeDecision(next.write(.update(expectedVersion: nextRead.version, expectedTrailSeq: nextRead.trailSeq), at: "2026-11-25T00:00:00.000Z", answer: answer, answersSince: "2026-01-01T00:00:00.000Z"))
        }
        #expect(saved == .written)
        let (again, againRead) = try await Self.prepared(id, h, photo: 1)
        let beforeRetry = try await h.savedState(id)
        let retried = try await database.writeDecision(again.write(
            .update(expectedVersion: againRead.version, expectedTrailSeq: againRead.trailSeq), at: "2026-11-25T00:00:01.000Z",
            answer: AnswerRecord(key: "stored-key", requestHash: "h2", response: "{}", createdAt: "2026-11-25T00:00:01.000Z"),
            answersSince: "2026-01-01T00:00:00.000Z"))
        #expect(retried == .answered(StoredAnswerRecord(requestHash: "h", response: "{}")) || retried.isStale, "\(retried)")
        let afterRetry = try await h.savedState(id)
        #expect(afterRetry.0 == beforeRetry.0 && afterRetry.1 == beforeRetry.1)
        let snapshot = try await database.readForAction(ActionRead(
            sessionID: id, facts: FactsWanted(), namedByRow: true, answerKey: "stored-key", answersSince: "2026-01-01T00:00:00.000Z"))
        #expect(snapshot.answer == StoredAnswerRecord(requestHash: "h", response: "{}"))
        try await h.checkInvariants(id)
    }

    @Test("a read for an action names what it covered: the row's photos, user and token with namedByRow, exactly what was asked without", arguments: TestStore.all)
    func readSaysWhatItCovered(store: TestStore) async throws {
        let h = try await SessionHarness.make(store)
        defer { h.close() }
        let database = try h.test.database
        let id = try await h.newSession()
        try await h.act(id, .selectPhoto, photoId: 3)
        let byRow = try await database.readForAction(ActionRead(
            sessionID: id, facts: FactsWanted(photoIDs: [1]), namedByRow: true, answerKey: nil, answersSince: ""))
        #expect(byRow.covered.photoIDs == [1, 3])
        #expect(Set(byRow.photos.map(\.id)) == [1, 3])
        let state = try #require(byRow.session?.stateText)
        #expect(state.contains("\"photoId\":3"))
        let exact = try await database.readForAction(ActionRead(
            sessionID: id, facts: FactsWanted(photoIDs: [2]), answerKey: nil, answersSince: ""))
        #expect(exact.covered.photoIDs == [2] && exact.photos.map(\.id) == [2], "without namedByRow, only the facts asked for")
        #expect(exact.session?.version == byRow.session?.version && exact.session?.stateText == state)
        let missing = try await database.readForAction(ActionRead(
            sessionID: "no-such-session", facts: FactsWanted(photoIDs: [2]), namedByRow: true, answerKey: nil, answersSince: ""))
        #expect(missing.session == nil && missing.photos.map(\.id) == [2], "facts are read for a session that does not exist (creation)")
    }
}
