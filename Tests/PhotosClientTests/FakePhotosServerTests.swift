import Foundation
import HTTPTypes
import OpenAPIRuntime
import PhotosClient
import PhotosClientTesting
import PhotosTestSupport
import Testing

/// `FakePhotosServer` (PhotosClientTesting) answers as photosd does: the same random action
/// sequences sent to a real photosd and to the fake give the same outcomes, commands, errors and
/// sessions (all but ids); secrets, idempotency, an ended session and the change feed work as
/// they do on the real server.
@Suite("PhotosClientTesting: FakePhotosServer")
struct FakePhotosServerTests {
    typealias Seeded = CommandPropertyTests.Seeded

    /// The session's JSON without what differs between two servers by nature (its id).
    static func comparable(_ session: Session) throws -> String {
        var object = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(session)) as? [String: Any])
        object["id"] = nil
        return String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }

    /// What an error is, without its words (which may name an id).
    static func kind(_ error: NavigationError) -> String {
        switch error {
        case .actionNotAvailable(let allowed, _): "actionNotAvailable \(allowed)"
        case .server(let status, let code, _): "server \(status) \(code ?? "")"
        default: String("\(error)".prefix { $0 != "(" && $0 != ":" })
        }
    }

    /// What one send came to, comparable across the two servers.
    static func outcome(of driver: NavigationDriver, _ action: Action) async throws -> String {
        do {
            let step = try await driver.send(action)
            return "ok \(step.outcome) \(step.commands) \(try comparable(step.session)) token:\(step.token != nil)"
        } catch {
            return "error \(kind(NavigationError(error)))"
        }
    }

    @Test("the same random action sequences give the same answers as a real photosd (both layouts; with the flow experiments' variants forced)", arguments: [false, true])
    func sameAnswersAsPhotosd(experiments: Bool) async throws {
        let forced = [("buy.presentation", "push:0,modal:1"), ("signIn.when", "atBuy:0,atPurchase:1"), ("terms.required", "no:0,yes:1")]
        let real = try await LiveServer(experiments: experiments ? forced : [])
        defer { real.stop() }
        let fake = try FakePhotosServer(users: [LiveServer.username: LiveServer.password])
        for (index, experiment) in (experiments ? forced : []).enumerated() {
            try await fake.addExperiment("experiment-\(index)", point: experiment.0, variants: experiment.1)
        }
        var random = Seeded(state: experiments ? 7 : 3)
        var compared = 0
        for run in 0..<4 {
            let layout: Layout = run % 2 == 0 ? .stack : .tabs
            let link = run >= 2 ? (layout == .tabs ? "/purchases" : "/photos/2/buy") : nil
            let onReal = real.driver(retry: .never)
            let onFake = fake.driver(retry: .never)
            let startedReal = try await onReal.start(layout: layout, link: link)
            let startedFake = try await onFake.start(layout: layout, link: link)
            #expect(try Self.comparable(startedReal) == Self.comparable(startedFake), "run \(run): started")
            for step in 0..<40 {
                let session = try #require(await onReal.session)
                var action = CommandPropertyTests.pick(session, &random)
                // Mostly the right password: the real server limits failed sign-ins, the fake does not.
                if case .submit = action, Int.random(in: 0..<8, using: &random) > 0 {
                    action = .submit(username: LiveServer.username, password: LiveServer.password)
                }
                let fromReal = try await Self.outcome(of: onReal, action)
                if fromReal.hasPrefix("error tooManyAttempts") { break }
                let fromFake = try await Self.outcome(of: onFake, action)
                #expect(fromReal == fromFake, "run \(run) step \(step) \(action):\nphotosd: \(fromReal)\nfake:    \(fromFake)")
                if fromReal != fromFake { return }
                compared += 1
            }
            let realRows = try await onReal.events(limit: 1_000).map { "\($0.seq) \($0.step)" }
            let fakeRows = try await onFake.events(limit: 1_000).map { "\($0.seq) \($0.step)" }
            #expect(realRows == fakeRows, "run \(run): the audit trails differ")
        }
        #expect(compared > 120, "only \(compared) steps compared")
    }

    @Test("secrets, idempotency, an ended session, the change feed and a sign-in from outside, without a network")
    func behavesLikeTheServer() async throws {
        let fake = try FakePhotosServer(users: ["alice": "wonderland"])
        let phone = fake.driver()
        let session = try await phone.start()
        let secret = try #require(await phone.sessionSecret)
        #expect(secret.utf8.count == 43)
        // Another secret, or none: 401, as photosd answers.
        let stranger = fake.driver()
        do {
            try await stranger.attach(sessionID: session.id, secret: "not-this-one")
            Issue.record("a wrong secret attached")
        } catch {
            guard case .unauthorized(let message) = error else { Issue.record("\(error)"); return }
            #expect(message == "the session secret is not this session's")
        }
        // A lost answer is sent again with its key: applied once.
        let losing = LosingTransport(fake)
        let retrying = NavigationDriver(serverURL: FakePhotosServer.serverURL, retry: RetryPolicy(transportBackoffSeconds: 0.01), transport: losing)
        try await retrying.attach(sessionID: session.id, secret: secret)
        let step = try await retrying.send(.selectPhoto(3))
        #expect(step.session.version == 2 && losing.attempts == 2)
        // A second device follows the changes.
        let tablet = fake.driver()
        try await tablet.attach(sessionID: session.id, secret: secret)
        let feed = tablet.changes(wait: 5)
        let next = Task { () -> [NavigationCommand]? in
            for try await change in feed { return change.commands }
            return nil
        }
        try await Task.sleep(for: .milliseconds(100))
        _ = try await retrying.send(.buy)
        #expect(try await next.value == [.push(Screen(.signIn))])
        // Signed in from outside (an operator): the session moves on to buy.
        try await fake.signIn("alice", intoSession: session.id)
        let refreshed = try await phone.refresh()
        #expect(await phone.session?.user?.username == "alice")
        #expect(refreshed.map(\.description) == ["push photo 3", "push buy 3"], "\(refreshed)")
        // Ended, as an idle session is: 410, and startOver goes on.
        await fake.endSession(session.id)
        do {
            _ = try await phone.send(.back)
            Issue.record("an ended session took an action")
        } catch {
            guard case .sessionExpired = error else { Issue.record("\(error)"); return }
        }
        let commands = try await phone.startOver()
        #expect(await phone.session?.id != session.id && !commands.isEmpty)
        // The catalogue.
        let photos = try await phone.client.listPhotos(query: .init(limit: 2))
        guard case .ok(let page) = photos else { Issue.record("\(photos)"); return }
        #expect(try page.body.json.photos.map(\.title) == ["Golden Gate at dusk", "Harbour in the rain"])
        #expect(try page.body.json.nextAfter == 2)
    }

    /// Sends the first `act` on to the fake and then loses its answer.
    final class LosingTransport: ClientTransport, @unchecked Sendable {
        let fake: FakePhotosServer
        /// `@unchecked Sendable`: `count` is read and written only under `lock`.
        private let lock = NSLock()
        private var count = 0
        init(_ fake: FakePhotosServer) { self.fake = fake }
        var attempts: Int { lock.withLock { count } }

        func send(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws -> (HTTPResponse, HTTPBody?) {
            guard operationID == "act" else { return try await fake.send(request, body: body, baseURL: baseURL, operationID: operationID) }
            let attempt = lock.withLock { count += 1; return count }
            let answer = try await fake.send(request, body: body, baseURL: baseURL, operationID: operationID)
            if attempt == 1 { throw URLError(.networkConnectionLost) }
            return answer
        }
    }

    @Test("limits and refusals, as photosd answers them: a second change feed over longPolls 1 is told .polling (429), sessions over sessionsPerMinute and sign-ins over failedSignIns are tooManyAttempts with Retry-After, a scripted 503 is retried and a scripted 429 surfaces")
    func limitsAndRefusals() async throws {
        let server = try FakePhotosServer(users: ["alice": "wonderland"], limits: .init(longPolls: 1, sessionsPerMinute: 3, failedSignIns: 2))
        let phone = server.driver(retry: RetryPolicy(maxAttempts: 3, maxWaitSeconds: 1, transportBackoffSeconds: 0.05, jitter: 0))
        /// The whole seconds since `start`, as the fake counts a window: what a Retry-After
        /// leaves of it is checked against this (a loaded machine takes its time between steps).
        func secondsSince(_ start: ContinuousClock.Instant) -> Int { Int((ContinuousClock.now - start).components.seconds) }

        // Sessions: three a minute; the fourth is refused with what is left of the minute.
        let firstCreated = ContinuousClock.now
        let session = try await phone.start()
        _ = try await server.driver().start()
        _ = try await server.driver().start()
        do {
            _ = try await server.driver(retry: .never).start()
            Issue.record("a fourth session in a minute was created")
        } catch {
            guard case .tooManyAttempts(let retryAfter, let message) = error else { Issue.record("\(error)"); return }
            let left = 60 - secondsSince(firstCreated)
            #expect((max(1, left - 1)...(left + 1)).contains(retryAfter ?? 0) && message.contains("too many sessions"), "\(error), \(left) s left")
        }
        let tablet = server.driver()
        try await tablet.attach(sessionID: session.id, secret: try #require(await phone.sessionSecret))

        // One wait open: the phone's. The tablet's feed is refused and says so at once.
        let phoneFeed = Task { () -> Int in
            var count = 0
            for try await _ in phone.changes(wait: 5) { count += 1 }
            return count
        }
        let waitedFrom = ContinuousClock.now
        while await server.openChangeFeedWaits < 1, ContinuousClock.now < waitedFrom + .seconds(30) { try await Task.sleep(for: .milliseconds(10)) }
        #expect(await server.openChangeFeedWaits == 1, "the phone's wait never opened")
        var tabletFeed = tablet.changes(wait: 5).makeAsyncIterator()
        let first = try #require(try await tabletFeed.next())
        #expect(first.feed == .polling(retryAfter: 5), "\(first.feed)")
        phoneFeed.cancel()

        // Sign-ins: two failures, then refused before the password is checked (the right one too).
        _ = try await phone.send(.signIn)
        let firstFailed = ContinuousClock.now
        for _ in 0..<2 {
            await #expect(throws: NavigationError.self) { _ = try await phone.send(.submit(username: "alice", password: "wrong")) }
        }
        do {
            _ = try await phone.send(.submit(username: "alice", password: "wonderland"))
            Issue.record("a third sign-in went through")
        } catch {
            guard case .tooManyAttempts(let retryAfter, let message) = error else { Issue.record("\(error)"); return }
            let left = 300 - secondsSince(firstFailed)
            #expect(((left - 1)...301).contains(retryAfter ?? 0) && message.contains("failed sign-ins"), "\(error), \(left) s left")
        }
        #expect(await phone.shown.top == Screen(.signIn), "the refused sign-in changed nothing on screen")

        // Scripted: a 503 twice is retried (the policy allows 3 attempts), a 429 surfaces.
        await server.refuseNext("act", with: .unavailable(retryAfter: 0), times: 2)
        #expect(try await phone.send(.cancel).commands == [.dismiss])
        await server.refuseNext("act", with: .tooManyAttempts(retryAfter: 7))
        do {
            _ = try await phone.send(.selectPhoto(1))
            Issue.record("a scripted 429 was not answered")
        } catch {
            #expect(error == .tooManyAttempts(retryAfter: 7, message: "refused by the test (FakePhotosServer.refuseNext); retry in 7 s"))
        }
        #expect(try await phone.send(.selectPhoto(1)).commands == [.push(Screen(.photo, photoId: 1, purchased: false))], "the next one is answered")
    }
}
