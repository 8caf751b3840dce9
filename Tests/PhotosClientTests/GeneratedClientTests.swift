import Foundation
import OpenAPIRuntime
import OpenAPIURLSession
import PhotosClient
import Testing

/// The generated client, with the generator's default date transcoder, decodes every answer
/// photosd gives: each operation, its successes and its errors, none undocumented.
@Suite("PhotosClient: the generated client decodes every answer")
struct GeneratedClientTests {
    @Test("every operation, with its dates, its errors and a bearer token")
    func everyOperation() async throws {
        let server = try await LiveServer()
        defer { server.stop() }
        let client = Client(serverURL: server.url, transport: URLSessionTransport())
        guard case .ok(let health) = try await client.health() else { Issue.record("health"); return }
        #expect(try health.body.json.status == .ok)

        // The token API: expiresAt is a date-time a default decoder reads.
        let signedIn = try await client.signIn(body: .json(.init(username: LiveServer.username, password: LiveServer.password)))
        guard case .ok(let tokenAnswer) = signedIn else { Issue.record("sign-in: \(signedIn)"); return }
        let grant = try tokenAnswer.body.json
        #expect(grant.expiresAt > Date(), "expiresAt decoded as a Date in the future")
        #expect(grant.user.username == LiveServer.username)
        guard case .unauthorized(let refused) = try await client.signIn(body: .json(.init(username: LiveServer.username, password: "nope"))) else {
            Issue.record("wrong password"); return
        }
        #expect(try refused.body.json.error.code.value1 == .invalid_credentials)

        // A purchase through a session, then the bearer's purchases: purchasedAt decodes too.
        let driver = NavigationDriver(serverURL: server.url)
        try await driver.start(link: "/photos/4/buy")
        let signedInStep = try await driver.send(.submit(username: LiveServer.username, password: LiveServer.password))
        let token = try #require(signedInStep.token)
        _ = try await driver.send(.buy)
        let authorized = Client(serverURL: server.url, transport: URLSessionTransport(), middlewares: [BearerTokenMiddleware(token: token)])
        guard case .ok(let purchases) = try await authorized.myPurchases() else { Issue.record("purchases"); return }
        let purchase = try #require(try purchases.body.json.purchases.first)
        #expect(purchase.photoId == 4)
        #expect(abs(purchase.purchasedAt.timeIntervalSinceNow) < 600)
        guard case .ok(let photos) = try await authorized.listPhotos(query: .init(after: 0, limit: 2)) else { Issue.record("photos"); return }
        let page = try photos.body.json
        #expect(page.photos.count == 2 && page.nextAfter == 2)
        guard case .ok(let one) = try await authorized.getPhoto(path: .init(photoId: 4)) else { Issue.record("photo 4"); return }
        #expect(try one.body.json.purchased == true)
        guard case .notFound(let missing) = try await client.getPhoto(path: .init(photoId: 999)) else { Issue.record("photo 999"); return }
        #expect(try missing.body.json.error.code.value1 == .not_found)
        guard case .ok = try await authorized.signOut() else { Issue.record("sign-out"); return }
        guard case .unauthorized = try await authorized.myPurchases() else { Issue.record("purchases after sign-out"); return }

        // Sessions: created, read, acted on, its events; errors typed by status.
        guard case .created(let created) = try await client.createSession(body: .json(.init(layout: .init(value1: .tabs)))) else { Issue.record("create"); return }
        #expect(created.headers.Location?.hasPrefix("/v1/sessions/") == true)
        let session = try created.body.json.value1
        let secret = try created.body.json.value2.sessionSecret
        guard case .badRequest = try await client.createSession(body: .json(.init(layout: .init(value1: .stack), link: "/purchases"))) else { Issue.record("bad link"); return }
        // The id alone is 401; with the secret (SessionSecretMiddleware) the session answers.
        guard case .unauthorized = try await client.getSession(path: .init(id: session.id)) else { Issue.record("get without the secret"); return }
        let credential = SessionSecretMiddleware(secret: "not-this-sessions")
        let owner = Client(serverURL: server.url, transport: URLSessionTransport(), middlewares: [credential])
        guard case .unauthorized = try await owner.act(path: .init(id: session.id), body: .json(.init(action: .init(value1: .buy)))) else { Issue.record("another secret"); return }
        credential.set(secret)
        guard case .ok = try await owner.getSession(path: .init(id: session.id)) else { Issue.record("get"); return }
        // A session that does not exist is answered as a wrong secret (no oracle for ids).
        guard case .unauthorized = try await owner.getSession(path: .init(id: "no-such-session")) else { Issue.record("missing session"); return }
        guard case .conflict(let conflict) = try await owner.act(path: .init(id: session.id), body: .json(.init(action: .init(value1: .buy)))) else {
            Issue.record("not available"); return
        }
        #expect(try conflict.body.json.error.allowed?.contains { $0.value1 == .selectTab } == true)
        guard case .ok(let events) = try await owner.sessionEvents(path: .init(id: session.id), query: .init(after: 0, limit: 10)) else {
            Issue.record("events"); return
        }
        #expect(try events.body.json.events.first?.step == "session.start")
        guard case .notFound = try await owner.sessionEvents(path: .init(id: "api")) else { Issue.record("reserved trail"); return }
    }
}
