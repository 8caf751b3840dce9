import Foundation
import PhotosClient
import PhotosTestSupport
import Testing

/// docs/client.md's example coordinator is this package's code, and it works.
@Suite("PhotosClient: the example in docs/client.md")
struct ReadmeExampleTests {
    static func block(in text: String, from begin: String, to end: String) -> String? {
        guard let start = text.range(of: begin), let stop = text.range(of: end, range: start.upperBound..<text.endIndex) else { return nil }
        return String(text[start.upperBound..<stop.lowerBound]).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("docs/client.md shows ReadmeExample.swift's coordinator, word for word")
    func sameCode() throws {
        let root = BuiltProducts.packageRoot
        let readme = try String(contentsOfFile: root + "/docs/client.md", encoding: .utf8)
        let source = try String(contentsOfFile: root + "/Tests/PhotosClientTests/ReadmeExample.swift", encoding: .utf8)
        let shown = try #require(Self.block(in: readme, from: "<!-- example: Tests/PhotosClientTests/ReadmeExample.swift -->\n```swift", to: "```"))
        let compiled = try #require(Self.block(in: source, from: "// README example begin", to: "// README example end"))
        #expect(shown == compiled)
    }

    @Test("the example coordinator follows the server through a purchase")
    @MainActor
    func followsTheServer() async throws {
        let server = try await LiveServer()
        defer { server.stop() }
        let coordinator = ShopCoordinator(server: server.url)
        try await coordinator.start(at: "/photos/2")
        await coordinator.perform(.buy)
        await coordinator.perform(.submit(username: LiveServer.username, password: "wrong"))
        #expect(coordinator.lastError == .invalidCredentials(message: "wrong username or password"))
        await coordinator.perform(.submit(username: LiveServer.username, password: LiveServer.password))
        await coordinator.perform(.showTerms)
        await coordinator.perform(.cancel)
        await coordinator.perform(.buy)
        let session = try #require(await coordinator.driver.session)
        #expect(coordinator.paths == session.navigation.map(\.screens))
        #expect(coordinator.paths == [[Screen(screen: .photos), Screen(screen: .photo, photoId: 2, purchased: true)]])
    }
}
