import Foundation
import HTTPTypes
import OpenAPIRuntime
import OpenAPIURLSession
import PhotosClient
import PhotosTestSupport
import Synchronization
import Testing

/// Sessions that outlive the app: kept by a `SessionStore`, resumed on the same screens after a
/// restart, started over after a 401 or a 410; the driver's logging hook and its jitter.
@Suite("PhotosClient: sessions that outlive the app")
struct SessionStoreTests {
    @Test("FileSessionStore: mode 0600 in a 0700 directory, replaced whole on each save, a Session round-trips as the server's JSON, remove forgets")
    func fileStore() async throws {
        let server = try await LiveServer()
        defer { server.stop() }
        let state = try TemporaryDirectory()
        defer { state.remove() }
        let path = state.file("app/state/session.json")
        let store = FileSessionStore(path: path)
        #expect(try store.load() == nil)
        let driver = NavigationDriver(serverURL: server.url, store: store)
        let session = try await driver.start(layout: .tabs)
        let kept = try #require(try store.load())
        #expect(kept.id == session.id && kept.layout == .tabs && kept.session == session)
        #expect(kept.secret == (await driver.sessionSecret))
        let mode = { (path: String) in (try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue }
        #expect(mode(path) == 0o600)
        #expect(mode(state.file("app/state")) == 0o700)
        #expect(try FileManager.default.contentsOfDirectory(atPath: state.file("app/state")) == ["session.json"], "a temporary file was left")
        // A Session is kept as the server's own JSON: it decodes as the generated type too.
        let json = try JSONEncoder().encode(session)
        #expect(try JSONDecoder().decode(Session.self, from: json) == session)
        #expect(try JSONDecoder().decode(Components.Schemas.Session.self, from: json).id == session.id)
        try store.remove()
        #expect(try store.load() == nil)
        try store.remove()
        // A file that is not a kept session is an error that names it (never its contents).
        try Data("not json".utf8).write(to: URL(fileURLWithPath: path))
        #expect(throws: SessionStoreError.self) { try store.load() }
    }

    @Test("resume: the store keeps the session as of the last answer (an offline launch's screens); a new driver (the app restarted) attaches from the store and gets the commands that build the screens the server has, stack and tabs", arguments: [Layout.stack, .tabs])
    func resume(layout: Layout) async throws {
        let server = try await LiveServer()
        defer { server.stop() }
        let state = try TemporaryDirectory()
        defer { state.remove() }
        let store = FileSessionStore(path: state.file("session.json"))
        let first = NavigationDriver(serverURL: server.url, store: store)
        try await first.start(layout: layout)
        if layout == .tabs { _ = try await first.send(.selectTab(.purchases)); _ = try await first.send(.selectTab(.photos)) }
        _ = try await first.send(.selectPhoto(2))
        _ = try await first.send(.buy)  // signed out: sign-in (stack) or a sheet (the variant)
        let serverSession = try #require(await first.session)
        // The store keeps the session as of the last answer: what an app launched offline shows.
        let kept = try #require(try store.load()?.session)
        #expect(kept.version == serverSession.version && kept.navigation == serverSession.navigation, "the snapshot is stale: version \(kept.version) of \(serverSession.version)")

        let relaunched = NavigationDriver(serverURL: server.url, store: store)
        let commands = try await relaunched.resume()
        var app = StackModel(launching: serverSession)
        for command in commands { app.apply(command) }
        #expect(app == StackModel(serverSession), "\(commands)")
        #expect(await relaunched.shown.stacks == serverSession.navigation.stacks)
        #expect(await relaunched.session?.version == serverSession.version)
        // And it goes on from there.
        #expect(try await relaunched.send(.cancel).outcome == .navigated)
    }

    @Test("startOver after a 410 (idle) and after a 401 (a secret no longer valid): a new session in the same layout, the store updated, the commands to its first screen")
    func startOver() async throws {
        // Idle past 2 s ends a session. Nothing is sent before it ends: under a loaded machine's
        // full test run, even a first action could come too late (the 410 is what is tested).
        let server = try await LiveServer(environment: ["PHOTOSD_SESSIONS_IDLE_EXPIRY_SECONDS": "2"])
        defer { server.stop() }
        let state = try TemporaryDirectory()
        defer { state.remove() }
        let store = FileSessionStore(path: state.file("session.json"))
        let driver = NavigationDriver(serverURL: server.url, store: store)
        let ended = try await driver.start(layout: .tabs)
        try await Task.sleep(for: .seconds(3))
        do {
            _ = try await driver.send(.selectTab(.purchases))
            Issue.record("an action on an ended session went through")
        } catch {
            guard case .sessionExpired = error else { Issue.record("\(error)"); return }
        }
        let commands = try await driver.startOver()
        let fresh = try #require(await driver.session)
        #expect(fresh.id != ended.id && fresh.layout == .tabs)
        #expect(commands.isEmpty, "the new session's first screen is the one the app shows: \(commands)")
        #expect(try store.load()?.id == fresh.id)

        // A relaunch whose kept secret is refused (401): resume says so, startOver starts anew.
        var stale = try #require(try store.load())
        stale.secret = String(repeating: "x", count: 43)
        try store.save(stale)
        let relaunched = NavigationDriver(serverURL: server.url, store: store)
        do {
            _ = try await relaunched.resume()
            Issue.record("a refused secret resumed")
        } catch {
            guard case .unauthorized = error else { Issue.record("\(error)"); return }
        }
        // From an app just launched (it shows nothing yet): the new session's screens, built.
        let again = try await relaunched.startOver()
        #expect(again == [.selectTab(.photos), .push(Screen(.photos))], "\(again)")
        let newest = try #require(await relaunched.session)
        #expect(newest.layout == .tabs, "the layout kept in the store")
        #expect(try store.load()?.id == newest.id && newest.id != fresh.id)
        // No store: nothing to resume.
        await #expect(throws: NavigationError.noSession) { _ = try await server.driver().resume() }
    }

    @Test("the logging hook hears each retry (operation, attempt, wait) and never a secret")
    func logHook() async throws {
        let server = try await LiveServer()
        defer { server.stop() }
        let lines = Mutex<[String]>([])
        let transport = FaultyTransport(breaking: "act", with: [.unavailable, .loseAnswer])
        let driver = NavigationDriver(
            serverURL: server.url, retry: RetryPolicy(maxWaitSeconds: 0.2, transportBackoffSeconds: 0.05), transport: transport,
            log: { entry in lines.withLock { $0.append("\(entry)") } })
        try await driver.start()
        #expect(try await driver.send(.selectPhoto(1)).outcome == .navigated)
        let logged = lines.withLock { $0 }
        #expect(logged.count == 2, "\(logged)")
        #expect(logged.first?.hasPrefix("[info] act: ") == true && logged.first?.contains("(attempt 2 of 4)") == true, "\(logged)")
        #expect(logged.last?.contains("(attempt 3 of 4)") == true, "\(logged)")
        let secret = try #require(await driver.sessionSecret)
        #expect(!logged.contains { $0.contains(secret) })
    }

    @Test("RetryPolicy's jitter: a wait is never shorter than asked (Retry-After), at most jitter longer, cut to maxWaitSeconds first, and spread")
    func jitter() {
        let policy = RetryPolicy(maxWaitSeconds: 5, jitter: 0.5)
        let waits = (0..<200).map { _ in policy.delay(for: 2) }
        #expect(waits.allSatisfy { $0 >= 2 && $0 <= 3 }, "\(waits.filter { $0 < 2 || $0 > 3 })")
        #expect(Set(waits).count > 100, "not spread")
        #expect((0..<50).map { _ in policy.delay(for: 30) }.allSatisfy { $0 >= 5 && $0 <= 7.5 })
        #expect(RetryPolicy(jitter: 0).delay(for: 1) == 1)
        #expect(RetryPolicy(jitter: 7).jitter == 1 && RetryPolicy(jitter: -1).jitter == 0)
    }
}
