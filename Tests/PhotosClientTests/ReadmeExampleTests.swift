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
        await coordinator.perform(.selectPhoto(3))
        await coordinator.perform(.buy)
        #expect(coordinator.tabPaths[.photos] == [Screen(.photos), Screen(.photo, photoId: 3, purchased: false), Screen(.signIn)])
        // The user taps the purchases tab: the tab bar switched already; the server follows.
        await coordinator.userSelected(.purchases)
        #expect(coordinator.selected == .purchases)
        #expect(coordinator.tabPaths[.purchases]?.map(\.name) == [.purchases])
        #expect(coordinator.tabPaths[.photos]?.count == 3, "the photos tab kept as it was left")
        let session = try #require(await coordinator.driver.session)
        #expect(session.navigation.selectedTab == .purchases)
        #expect(coordinator.sheets.isEmpty)
        await coordinator.perform(.selectTab(.photos))
        #expect(coordinator.selected == .photos && coordinator.tabPaths[.photos]?.last == Screen(.signIn))
    }

    /// A second device on the session of `driver`.
    static func secondDevice(of driver: NavigationDriver, on server: LiveServer) async throws -> NavigationDriver {
        let tablet = server.driver()
        try await tablet.attach(sessionID: try #require(await driver.sessionID), secret: try #require(await driver.sessionSecret))
        return tablet
    }

    /// The session's navigation on the server now.
    static func onServer(_ tablet: NavigationDriver) async throws -> NavigationState {
        _ = try await tablet.refresh()
        return try #require(await tablet.session).navigation
    }

    @Test("the stack example under races with a second device: a swipe-back and an action on a stale version end on the server's screens; errors clear on success")
    @MainActor
    func stackExampleRaces() async throws {
        let server = try await LiveServer()
        defer { server.stop() }
        let coordinator = ShopCoordinator(server: server.url)
        try await coordinator.start(at: "/photos/2")
        let tablet = try await Self.secondDevice(of: coordinator.driver, on: server)
        // The tablet pushes sign-in; the phone's user swipes back from the photo meanwhile.
        _ = try await tablet.send(.buy)
        await coordinator.userSwipedBack()
        guard case .versionConflict? = coordinator.lastError else { Issue.record("\(String(describing: coordinator.lastError))"); return }
        var serverState = try await Self.onServer(tablet)
        #expect(serverState.stacks.map(\.screens) == [[Screen(.photos), Screen(.photo, photoId: 2, purchased: false), Screen(.signIn)]])
        #expect(coordinator.paths == serverState.stacks.map(\.screens), "the app shows \(coordinator.paths)")
        // The tablet goes back; the phone's cancel goes on a stale version: caught up again.
        _ = try await tablet.send(.back)
        await coordinator.perform(.cancel)
        serverState = try await Self.onServer(tablet)
        #expect(coordinator.paths == serverState.stacks.map(\.screens))
        // The next action succeeds, and the error is gone.
        await coordinator.perform(.buy)
        #expect(coordinator.lastError == nil)
        #expect(coordinator.paths == (try await Self.onServer(tablet)).stacks.map(\.screens))
        // A swipe-back that goes through.
        await coordinator.userSwipedBack()
        #expect(coordinator.lastError == nil && coordinator.paths == [[Screen(.photos), Screen(.photo, photoId: 2, purchased: false)]])
        #expect(coordinator.paths == (try await Self.onServer(tablet)).stacks.map(\.screens))
    }

    @Test("the stack example's launch: the kept session on its screens; a kept session that cannot go on starts over")
    @MainActor
    func stackExampleLaunch() async throws {
        let server = try await LiveServer()
        defer { server.stop() }
        let state = try TemporaryDirectory()
        defer { state.remove() }
        let store = FileSessionStore(path: state.file("session.json"))
        let first = ShopCoordinator(server: server.url, store: store)
        try await first.launch()
        #expect(first.paths == [[Screen(.photos)]])
        await first.perform(.selectPhoto(4))
        await first.perform(.buy)
        let relaunched = ShopCoordinator(server: server.url, store: store)
        try await relaunched.launch()
        #expect(relaunched.paths == first.paths && relaunched.paths.flatMap { $0 }.count == 3)
        var kept = try #require(try store.load())
        kept.secret = String(repeating: "y", count: 43)
        try store.save(kept)
        let afterLoss = ShopCoordinator(server: server.url, store: store)
        try await afterLoss.launch()
        #expect(afterLoss.paths == [[Screen(.photos)]])
        #expect(try store.load()?.id != kept.id)
    }

    @Test("the tabs example under races: a tab tapped under a sheet is refused and put back; an action on a stale version shows the server's tabs")
    @MainActor
    func tabsExampleRaces() async throws {
        let server = try await LiveServer(experiments: [("buy.presentation", "push:0,modal:1")])
        defer { server.stop() }
        let coordinator = TabsCoordinator(server: server.url)
        try await coordinator.start()
        let tablet = try await Self.secondDevice(of: coordinator.driver, on: server)
        func matchesServer() async throws {
            let now = try await Self.onServer(tablet)
            #expect(coordinator.selected == now.selectedTab)
            #expect(coordinator.sheets == now.modals.map(\.screens))
            #expect(coordinator.tabPaths[now.selectedTab ?? .photos] == now.root)
        }
        await coordinator.perform(.selectPhoto(3))
        await coordinator.perform(.buy)
        #expect(coordinator.sheets.count == 1, "the buy flow as a sheet")
        await coordinator.userSelected(.purchases)
        #expect(coordinator.lastError != nil, "a tab under a sheet was taken")
        #expect(coordinator.selected == .photos)
        try await matchesServer()
        // The tablet ends the flow and switches tabs; the phone acts on what it last saw.
        _ = try await tablet.send(.cancel)
        _ = try await tablet.send(.selectTab(.purchases))
        await coordinator.perform(.cancel)
        guard case .versionConflict? = coordinator.lastError else { Issue.record("\(String(describing: coordinator.lastError))"); return }
        try await matchesServer()
        #expect(coordinator.selected == .purchases)
        await coordinator.userSelected(.photos)
        #expect(coordinator.lastError == nil)
        try await matchesServer()
    }

    @Test("the SwiftUI example's levels: the terms sheet over a purchase shown as a sheet is level 2's; swiped down alone and with the sheet under it, raced by a second device, the app ends on the server's screens")
    @MainActor
    func sheetOverSheet() async throws {
        let server = try await LiveServer()
        defer { server.stop() }
        // What StackLevel's bindings call, level by level (SwiftUI itself runs on Apple's systems).
        let model = NavigationModel(driver: server.driver())
        await model.start()
        let tablet = try await Self.secondDevice(of: model.driver, on: server)
        func matchesServer() async throws {
            let now = try await Self.onServer(tablet)
            #expect(model.state == now, "the app shows \(model.state.stacks.map(\.screens)), the server \(now.stacks.map(\.screens))")
        }
        func levels() -> [[Screen]] {
            var shown: [[Screen]] = []
            var level = 0
            while true {
                shown.append((model.root(at: level).map { [$0] } ?? []) + model.path(at: level))
                guard model.isSheetShown(over: level) else { return shown }
                level += 1
            }
        }
        await model.send(.buyPhoto(3))  // sign-in, presented as a sheet
        await model.send(.submit(username: LiveServer.username, password: LiveServer.password))
        await model.send(.showTerms)
        #expect(model.lastError == nil)
        #expect(levels() == [[Screen(.photos)], [Screen(.buy, photoId: 3, purchased: false)], [Screen(.terms)]], "\(levels())")
        // A sheet's bindings may be read while it goes away: nothing there, no trap.
        #expect(model.path(at: 3) == [] && model.root(at: 3) == nil && !model.isSheetShown(over: 3))
        try await matchesServer()

        // The tablet dismisses the terms while the phone's user swipes them down: one of the
        // two is a version conflict (or refused), and the phone shows the server's screens.
        _ = try await tablet.send(.dismiss)
        model.sheetDismissed(over: 1)
        await model.settle()
        #expect(levels() == [[Screen(.photos)], [Screen(.buy, photoId: 3, purchased: false)]], "\(levels())")
        try await matchesServer()

        // The tablet shows the terms again; the phone, which did not follow, swipes down the
        // purchase sheet it shows: stale, caught up to the server's three levels.
        _ = try await tablet.send(.showTerms)
        model.sheetDismissed(over: 0)
        await model.settle()
        #expect(model.lastError != nil, "a dismiss on a stale version was taken")
        #expect(levels().count == 3, "\(levels())")
        try await matchesServer()

        // Now swiped down from level 0 with the terms over it: SwiftUI dismisses both sheets,
        // the model sends two dismisses, top first.
        model.sheetDismissed(over: 0)
        await model.settle()
        #expect(model.lastError == nil, "\(String(describing: model.lastError))")
        #expect(levels() == [[Screen(.photos)]], "\(levels())")
        try await matchesServer()
        #expect(try #require(await tablet.session).generated.coordinators?.children.isEmpty == true, "the purchase flow ended")
    }
}
