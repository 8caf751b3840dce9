import Foundation
import HTTPTypes
import OpenAPIRuntime
import OpenAPIURLSession
import PhotosClient
import Synchronization
import Testing

/// A transport in front of the real one that breaks chosen attempts of an operation, and
/// records the `Idempotency-Key` of every attempt.
final class FaultyTransport: ClientTransport, Sendable {
    enum Fault: Sendable {
        /// Send the request, let photosd apply it, then lose the answer.
        case loseAnswer
        /// Answer 503 with `Retry-After: 1` without sending it.
        case unavailable
        /// Wait 60 s (or until the task is cancelled) before sending it.
        case slow
        /// Wait 30 s (or until the task is cancelled) before sending it, noting when it went (10 s
        /// was not always enough for the test's steps on CI's loaded machine: 10.7 s there).
        case delayed
    }

    let real = URLSessionTransport()
    let operation: String
    private let plan: Mutex<[Fault]>
    let keys = Mutex<[String]>([])
    /// Every request's operation, in order.
    let operations = Mutex<[String]>([])
    /// When a `delayed` request went, after its wait.
    let delayedSentAt = Mutex<ContinuousClock.Instant?>(nil)

    init(breaking operation: String, with faults: [Fault]) {
        self.operation = operation
        self.plan = Mutex(faults)
    }

    func send(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws -> (HTTPResponse, HTTPBody?) {
        operations.withLock { $0.append(operationID) }
        guard operationID == operation else { return try await real.send(request, body: body, baseURL: baseURL, operationID: operationID) }
        keys.withLock { $0.append(request.headerFields[HTTPField.Name("Idempotency-Key")!] ?? "") }
        let fault = plan.withLock { $0.isEmpty ? nil : $0.removeFirst() }
        switch fault {
        case .loseAnswer?:
            _ = try await real.send(request, body: body, baseURL: baseURL, operationID: operationID)
            throw URLError(.networkConnectionLost)
        case .unavailable?:
            let error = #"{"error":{"code":"unavailable","message":"storage is unavailable (test); nothing was saved"}}"#
            var response = HTTPResponse(status: .serviceUnavailable)
            response.headerFields[.contentType] = "application/json"
            response.headerFields[.retryAfter] = "1"
            return (response, HTTPBody(error))
        case .slow?:
            try await Task.sleep(for: .seconds(60))
            return try await real.send(request, body: body, baseURL: baseURL, operationID: operationID)
        case .delayed?:
            try await Task.sleep(for: .seconds(30))
            delayedSentAt.withLock { $0 = .now }
            return try await real.send(request, body: body, baseURL: baseURL, operationID: operationID)
        case nil:
            return try await real.send(request, body: body, baseURL: baseURL, operationID: operationID)
        }
    }
}

@Suite("PhotosClient: retries with one key per intent")
struct RetryTests {
    @Test("one action is one HTTP request: nothing else is sent when it succeeds")
    func oneRequestPerAction() async throws {
        let server = try await LiveServer()
        defer { server.stop() }
        let transport = FaultyTransport(breaking: "act", with: [])
        let driver = NavigationDriver(serverURL: server.url, transport: transport)
        try await driver.start()
        let actions: [Action] = [.selectPhoto(1), .buy, .submit(username: LiveServer.username, password: LiveServer.password), .showTerms, .cancel, .buy, .back]
        for action in actions { _ = try await driver.send(action) }
        #expect(transport.operations.withLock { $0 } == ["createSession"] + Array(repeating: "act", count: actions.count))
    }

    @Test("a lost answer is retried with the same key: photosd answers the first answer, the purchase is made once")
    func lostAnswer() async throws {
        let server = try await LiveServer()
        defer { server.stop() }
        let transport = FaultyTransport(breaking: "act", with: [])
        let driver = NavigationDriver(serverURL: server.url, transport: transport)
        try await driver.start(link: "/photos/2/buy")
        _ = try await driver.send(.submit(username: LiveServer.username, password: LiveServer.password))
        let faulty = FaultyTransport(breaking: "act", with: [.loseAnswer, .loseAnswer])
        let retrying = NavigationDriver(serverURL: server.url, transport: faulty)
        let id = try #require(await driver.session?.id)
        try await retrying.attach(sessionID: id, secret: try #require(await driver.sessionSecret))
        let step = try await retrying.send(.buy)
        #expect(step.outcome == .purchased, "the first answer, not alreadyOwned")
        #expect(step.commands == [.pop(1), .update(Screen(.photo, photoId: 2, purchased: true))])
        let keys = faulty.keys.withLock { $0 }
        #expect(keys.count == 3 && Set(keys).count == 1 && !keys[0].isEmpty, "\(keys)")
        let purchases = try await retrying.events().filter { $0.step == "purchase.completed" }
        #expect(purchases.count == 1)
        // The driver's version is the server's: the next action is not a conflict.
        _ = try await retrying.send(.back)
    }

    @Test("503 is retried after its Retry-After with the same key; past the policy it is a typed unavailable")
    func unavailable() async throws {
        let server = try await LiveServer()
        defer { server.stop() }
        let transport = FaultyTransport(breaking: "act", with: [.unavailable])
        let driver = NavigationDriver(serverURL: server.url, transport: transport)
        try await driver.start()
        let started = ContinuousClock.now
        let step = try await driver.send(.selectPhoto(3))
        #expect(ContinuousClock.now - started >= .seconds(1), "waited for Retry-After")
        #expect(step.commands == [.push(Screen(.photo, photoId: 3, purchased: false))])
        let keys = transport.keys.withLock { $0 }
        #expect(keys.count == 2 && keys[0] == keys[1])

        let always = FaultyTransport(breaking: "act", with: Array(repeating: .unavailable, count: 3))
        let giving = NavigationDriver(serverURL: server.url, retry: RetryPolicy(maxAttempts: 2, maxWaitSeconds: 0.1), transport: always)
        try await giving.start()
        do {
            _ = try await giving.send(.selectPhoto(1))
            Issue.record("a 503 was taken for an answer")
        } catch let error {
            guard case .unavailable(let retryAfter, _) = error else { Issue.record("\(error)"); return }
            #expect(retryAfter == 1)
        }
        #expect(always.keys.withLock { $0.count } == 2)
        // A new intent gets a new key.
        _ = try await driver.send(.back)
        #expect(Set(transport.keys.withLock { $0 }).count == 2)
    }

    @Test("sends are serialized: a double tap is one action; two different actions at once both go, one after the other, without a version conflict")
    func serializedSends() async throws {
        let server = try await LiveServer()
        defer { server.stop() }
        let transport = FaultyTransport(breaking: "act", with: [])
        let driver = NavigationDriver(serverURL: server.url, transport: transport)
        try await driver.start(layout: .tabs)
        async let first = driver.send(.selectPhoto(2))
        async let second = driver.send(.selectPhoto(2))
        let (one, other) = try await (first, second)
        #expect(one.session.version == other.session.version, "the double tap got one answer")
        #expect(transport.operations.withLock { $0.filter { $0 == "act" }.count } == 1, "a double tap sent twice")
        let versionBefore = one.session.version
        async let toPurchases = driver.send(.selectTab(.purchases))
        async let toPhotos = driver.send(.selectTab(.photos))
        let (a, b) = try await (toPurchases, toPhotos)
        #expect(Set([a.session.version, b.session.version]).count == 2, "both applied")
        #expect(max(a.session.version, b.session.version) > versionBefore)
        #expect(transport.operations.withLock { $0.filter { $0 == "act" }.count } == 3)
    }

    @Test("a cancelled send is .cancelled (not a transport failure), cancels its request, and the driver goes on")
    func cancelledSend() async throws {
        let server = try await LiveServer()
        defer { server.stop() }
        let transport = FaultyTransport(breaking: "act", with: [.slow])
        let driver = NavigationDriver(serverURL: server.url, transport: transport)
        try await driver.start()
        let started = ContinuousClock.now
        let task = Task { try await driver.send(.selectPhoto(1)) }
        try await Task.sleep(for: .milliseconds(300))
        task.cancel()
        switch await task.result {
        case .success: Issue.record("a cancelled send succeeded")
        case .failure(let error):
            #expect(error as? NavigationError == .cancelled, "\(error)")
        }
        // Not cancelled, the request would wait its 60 s: the bound is far from both.
        #expect(ContinuousClock.now - started < .seconds(30), "the request was not cancelled with its task")
        // Not applied (cancelled before it was sent), and the next send works.
        let step = try await driver.send(.selectPhoto(1))
        #expect(step.session.version == 2)
    }

    @Test("a double tap's callers are cancelled each on their own: either one cancelled gets .cancelled at once while the other gets the answer; the request goes once, and is cancelled only when both have gone", arguments: [0, 1])
    func cancellationPerCaller(cancelled: Int) async throws {
        let server = try await LiveServer()
        defer { server.stop() }
        let transport = FaultyTransport(breaking: "act", with: [.delayed])
        let driver = NavigationDriver(serverURL: server.url, transport: transport)
        try await driver.start()
        let first = Task { try await driver.send(.selectPhoto(1)) }
        // The first send's request is in flight (in its 30 s wait) before the second joins it.
        let limit = ContinuousClock.now + .seconds(30)
        while !transport.operations.withLock({ $0.contains("act") }), ContinuousClock.now < limit { try await Task.sleep(for: .milliseconds(20)) }
        let second = Task { try await driver.send(.selectPhoto(1)) }
        try await Task.sleep(for: .seconds(1))
        let (gone, kept) = cancelled == 0 ? (first, second) : (second, first)
        gone.cancel()
        switch await gone.result {
        case .success: Issue.record("the cancelled caller (\(cancelled == 0 ? "first" : "joined")) got the answer")
        case .failure(let error): #expect(error as? NavigationError == .cancelled, "\(error)")
        }
        let goneAt = ContinuousClock.now
        switch await kept.result {
        case .success(let step): #expect(step.session.version == 2, "the other caller's answer")
        case .failure(let error): Issue.record("the caller still waiting got \(error)")
        }
        // Ordered, not timed: the cancelled caller was answered before the request even went
        // (it waits 30 s first), so it did not wait for the answer.
        let sentAt = try #require(transport.delayedSentAt.withLock { $0 }, "the request never went")
        #expect(goneAt < sentAt, "the cancelled caller waited for the request")
        #expect(transport.operations.withLock { $0.filter { $0 == "act" }.count } == 1, "a double tap sent twice")
    }

    @Test("a double tap whose callers are both cancelled cancels its request: nothing is applied, and the driver goes on")
    func bothCallersCancelled() async throws {
        let server = try await LiveServer()
        defer { server.stop() }
        let transport = FaultyTransport(breaking: "act", with: [.slow])
        let driver = NavigationDriver(serverURL: server.url, transport: transport)
        try await driver.start()
        let started = ContinuousClock.now
        let first = Task { try await driver.send(.selectPhoto(1)) }
        let second = Task { try await driver.send(.selectPhoto(1)) }
        try await Task.sleep(for: .milliseconds(300))
        second.cancel()
        first.cancel()
        for task in [first, second] {
            if case .success = await task.result { Issue.record("a cancelled caller got an answer") }
        }
        // The next send waits for the one in flight: it goes at once only if the request was cancelled.
        let step = try await driver.send(.selectPhoto(1))
        #expect(ContinuousClock.now - started < .seconds(30), "the request was not cancelled when its last caller went")
        #expect(step.session.version == 2, "the cancelled request was not applied")
    }
}
