import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPTypes
import OpenAPIRuntime
import OpenAPIURLSession
import PhotosClient
import PhotosTestSupport
import Testing

/// A newer server's tabs and layouts decode like its screens; an answer the client cannot read
/// at all is `NavigationError.undecodable`, naming the operation and the field, and costs
/// nothing: a session just created keeps its secret, the driver never claims it caught up
/// with an answer it could not read, and the change feed ends with the error instead of
/// polling again in silence.
@Suite("PhotosClient: newer tabs and layouts; answers it cannot read")
struct UndecodableAnswerTests {
    /// photosd's real answers, rewritten: with `newerTabs`, every tabs session has a third tab
    /// `favorites` and a getSession answer says layout `split`; the operations in `broken`
    /// answer `version` as a string (a shape this client cannot read).
    final class RewritingServer: ClientTransport, @unchecked Sendable {
        let real = URLSessionTransport()
        let newerTabs: Bool
        /// Whether the audit rows in `act` and `sessionEvents` answers come in a newer shape: no
        /// `at`, `seq` as text, `detail` an object, a field this client does not know.
        let newerEvents: Bool
        /// `@unchecked Sendable`: `brokenOperations` is read and written only under `lock`.
        private let lock = NSLock()
        private var brokenOperations: Set<String> = []
        /// The operations whose session answers come without `top` (the screen's actions).
        private var toplessOperations: Set<String> = []
        /// Answers of the broken operations that were rewritten.
        private(set) var rewritten = 0
        /// Error answers whose allowed actions were rewritten (`newerEvents`).
        private(set) var errorsRewritten = 0

        init(newerTabs: Bool = false, newerEvents: Bool = false) {
            self.newerTabs = newerTabs
            self.newerEvents = newerEvents
        }

        func breakAnswers(of operations: Set<String>) { lock.withLock { brokenOperations = operations } }

        func dropTop(in operations: Set<String>) { lock.withLock { toplessOperations = operations } }

        func send(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws -> (HTTPResponse, HTTPBody?) {
            let (response, answer) = try await real.send(request, body: body, baseURL: baseURL, operationID: operationID)
            let broken = lock.withLock { brokenOperations.contains(operationID) }
            let topless = lock.withLock { toplessOperations.contains(operationID) }
            if newerEvents, response.status == .badRequest || response.status == .conflict, let answer {
                // An error that lists the allowed actions: a newer server's own among them.
                let data = try await Data(collecting: answer, upTo: 1 << 20)
                guard var object = try JSONSerialization.jsonObject(with: data) as? [String: Any],
                      var error = object["error"] as? [String: Any], let allowed = error["allowed"] as? [String]
                else { return (response, HTTPBody(data)) }
                error["allowed"] = ["shareToFeed"] + allowed
                object["error"] = error
                lock.withLock { errorsRewritten += 1 }
                let changed = try JSONSerialization.data(withJSONObject: object)
                var headers = response
                headers.headerFields[.contentLength] = String(changed.count)
                return (headers, HTTPBody(changed))
            }
            guard newerTabs || newerEvents || broken || topless, response.status.kind == .successful, let answer else { return (response, answer) }
            let data = try await Data(collecting: answer, upTo: 1 << 20)
            guard var object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else { return (response, HTTPBody(data)) }
            if newerEvents, let events = object["events"] as? [[String: Any]] {
                object["events"] = events.map { row -> [String: Any] in
                    var row = row
                    row["at"] = nil
                    row["seq"] = "\(row["seq"] ?? "")"
                    row["detail"] = ["was": row["detail"] ?? ""]
                    row["hash"] = "ab12"
                    return row
                }
            }
            let nested = object["session"] != nil
            var session = nested ? object["session"] as? [String: Any] ?? [:] : object
            if newerTabs, var tabs = session["tabs"] as? [String: Any] {
                tabs["items"] = (tabs["items"] as? [Any] ?? []) + [["tab": "favorites", "screens": [["screen": "favorites", "title": "Your favourites", "count": 3]]]]
                session["tabs"] = tabs
                if operationID == "getSession" { session["layout"] = "split" }
            }
            if topless { session["top"] = nil }
            if broken {
                session["version"] = "v\(session["version"] ?? "")"
                lock.withLock { rewritten += 1 }
            }
            if nested { object["session"] = session } else { object = session }
            let changed = try JSONSerialization.data(withJSONObject: object)
            var headers = response
            headers.headerFields[.contentLength] = String(changed.count)
            return (headers, HTTPBody(changed))
        }
    }

    @Test("a tab and a layout the client does not know decode as unknown, an unknown screen keeps its fields: start, select a tab, refresh")
    func newerTabsAndLayout() async throws {
        let server = try await LiveServer()
        defer { server.stop() }
        let driver = NavigationDriver(serverURL: server.url, transport: RewritingServer(newerTabs: true))
        let started = try await driver.start(layout: .tabs)
        #expect(started.layout == .tabs)
        // The unknown screen keeps the fields this client does not know, for its fallback.
        let favorites = try #require(started.navigation.tabs[.unknown("favorites")]?.first)
        #expect(favorites.name == .unknown("favorites"))
        #expect(favorites.otherFields.value["title"] as? String == "Your favourites")
        #expect(favorites.otherFields.value["count"] as? Int == 3)
        #expect(started.navigation.tabs[.photos]?.allSatisfy { $0.otherFields.value.isEmpty } == true, "a known screen with no other fields")
        #expect(started.navigation.selectedTab == .photos)
        let step = try await driver.send(.selectTab(.purchases))
        #expect(step.commands == [.selectTab(.purchases)])
        #expect(Tab(rawValue: "favorites").description == "unknown(favorites)")
        _ = try await driver.refresh()
        #expect(await driver.session?.layout == .unknown("split"))
        #expect(try await driver.send(.selectTab(.photos)).commands == [.selectTab(.photos)])
    }

    @Test("audit rows of a newer shape (a field gone, another of another type, one unknown) do not break a tap: each step and the trail read, the rows say which fields they could not read; an error's allowed actions are those the client knows")
    func newerAuditRows() async throws {
        let server = try await LiveServer()
        defer { server.stop() }
        let transport = RewritingServer(newerEvents: true)
        let driver = NavigationDriver(serverURL: server.url, transport: transport)
        _ = try await driver.start()
        let step = try await driver.send(.selectPhoto(2))
        #expect(step.commands == [.push(Screen(.photo, photoId: 2, purchased: false))])
        #expect(!step.events.isEmpty)
        for row in step.events {
            #expect(row.unreadFields == ["seq", "at", "detail"], "\(row)")
            #expect(row.actor == "client" && !row.step.isEmpty && row.sessionId == step.session.id, "\(row)")
        }
        // An error listing the allowed actions lists only those this client knows.
        do {
            _ = try await driver.send(.dismiss)
            Issue.record("dismiss was taken on a photo")
        } catch {
            guard case .actionNotAvailable(let allowed, _) = error else { Issue.record("\(error)"); return }
            #expect(allowed == ["buy", "back"])
        }
        #expect(transport.errorsRewritten == 1, "the error answer was not rewritten")
        #expect(try await driver.send(.buy).commands == [.push(Screen(.signIn))])
        let trail = try await driver.events()
        #expect(trail.count >= 3 && trail.allSatisfy { $0.unreadFields == ["seq", "at", "detail"] }, "\(trail)")
        // The rows as photosd writes them read whole.
        let plain = server.driver()
        _ = try await plain.start()
        let plainStep = try await plain.send(.selectPhoto(1))
        #expect(!plainStep.events.isEmpty && plainStep.events.allSatisfy { $0.unreadFields.isEmpty && $0.seq > 0 && !$0.at.isEmpty && $0.detail.hasPrefix("{") })
    }

    @Test("a created session whose answer cannot be read: undecodable(createSession, version), its id and secret kept (driver and store), and refresh takes it once the answer reads")
    func createdSessionKept() async throws {
        let server = try await LiveServer()
        defer { server.stop() }
        let state = try TemporaryDirectory()
        defer { state.remove() }
        let store = FileSessionStore(path: state.file("session.json"))
        let transport = RewritingServer()
        transport.breakAnswers(of: ["createSession"])
        let logged = OpenSetTests.Recorder()
        let driver = NavigationDriver(serverURL: server.url, transport: transport, store: store, log: { logged.add("\($0)") })
        do {
            try await driver.start()
            Issue.record("an answer with a string version was read")
        } catch {
            guard case .undecodable(let operation, let field, _) = error else { Issue.record("\(error)"); return }
            #expect(operation == "createSession")
            #expect(field == "version")
            #expect("\(error)".hasPrefix("cannot read photosd's answer to createSession at version"), "\(error)")
        }
        let id = try #require(await driver.sessionID)
        let secret = try #require(await driver.sessionSecret)
        #expect(await driver.session == nil)
        let stored = try #require(try store.load())
        #expect(stored.id == id && stored.secret == secret && stored.session == nil)
        #expect(logged.values.contains { $0?.hasPrefix("[warning] createSession: cannot read") == true }, "\(logged.values)")

        // An action before the session was read is refused without a request.
        await #expect(throws: NavigationError.self) { try await driver.send(.selectPhoto(1)) }
        transport.breakAnswers(of: [])
        let commands = try await driver.refresh()
        #expect(commands == [.present(PresentedStack(presentation: .root, screens: [Screen(.photos)]))] || commands == [.push(Screen(.photos))], "\(commands)")
        #expect(try await driver.send(.selectPhoto(2)).outcome == .navigated)
        #expect(transport.rewritten == 1)
    }

    @Test("an applied action whose answer cannot be read: undecodable(act, session.version); the next send's conflict does not claim a catch-up it could not read; once readable it catches up")
    func unreadableAction() async throws {
        let server = try await LiveServer()
        defer { server.stop() }
        let transport = RewritingServer()
        let driver = NavigationDriver(serverURL: server.url, transport: transport)
        try await driver.start()
        transport.breakAnswers(of: ["act", "getSession"])
        do {
            _ = try await driver.send(.selectPhoto(2))
            Issue.record("an unreadable answer was read")
        } catch {
            guard case .undecodable("act", "session.version", _) = error else { Issue.record("\(error)"); return }
        }
        // Applied on the server (v2), not here (v1): the next action conflicts, and the re-read
        // cannot be read either — that is what the app hears, not "caught up".
        do {
            _ = try await driver.send(.back)
            Issue.record("a stale action was applied")
        } catch {
            guard case .undecodable("getSession", "version", _) = error else { Issue.record("caught up without reading: \(error)"); return }
        }
        #expect(await driver.session?.version == 1)
        #expect(await driver.shown.stacks.map(\.screens) == [[Screen(.photos)]])
        transport.breakAnswers(of: [])
        do {
            _ = try await driver.send(.back)
            Issue.record("a stale action was applied")
        } catch {
            guard case .versionConflict(_, let caughtUp) = error else { Issue.record("\(error)"); return }
            #expect(caughtUp == [.push(Screen(.photo, photoId: 2, purchased: false))])
        }
        #expect(try await driver.send(.back).commands == [.pop(1)])
    }

    @Test("NavigationModel: an applied action whose answer cannot be read is undecodable, and the model reads the session again: the screen is the server's and the next tap is no conflict")
    @MainActor
    func unreadableActionOnTheModel() async throws {
        let server = try await LiveServer()
        defer { server.stop() }
        let transport = RewritingServer()
        let model = NavigationModel(driver: NavigationDriver(serverURL: server.url, transport: transport))
        await model.start()
        transport.breakAnswers(of: ["act"])
        let step = await model.send(.selectPhoto(2))
        guard step == nil, case .undecodable("act", "session.version", _)? = model.lastError else {
            Issue.record("\(String(describing: model.lastError))")
            return
        }
        #expect(model.path == [Screen(.photo, photoId: 2, purchased: false)], "the screen stayed a step behind")
        transport.breakAnswers(of: [])
        #expect(await model.send(.back)?.commands == [.pop(1)])
        #expect(model.lastError == nil && model.path.isEmpty)
    }

    @Test("a session answer without top (the screen's actions) is undecodable naming top, not a screen without buttons; the model reads the session again and has its actions")
    @MainActor
    func missingTop() async throws {
        let server = try await LiveServer()
        defer { server.stop() }
        let transport = RewritingServer()
        let model = NavigationModel(driver: NavigationDriver(serverURL: server.url, transport: transport))
        await model.start()
        #expect(model.session?.actions.isEmpty == false)
        transport.dropTop(in: ["act"])
        let step = await model.send(.selectPhoto(2))
        guard step == nil, case .undecodable("act", let field, _)? = model.lastError, field.contains("top") else {
            Issue.record("\(String(describing: model.lastError))")
            return
        }
        // Read again (its answer has top): the photo's actions, not none.
        #expect(model.path == [Screen(.photo, photoId: 2, purchased: false)])
        #expect(model.session?.actions.contains(.buy) == true, "\(String(describing: model.session?.actions))")
    }

    @Test("the change feed ends with undecodable(sessionChanges, version) instead of polling again in silence")
    func feedEndsOnUnreadableChange() async throws {
        let server = try await LiveServer()
        defer { server.stop() }
        let phone = server.driver()
        let created = try await phone.start()
        let secret = try #require(await phone.sessionSecret)
        let transport = RewritingServer()
        transport.breakAnswers(of: ["sessionChanges"])
        let logged = OpenSetTests.Recorder()
        let tablet = NavigationDriver(serverURL: server.url, transport: transport, log: { logged.add("\($0)") })
        try await tablet.attach(sessionID: created.id, secret: secret)
        let feed = tablet.changes(wait: 5)
        let follower = Task { () -> NavigationError? in
            do {
                for try await _ in feed { return nil }
                return nil
            } catch {
                return error as? NavigationError
            }
        }
        try await Task.sleep(for: .milliseconds(200))
        _ = try await phone.send(.selectPhoto(1))
        let ended = await follower.value
        guard case .undecodable("sessionChanges", "version", _)? = ended else { Issue.record("the feed went on or ended otherwise: \(String(describing: ended))"); return }
        #expect(transport.rewritten == 1, "the feed polled again after an answer it could not read")
        #expect(logged.values.contains { $0?.hasPrefix("[warning] sessionChanges: the change feed ended") == true }, "\(logged.values)")
    }
}
