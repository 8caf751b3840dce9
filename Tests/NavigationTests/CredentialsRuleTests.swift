import Foundation
import Navigation
import PhotosClientTesting
import PhotosModel
import Testing

/// One rule says when a submit needs its credentials checked before the core decides
/// (`SessionMachine.needsCredentials`); the session coordinator and the in-memory world both
/// ask it, and `decide` refuses a submit whose caller did not.
@Suite("The credentials rule")
struct CredentialsRuleTests {
    @Test("a submit on the sign-in screen needs them; anything else does not; decide without them throws")
    func oneRule() async throws {
        let world = try InMemorySessions(photos: [Photo(id: 1, title: "Sunset", url: "", priceCents: 250)], users: ["alice": "correct horse"], clock: Date())
        let id = try await world.createSession(layout: .stack, link: nil, actor: .client).session.id
        let submit = ClientAction(.submit, username: "alice", password: "correct horse")
        let onPhotos = try await world.savedState(id)
        #expect(!SessionMachine.needsCredentials(state: onPhotos, action: submit))
        _ = try await world.apply(ClientAction(.selectPhoto, photoId: 1), to: id, expectVersion: nil, idempotencyKey: nil, actor: .client)
        _ = try await world.apply(ClientAction(.buy), to: id, expectVersion: nil, idempotencyKey: nil, actor: .client)
        let onSignIn = try await world.savedState(id)
        #expect(onSignIn.topScreen?.screen == .signIn)
        #expect(SessionMachine.needsCredentials(state: onSignIn, action: submit))
        #expect(!SessionMachine.needsCredentials(state: onSignIn, action: ClientAction(.cancel)))
        // The round's one question says the same, and what to read once they are checked.
        #expect(SessionMachine.needs(state: onSignIn, action: submit).credentials)
        #expect(!SessionMachine.needs(state: onPhotos, action: submit).credentials)
        #expect(!SessionMachine.needs(state: onSignIn, action: ClientAction(.cancel)).credentials)
        let afterCheck = SessionMachine.needs(state: onSignIn, action: submit, signingIn: 7)
        #expect(afterCheck.credentials && afterCheck.mayIssueToken && afterCheck.userIDs.contains(7))
        let input = SessionMachine.Input(
            sessionID: id, version: 3, state: onSignIn, lastSeq: 0, action: submit, actor: .client,
            facts: SessionFacts(now: ISO8601Timestamp.string(from: Date()), credentials: nil))
        #expect(throws: CredentialsNotChecked.self) { try SessionMachine.decide(input) }
        // The world asks the rule, checks, and signs in.
        let signedIn = try await world.apply(submit, to: id, expectVersion: nil, idempotencyKey: nil, actor: .client)
        #expect(signedIn.outcome == .signedIn)
    }
}
