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
        guard case .invalidCredentials? = coordinator.lastError else { Issue.record("\(String(describing: coordinator.lastError))"); return }
        await coordinator.perform(.submit(username: LiveServer.username, password: LiveServer.password))
        await coordinator.perform(.showTerms)
        await coordinator.perform(.cancel)
        await coordinator.perform(.buy)
        let session = try #require(await coordinator.driver.session)
        #expect(coordinator.paths == session.navigation.stacks.map(\.screens))
        #expect(coordinator.paths == [[Screen(.photos), Screen(.photo, photoId: 2, purchased: true)]])
        // A swipe-back: the coordinator popped, the server agrees, nothing is popped twice.
        await coordinator.userSwipedBack()
        #expect(coordinator.paths == [[Screen(.photos)]])
        #expect(try #require(await coordinator.driver.session).navigation.stacks.map(\.screens) == [[Screen(.photos)]])
        #expect(ShopCoordinator.title(of: Screen(.unknown("share"))) == "Update the app to see this")
    }

    @Test("the tabs example sets each tab's stack and the sheets from the target")
    @MainActor
    func tabsExample() async throws {
        let server = try await LiveServer()
        defer { server.stop() }
        let coordinator = TabsCoordinator(server: server.url)
        try await coordinator.start()
        #expect(coordinator.selected == .photos && coordinator.tabPaths[.photos] == [Screen(.photos)])
        try await coordinator.perform(.selectPhoto(3))
        try await coordinator.perform(.buy)
        #expect(coordinator.tabPaths[.photos] == [Screen(.photos), Screen(.photo, photoId: 3, purchased: false), Screen(.signIn)])
        // The user taps the purchases tab: the tab bar switched already; the server follows.
        try await coordinator.userSelected(.purchases)
        #expect(coordinator.selected == .purchases)
        #expect(coordinator.tabPaths[.purchases]?.map(\.name) == [.purchases])
        #expect(coordinator.tabPaths[.photos]?.count == 3, "the photos tab kept as it was left")
        let session = try #require(await coordinator.driver.session)
        #expect(session.navigation.selectedTab == .purchases)
        #expect(coordinator.sheets.isEmpty)
        try await coordinator.perform(.selectTab(.photos))
        #expect(coordinator.selected == .photos && coordinator.tabPaths[.photos]?.last == Screen(.signIn))
    }
}
