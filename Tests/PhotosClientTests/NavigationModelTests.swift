import Foundation
import Observation
import OpenAPIRuntime
import HTTPTypes
import PhotosClient
import PhotosClientTesting
import PhotosTestSupport
import Synchronization
import Testing

/// `NavigationModel` on Linux, against a real photosd: the server's navigation in `state` and
/// the paths; what the system does on screen, written into them, goes to the server as
/// `userDid`; a refused gesture is put back; a change made elsewhere is observed.
@Suite("PhotosClient: NavigationModel")
@MainActor
struct NavigationModelTests {
    /// The server's stacks for the model's session, read by a driver of its own.
    func serverStacks(_ model: NavigationModel, on server: LiveServer) async throws -> [[Screen]] {
        let reader = server.driver()
        let id = try #require(await model.driver.sessionID)
        let secret = try #require(await model.driver.sessionSecret)
        return try await reader.attach(sessionID: id, secret: secret).navigation.stacks.map(\.screens)
    }

    @Test("send shows the server's answer in state and path; a swipe-back written into path is userDid(.back); a push written by the app is put back")
    func stackPaths() async throws {
        let server = try await LiveServer()
        defer { server.stop() }
        let model = NavigationModel(driver: server.driver())
        await model.start()
        #expect(model.roots == [Screen(.photos)] && model.path.isEmpty && model.lastError == nil)
        await model.send(.selectPhoto(2))
        #expect(model.path == [Screen(.photo, photoId: 2, purchased: false)])
        await model.send(.buy)
        #expect(model.path.map(\.name) == [.photo, .signIn])
        // Long-press back to the root: two screens gone, two backs, nothing popped twice.
        model.path = []
        #expect(model.path.isEmpty, "the gesture shows at once")
        await model.settle()
        #expect(model.path.isEmpty && model.lastError == nil)
        #expect(try await serverStacks(model, on: server) == [[Screen(.photos)]])
        // The app cannot push on its own: the server decides.
        model.path = [Screen(.photo, photoId: 4)]
        #expect(model.path.isEmpty)
        await model.settle()
        #expect(try await serverStacks(model, on: server) == [[Screen(.photos)]])
        // An action the screen does not offer: lastError, cleared by the next success.
        await model.send(.cancel)
        guard case .actionNotAvailable? = model.lastError else { Issue.record("\(String(describing: model.lastError))"); return }
        await model.send(.selectPhoto(1))
        #expect(model.lastError == nil && model.path.count == 1)
    }

    @Test("a sheet: paths has its stack; writing it away is userDid(.dismiss); a tab tapped under a sheet is refused and put back; a tab tapped is userDid(.selectTab)")
    func sheetsAndTabs() async throws {
        let server = try await LiveServer(experiments: [("buy.presentation", "push:0,modal:1")])
        defer { server.stop() }
        let model = NavigationModel(driver: server.driver())
        await model.start(layout: .tabs)
        #expect(model.selectedTab == .photos)
        await model.send(.selectPhoto(3))
        await model.send(.buy)
        #expect(model.paths.count == 2, "the buy flow is a sheet: \(model.state)")
        // The tab bar is tapped while the sheet is up: the server refuses; the model shows its
        // screens again (photos, with the sheet).
        model.selectedTab = .purchases
        #expect(model.selectedTab == .purchases)
        await model.settle()
        #expect(model.lastError != nil)
        #expect(model.selectedTab == .photos && model.paths.count == 2, "\(model.state)")
        #expect(try await serverStacks(model, on: server) == model.state.stacks.map(\.screens))
        // Swiped down.
        model.paths = [model.paths[0]]
        await model.settle()
        #expect(model.paths.count == 1 && model.lastError == nil, "\(String(describing: model.lastError))")
        #expect(try await serverStacks(model, on: server) == model.state.stacks.map(\.screens))
        model.selectedTab = .purchases
        await model.settle()
        #expect(model.selectedTab == .purchases && model.roots.map { $0?.name } == [.purchases])
        #expect(try await serverStacks(model, on: server) == model.state.stacks.map(\.screens))
    }

    @Test("follow: a change made on another device shows in state, and observers hear it")
    func followsChanges() async throws {
        let server = try await LiveServer()
        defer { server.stop() }
        let model = NavigationModel(driver: server.driver())
        await model.start()
        let tablet = server.driver()
        try await tablet.attach(sessionID: try #require(await model.driver.sessionID), secret: try #require(await model.driver.sessionSecret))
        let heard = Mutex(false)
        withObservationTracking { _ = model.state } onChange: { heard.withLock { $0 = true } }
        let following = Task { await model.follow() }
        defer { following.cancel() }
        try await Task.sleep(for: .milliseconds(200))
        _ = try await tablet.send(.selectPhoto(5))
        let deadline = ContinuousClock.now + .seconds(20)
        while model.path != [Screen(.photo, photoId: 5, purchased: false)], ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(model.path == [Screen(.photo, photoId: 5, purchased: false)])
        #expect(heard.withLock { $0 }, "observers were not told")
        // And the model's own next action goes on from the version the feed brought.
        await model.send(.back)
        #expect(model.lastError == nil && model.path.isEmpty)
    }

    @Test("resume: a model over a store resumes the kept session on its screens, or starts over when it cannot")
    func resumeOrStartOver() async throws {
        let server = try await LiveServer()
        defer { server.stop() }
        let state = try TemporaryDirectory()
        defer { state.remove() }
        let store = FileSessionStore(path: state.file("session.json"))
        let first = NavigationModel(driver: NavigationDriver(serverURL: server.url, store: store))
        await first.resume()  // nothing kept: starts over
        #expect(first.roots == [Screen(.photos)] && first.lastError == nil)
        await first.send(.selectPhoto(2))
        let relaunched = NavigationModel(driver: NavigationDriver(serverURL: server.url, store: store))
        await relaunched.resume()
        #expect(relaunched.path == [Screen(.photo, photoId: 2, purchased: false)])
        #expect(await relaunched.driver.sessionID == (await first.driver.sessionID))
    }

    @Test("resume(layout:): with nothing kept a tabs app starts a tabs session; a kept session resumes in its own layout")
    func resumeInLayout() async throws {
        let server = try await LiveServer()
        defer { server.stop() }
        let state = try TemporaryDirectory()
        defer { state.remove() }
        let store = FileSessionStore(path: state.file("session.json"))
        let tabs = NavigationModel(driver: NavigationDriver(serverURL: server.url, store: store))
        await tabs.resume(layout: .tabs)
        #expect(tabs.lastError == nil && tabs.selectedTab == .photos && tabs.session?.layout == .tabs)
        let relaunched = NavigationModel(driver: NavigationDriver(serverURL: server.url, store: store))
        await relaunched.resume(layout: .stack)
        let (kept, first) = (await relaunched.driver.sessionID, await tabs.driver.sessionID)
        #expect(relaunched.session?.layout == .tabs && kept == first)
    }

    @Test("a push the app writes into path is put back, and an observer of the path hears it (Swift 6.2's @Observable skips an assignment of the same value)")
    func pushedPathObserved() async throws {
        let server = try await LiveServer()
        defer { server.stop() }
        let model = NavigationModel(driver: server.driver())
        await model.start()
        let heard = Mutex(false)
        withObservationTracking { _ = model.path } onChange: { heard.withLock { $0 = true } }
        model.path = [Screen(.photo, photoId: 4)]
        #expect(heard.withLock { $0 }, "the view holding the pushed screen was not told to read the path again")
        #expect(model.path.isEmpty)
        await model.settle()
        #expect(try await serverStacks(model, on: server) == [[Screen(.photos)]])
    }

    @Test("send returns the step: purchased, then already owned; a sign-in's token; lastStep keeps it, nil after a failure")
    func stepsOfSend() async throws {
        let server = try await LiveServer()
        defer { server.stop() }
        let model = NavigationModel(driver: server.driver())
        await model.start()
        await model.send(.selectPhoto(1))
        await model.send(.buy)
        let signedIn = await model.send(.submit(username: LiveServer.username, password: LiveServer.password))
        #expect(signedIn?.outcome == .signedIn && signedIn?.token?.isEmpty == false, "\(String(describing: signedIn?.outcome))")
        #expect(model.lastStep?.token == signedIn?.token)
        let bought = await model.send(.buy)
        #expect(bought?.outcome == .purchased && model.lastStep?.outcome == .purchased)
        await model.send(.buy)
        let again = await model.send(.buy)
        #expect(again?.outcome == .alreadyOwned, "\(String(describing: again?.outcome))")
        // An action the top screen does not take: no step, lastError says why.
        let refused = await model.send(.cancel)
        #expect(refused == nil && model.lastStep == nil && model.lastError != nil)
    }

    @Test("a failed attach (a wrong secret) leaves the driver on its own session with its own secret: the next send goes through")
    func failedAttachKeepsTheSession() async throws {
        let server = try await LiveServer()
        defer { server.stop() }
        let driver = server.driver()
        let mine = try await driver.start()
        let secret = try #require(await driver.sessionSecret)
        let other = try await server.driver().start()
        do {
            _ = try await driver.attach(sessionID: other.id, secret: "not-its-secret")
            Issue.record("a wrong secret was taken")
        } catch {
            guard case .unauthorized = error else { Issue.record("\(error)"); return }
        }
        #expect(await driver.sessionID == mine.id)
        #expect(await driver.sessionSecret == secret)
        let step = try await driver.send(.selectPhoto(2))
        #expect(step.session.id == mine.id)
    }
    @Test("session events on the model: an ended session's send is .expired, follow() ends with .expired, resume() over an ended session is .replaced(because: sessionExpired) (FakePhotosServer)")
    func sessionEvents() async throws {
        let fake = try FakePhotosServer()
        let state = try TemporaryDirectory()
        defer { state.remove() }
        let store = FileSessionStore(path: state.file("session.json"))
        let model = NavigationModel(driver: fake.driver(store: store))
        await model.start()
        #expect(model.lastEvent == nil)
        let id = try #require(await model.driver.sessionID)
        await fake.endSession(id)
        #expect(await model.send(.selectPhoto(1)) == nil)
        #expect(model.lastEvent == .expired, "\(String(describing: model.lastEvent))")
        await model.follow()
        #expect(model.lastEvent == .expired)
        // A relaunch over the ended session: a new one takes its place, and the model says why.
        let relaunched = NavigationModel(driver: fake.driver(store: store))
        await relaunched.resume()
        guard case .replaced(because: .sessionExpired)? = relaunched.lastEvent else {
            Issue.record("\(String(describing: relaunched.lastEvent))")
            return
        }
        let (now, before) = (await relaunched.driver.sessionID, id)
        #expect(now != before && relaunched.lastError == nil)
    }

    /// A fake photosd whose action answers take `delay`: a tap stays in flight long enough for
    /// the user to swipe.
    final class SlowActions: ClientTransport {
        let server: FakePhotosServer
        let delay: Duration
        init(_ server: FakePhotosServer, delay: Duration) {
            self.server = server
            self.delay = delay
        }
        func send(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws -> (HTTPResponse, HTTPBody?) {
            if operationID == "act" { try await Task.sleep(for: delay) }
            return try await server.send(request, body: body, baseURL: baseURL, operationID: operationID)
        }
    }

    @Test("a swipe-back while a tap is on its way: the screen left never comes back (no bounce), and the app and the server end where the user went")
    func swipeBackDuringTap() async throws {
        let server = try FakePhotosServer()
        let model = NavigationModel(driver: NavigationDriver(serverURL: FakePhotosServer.serverURL, transport: SlowActions(server, delay: .milliseconds(300))))
        await model.start()
        await model.send(.selectPhoto(2))
        #expect(model.path == [Screen(.photo, photoId: 2, purchased: false)])
        // Every state the view could draw, from the swipe on.
        let seen = Mutex<[[[Screen]]]>([])
        let tap = Task { await model.send(.buy) }  // sign-in, on its way
        try await Task.sleep(for: .milliseconds(100))
        model.path = []  // the user swipes back from the photo meanwhile
        let watcher = Task { @MainActor in
            while !Task.isCancelled {
                let paths = model.paths
                seen.withLock { $0.append(paths) }
                try? await Task.sleep(for: .milliseconds(5))
            }
        }
        _ = await tap.value
        await model.settle()
        watcher.cancel()
        await watcher.value
        let states = seen.withLock { $0 }
        #expect(states.allSatisfy { $0 == [[]] }, "the view was shown \(Set(states.map { "\($0)" }))")
        #expect(model.paths == [[]] && model.lastError == nil, "\(String(describing: model.lastError))")
        let reader = server.driver()
        let onServer = try await reader.attach(sessionID: try #require(await model.driver.sessionID), secret: try #require(await model.driver.sessionSecret))
        #expect(onServer.navigation.stacks.map(\.screens) == [[Screen(.photos)]], "the server is at \(onServer.navigation)")
    }

    @Test("after a gesture has its answer, a later refresh shows what it reads (no gesture is left pending without settle())")
    func refreshAfterGesture() async throws {
        let server = try FakePhotosServer()
        let model = NavigationModel(driver: server.driver())
        await model.start()
        await model.send(.selectPhoto(2))
        model.path = []  // a swipe-back; the app never calls settle()
        let deadline = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < deadline, let stacks = try? await Self.stacksOnFake(server, model), stacks != [[Screen(.photos)]] {
            try await Task.sleep(for: .milliseconds(20))
        }
        try await Task.sleep(for: .milliseconds(50))
        // Another device opens photo 3; the app reads the session again.
        let tablet = server.driver()
        try await tablet.attach(sessionID: try #require(await model.driver.sessionID), secret: try #require(await model.driver.sessionSecret))
        _ = try await tablet.send(.selectPhoto(3))
        await model.refresh()
        #expect(model.path == [Screen(.photo, photoId: 3, purchased: false)], "the refresh was not shown: \(model.path)")
    }

    /// The stacks the fake server has for the model's session.
    static func stacksOnFake(_ server: FakePhotosServer, _ model: NavigationModel) async throws -> [[Screen]] {
        let reader = server.driver()
        return try await reader.attach(sessionID: try #require(await model.driver.sessionID), secret: try #require(await model.driver.sessionSecret))
            .navigation.stacks.map(\.screens)
    }
}
