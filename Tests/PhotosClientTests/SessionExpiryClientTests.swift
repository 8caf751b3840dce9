import Foundation
import PhotosClient
import Testing

/// A session the server ended (idle past `sessions.idleExpirySeconds`) reaches an app as its own
/// error, on an action and on a refresh; a new session works.
@Suite("PhotosClient: an ended session", .serialized)
struct SessionExpiryClientTests {
    @Test("an idle session's next action and refresh throw sessionExpired; a new session goes on")
    func sessionExpired() async throws {
        let server = try await LiveServer(environment: ["PHOTOSD_SESSIONS_IDLE_EXPIRY_SECONDS": "1"])
        defer { server.stop() }
        let driver = server.driver()
        try await driver.start()
        _ = try await driver.send(.selectPhoto(1))
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
        try await driver.start()
        #expect(try await driver.send(.selectPhoto(2)).commands.count == 1)
    }
}
