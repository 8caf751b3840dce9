import Foundation
import PhotosClient
import Testing

/// A session the server ended (idle past `sessions.idleExpirySeconds`) reaches an app as its own
/// error, on an action and on a refresh; a new session works.
@Suite("PhotosClient: an ended session", .serialized)
struct SessionExpiryClientTests {
    @Test("an idle session's next action and refresh throw sessionExpired; a new one can start")
    func sessionExpired() async throws {
        let server = try await LiveServer(environment: ["PHOTOSD_SESSIONS_IDLE_EXPIRY_SECONDS": "1"])
        defer { server.stop() }
        let driver = server.driver()
        try await driver.start()
        try await Task.sleep(for: .milliseconds(1_500))
        do {
            _ = try await driver.send(.back)
            Issue.record("an action on an ended session went through")
        } catch {
            guard case .sessionExpired(let message) = error else { Issue.record("expected sessionExpired, got \(error)"); return }
            #expect(message.contains("ended"))
        }
        do {
            _ = try await driver.refresh()
            Issue.record("a refresh of an ended session went through")
        } catch {
            guard case .sessionExpired = error else { Issue.record("expected sessionExpired, got \(error)"); return }
        }
        // A new session starts. (Not used further: with a 1 s expiry, a busy machine could let
        // it end too before the next request.)
        let ended = await driver.session?.id
        try await driver.start()
        let fresh = await driver.session?.id
        #expect(fresh != nil && fresh != ended)
    }
}
