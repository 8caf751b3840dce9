import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import OpenAPIRuntime
import OpenAPIURLSession

/// Drives one photosd session for an app: creates it (or attaches to one), sends the user's
/// actions, and after each answer says what to do to the app's navigation, as an ordered list
/// of `NavigationCommand`s. The server decides the navigation; the app's coordinators follow.
///
/// Each action is one HTTP request (one round trip when nothing fails) carrying the session's
/// version as `expectVersion` and an `Idempotency-Key` made for that action: a `503` is retried
/// after its `Retry-After`, a transport failure after a short backoff, both with the same key,
/// so that an action is applied at most once (see `RetryPolicy`). Errors come out as
/// `NavigationError` values. A password passes through `send(.submit(…))` and is kept nowhere.
public actor NavigationDriver {
    /// The generated API client, for what the driver does not cover (catalogue, token API).
    public nonisolated let client: Client
    /// How failed requests are retried.
    public nonisolated let retry: RetryPolicy
    /// The session as the server last described it.
    public private(set) var session: Session?
    /// The session's id: also when its description could not be read (`undecodable`).
    public private(set) var sessionID: String?
    /// Where the session is kept between launches of the app (nil: nowhere).
    public nonisolated let store: (any SessionStore)?
    /// The logging hook: retries, the change feed's waits, answers that cannot be read, a
    /// store that fails.
    public nonisolated let log: (@Sendable (NavigationLog) -> Void)?
    /// Keeps the id and secret of a session just created, whatever its answer holds.
    private nonisolated let created: CreatedSessionMiddleware
    /// The session's secret: its credential, sent as `Authorization: Session <secret>` on
    /// every request on it. `start` receives it once; keep it as you would a password (on iOS,
    /// in the Keychain, beside the session id) to `attach` again after the app restarts.
    public private(set) var sessionSecret: String?
    /// Sends the secret with the session's requests.
    private nonisolated let credential: SessionSecretMiddleware
    /// What the app shows: the navigation every command so far led to.
    public private(set) var shown: NavigationState = NavigationState(stacks: [])

    /// What one action did.
    public struct Step: Sendable {
        /// The session after the action.
        public var session: Session
        /// What to do to the app's navigation, in order.
        public var commands: [NavigationCommand]
        /// What happened (`navigated`, `signedIn`, `purchased`, `alreadyOwned`, …).
        public var outcome: Outcome
        /// The audit rows the action wrote.
        public var events: [AuditRow]
        /// After a successful sign-in, the bearer token (shown once; for the catalogue and token
        /// API). The driver does not keep it.
        public var token: String?

        /// What the app should show, per container (`session.navigation`): for an app that sets
        /// each stack in one go rather than following `commands`.
        public var target: NavigationState { session.navigation }
    }

    /// A driver for the photosd at `serverURL` (e.g. `http://127.0.0.1:8080`), over `transport`:
    /// by default a URLSession of the driver's own, so that its change feed's long poll never
    /// holds a connection another driver's requests wait for. With a `store`, the session
    /// outlives the app (`resume()`, `startOver()`); `log` hears what the driver does on its own
    /// (retries, the feed's waits) and what it could not do.
    public init(
        serverURL: URL, retry: RetryPolicy = RetryPolicy(), transport: (any ClientTransport)? = nil,
        store: (any SessionStore)? = nil, log: (@Sendable (NavigationLog) -> Void)? = nil
    ) {
        let credential = SessionSecretMiddleware()
        let created = CreatedSessionMiddleware()
        self.credential = credential
        self.created = created
        let transport = transport ?? URLSessionTransport(configuration: .init(session: URLSession(configuration: .default)))
        self.client = Client(serverURL: serverURL, transport: transport, middlewares: [APIVersionMiddleware(), credential, created])
        self.retry = retry
        self.store = store
        self.log = log
    }

    // MARK: Sessions

    /// Creates a session (`layout` stack or tabs), optionally already at a deep link (`/photos/3/buy`),
    /// and returns it; `shown` becomes its navigation (the app builds its first screens from it),
    /// `sessionSecret` its credential, and the store (if any) keeps it.
    ///
    /// When the session was created but its answer cannot be read (`undecodable`), the session
    /// is kept all the same (`sessionID`, `sessionSecret`, the store): nothing of it is lost.
    @discardableResult
    public func start(layout: Layout = .stack, link: String? = nil) async throws(NavigationError) -> Session {
        let created = try await create(layout: layout, link: link)
        shown = created.navigation
        return created
    }

    /// `POST /v1/sessions`: the new session becomes this driver's (and the store's); `shown` is
    /// left to the caller.
    private func create(layout: Layout, link: String?) async throws(NavigationError) -> Session {
        let body = Components.Schemas.NewSessionRequest(layout: layout.generated(), link: link)
        _ = self.created.take()
        let answer: Components.Schemas.NewSession
        do {
            answer = try await createSession(body)
        } catch {
            if case .undecodable = error, let (id, secret) = self.created.take() {
                // The session exists: keep what its answer held that matters, and say the rest.
                take(id: id, secret: secret, layout: layout, session: nil)
            }
            throw error
        }
        let created = Session(answer.value1)
        take(id: created.id, secret: answer.value2.sessionSecret, layout: created.layout, session: created)
        return created
    }

    /// Makes `id` this driver's session, with its secret, and keeps it in the store.
    private func take(id: String, secret: String, layout: Layout, session new: Session?) {
        sessionID = id
        sessionSecret = secret
        credential.set(secret)
        session = new
        keep(StoredSession(id: id, secret: secret, layout: layout, session: new))
    }

    /// Saves `stored` in the store, if there is one; a failure is logged (the session goes on).
    private func keep(_ stored: StoredSession) {
        guard let store else { return }
        do {
            try store.save(stored)
        } catch {
            log?(NavigationLog(level: .warning, operation: "store", message: "cannot keep the session: \(error)"))
        }
    }

    private func createSession(_ body: Components.Schemas.NewSessionRequest) async throws(NavigationError) -> Components.Schemas.NewSession {
        try await withRetries("createSession") { [client] () async throws -> Attempt<Components.Schemas.NewSession> in
            switch try await client.createSession(body: .json(body)) {
            case .created(let answer): return .done(try answer.body.json)
            case .badRequest(let answer): throw Self.failure(400, try? answer.body.json)
            case .notFound(let answer): throw Self.failure(404, try? answer.body.json)
            case .requestTimeout(let answer): throw Self.failure(408, try? answer.body.json)
            case .contentTooLarge(let answer): throw Self.failure(413, try? answer.body.json)
            case .unsupportedMediaType(let answer): throw Self.failure(415, try? answer.body.json)
            case .tooManyRequests(let answer): throw Self.failure(429, try? answer.body.json, retryAfter: answer.headers.Retry_hyphen_After)
            case .internalServerError(let answer): throw Self.failure(500, try? answer.body.json)
            case .serviceUnavailable(let answer): return .retry(Self.failure(503, try? answer.body.json, retryAfter: answer.headers.Retry_hyphen_After))
            case .undocumented(let status, _): throw Self.undocumented(status)
            }
        }
    }

    /// Attaches to an existing session (after the app restarts, or on a second device), with the
    /// secret its creation returned, and returns it; `shown` becomes its navigation. A wrong
    /// secret is `unauthorized`, and the driver stays on the session it had (if any).
    /// The store (if any) keeps it.
    @discardableResult
    public func attach(sessionID: String, secret: String) async throws(NavigationError) -> Session {
        let previous = (id: self.sessionID, secret: sessionSecret)
        credential.set(secret)
        sessionSecret = secret
        self.sessionID = sessionID
        let current: Session
        do {
            current = try await fetch(sessionID)
        } catch {
            // A failed attach (a wrong secret, an unknown session) leaves the driver on the
            // session it had, with that session's own secret.
            credential.set(previous.secret)
            sessionSecret = previous.secret
            self.sessionID = previous.id
            throw error
        }
        take(id: sessionID, secret: secret, layout: current.layout, session: current)
        shown = current.navigation
        return current
    }

    /// Attaches to the session the store keeps (after the app restarted) and returns the
    /// commands that build its screens from an app just launched: an empty root stack (a tabs
    /// session: no tab selected yet) gets `selectTab` for a tabs session, a `push` per screen of
    /// the root stack, then a `present` per modal stack. The tabs not selected are built from
    /// `session.navigation.screens(of:)`, as after `start`.
    ///
    /// `noSession` when no store is set or it keeps nothing; `sessionExpired` (410) or
    /// `unauthorized` (401, the secret no longer valid) when the session cannot go on: then
    /// `startOver()`.
    public func resume() async throws(NavigationError) -> [NavigationCommand] {
        guard let store else { throw .noSession }
        let stored: StoredSession?
        do {
            stored = try store.load()
        } catch {
            log?(NavigationLog(level: .warning, operation: "store", message: "cannot read the session kept: \(error)"))
            throw .noSession
        }
        guard let stored else { throw .noSession }
        credential.set(stored.secret)
        sessionSecret = stored.secret
        sessionID = stored.id
        let current = try await fetch(stored.id)
        shown = Self.launched(current.navigation)
        let commands = adopt(current)
        keep(StoredSession(id: stored.id, secret: stored.secret, layout: current.layout, session: current))
        return commands
    }

    /// Starts a new session in place of one that cannot go on (after a `401` or a `410
    /// session_expired`, or whenever the user starts over), in the layout of the last one (the
    /// store's, else `layout`, by default `.stack`); the store keeps the new one. Returns the
    /// commands from what the app shows to the new session's first screen (from an app just
    /// launched, as `resume()` has them, when it shows nothing yet).
    public func startOver(layout fallback: Layout = .stack) async throws(NavigationError) -> [NavigationCommand] {
        let layout = session?.layout ?? (try? store?.load())??.layout ?? fallback
        let created = try await create(layout: layout, link: nil)
        if shown.stacks.isEmpty { shown = Self.launched(created.navigation) }
        return adopt(created)
    }

    /// Reads the session again (after a `versionConflict`, or a transport failure whose fate is
    /// unknown) and returns the commands from what the app shows to what the server has.
    public func refresh() async throws(NavigationError) -> [NavigationCommand] {
        guard let id = sessionID else { throw .noSession }
        let current = try await fetch(id)
        return adopt(current)
    }

    // MARK: Actions

    /// The send in flight, if any: its action (and whether the user did it on screen already),
    /// its number, its task.
    private var inFlight: (action: Action, userDid: Bool, number: Int, task: Task<Step, any Error>)?
    /// Sends started so far (numbers `inFlight`).
    private var sendsStarted = 0

    /// Sends `action` to the session's top screen, expecting the session at the version last
    /// seen, and returns the new session with the commands that take the app there.
    ///
    /// Sends are serialized: another action waits for the one in flight, then goes with the
    /// version it left. The same action sent again while it is in flight (a double tap) is not
    /// sent twice: the second call gets the first one's answer. A cancelled caller gets
    /// `.cancelled` at once, whichever of the two it is; the request is cancelled only when every
    /// caller has gone (the other still gets the answer).
    ///
    /// After a `versionConflict` (the session changed elsewhere: another device, an operator)
    /// the driver has caught up already: the error carries the commands that show the session
    /// as it is now, and the next send goes with its version.
    public func send(_ action: Action) async throws(NavigationError) -> Step {
        try await send(action, userDid: false)
    }

    /// Sends what the user already did on screen, where the system changed the navigation
    /// before the app could ask: a swipe-back (`.back`), a swipe-down on a sheet (`.dismiss`), a
    /// tap on the tab bar (`.selectTab`). The commands returned leave that change out, so the
    /// app never pops twice. If the server refuses it, `refresh()` returns the commands that
    /// put the screen back. Any other action is sent as `send` would.
    public func userDid(_ action: Action) async throws(NavigationError) -> Step {
        try await send(action, userDid: true)
    }

    /// Returns once no send is in flight (`shown` is then the last answer's).
    func idle() async {
        while let current = inFlight { _ = try? await current.task.value }
    }

    private func send(_ action: Action, userDid: Bool) async throws(NavigationError) -> Step {
        while let current = inFlight {
            // A double tap joins the send in flight, unless every caller of that one has gone
            // (its request cancelled): then it waits for it to end and goes itself.
            if current.action == action, current.userDid == userDid, !current.task.isCancelled { return try await wait(for: current.number) }
            _ = try? await current.task.value
        }
        sendsStarted += 1
        let number = sendsStarted
        // On this actor: it starts once this call suspends (after `inFlight` is set), and clears
        // `inFlight` itself as it ends — before any waiter sees its value, so that a waiter never
        // finds a finished send still in flight (and spins on it) — then answers its callers.
        let task = Task { () async throws -> Step in
            let result: Result<Step, any Error>
            do {
                result = .success(try await self.perform(action, userDid: userDid))
            } catch {
                result = .failure(error)
            }
            self.finish(number, with: result)
            return try result.get()
        }
        inFlight = (action, userDid, number, task)
        return try await wait(for: number)
    }

    /// The callers waiting for a send's answer, by caller: a double tap's second call joins the
    /// first's send, and each caller can give up (be cancelled) on its own.
    private var callers: [Int: (send: Int, answer: CheckedContinuation<Result<Step, any Error>, Never>)] = [:]
    /// Callers so far (numbers `callers`).
    private var callersStarted = 0

    /// Waits for send `number`'s answer as one of its callers. A cancelled caller gets
    /// `.cancelled` at once; the request itself is cancelled only when every caller has gone.
    private func wait(for number: Int) async throws(NavigationError) -> Step {
        callersStarted += 1
        let caller = callersStarted
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (answer: CheckedContinuation<Result<Step, any Error>, Never>) in
                callers[caller] = (number, answer)
            }
        } onCancel: {
            Task { await self.callerLeft(caller) }
        }
        switch result {
        case .success(let step): return step
        case .failure(let error): throw NavigationError(error)
        }
    }

    /// A cancelled caller: answered `.cancelled`; its send cancelled if no caller is left.
    private func callerLeft(_ caller: Int) {
        guard let waiting = callers.removeValue(forKey: caller) else { return }
        waiting.answer.resume(returning: .failure(CancellationError()))
        if !callers.values.contains(where: { $0.send == waiting.send }), let current = inFlight, current.number == waiting.send {
            current.task.cancel()
        }
    }

    /// Send `number` ended: it is no longer in flight, and every caller still waiting gets `result`.
    private func finish(_ number: Int, with result: Result<Step, any Error>) {
        if inFlight?.number == number { inFlight = nil }
        for (caller, waiting) in callers where waiting.send == number {
            callers[caller] = nil
            waiting.answer.resume(returning: result)
        }
    }

    /// One action's request and what it changed (`send`, serialized).
    private func perform(_ action: Action, userDid: Bool) async throws(NavigationError) -> Step {
        guard let current = session else { throw sessionID == nil ? .noSession : .undecodable(operation: "getSession", field: "body", message: "the session's answer could not be read yet: refresh() first") }
        if userDid, let done = Self.gesture(for: action, on: shown) { shown.apply(done) }
        // One key per intent: every retry of this action carries it, so the server applies the
        // action once and answers each retry with the first answer.
        let key = UUID().uuidString
        let result: Components.Schemas.ActionResult
        do {
            result = try await act(action, key: key, on: current)
        } catch {
            switch error {
            case .versionConflict(let message, _):
                // Changed elsewhere: take the session as it is now, and say what that shows. A
                // re-read that fails is what the app hears: the driver did not catch up.
                let fresh = try await fetch(current.id)
                let commands = adopt(fresh)
                throw .versionConflict(message: message, caughtUp: commands)
            case .invalidCredentials, .tooManyAttempts, .actionNotAvailable:
                // A failed sign-in is recorded in the session (a new version, the same screens),
                // as is a sign-out by the server of a session whose token expired: catch up
                // with the version while the screens are what the app shows, so that the next
                // action is not refused as stale.
                await catchUp(current.id)
            default: break
            }
            throw error
        }
        let new = Session(result.session)
        let commands = adopt(new)
        return Step(session: new, commands: commands, outcome: Outcome(result.outcome), events: result.events, token: result.token)
    }

    /// What the system did on screen for a gesture the user made, if anything: a swipe-back
    /// pops one screen (never a stack's root), a swipe-down dismisses the top sheet, a tap on
    /// the tab bar selects the tab.
    static func gesture(for action: Action, on shown: NavigationState) -> NavigationCommand? {
        switch action {
        case .back where (shown.stacks.last?.screens.count ?? 0) > 1: .pop(1)
        case .dismiss where shown.stacks.count > 1: .dismiss
        case .selectTab(let tab) where shown.selectedTab != nil && shown.selectedTab != tab: .selectTab(tab)
        default: nil
        }
    }

    /// Takes a newer version of the session whose navigation is what the app shows already.
    private func catchUp(_ id: String) async {
        guard let fresh = try? await fetch(id), fresh.navigation.stacks == shown.stacks else { return }
        session = fresh
    }

    /// One action's request, with its retries.
    private func act(_ action: Action, key: String, on current: Session) async throws(NavigationError) -> Components.Schemas.ActionResult {
        let path = Operations.act.Input.Path(id: current.id)
        let headers = Operations.act.Input.Headers(Idempotency_hyphen_Key: key)
        return try await withRetries("act") { [client] () async throws -> Attempt<Components.Schemas.ActionResult> in
            // The request (with a password, for submit) lives only for this call.
            let body = action.request(expectVersion: current.version)
            switch try await client.act(path: path, headers: headers, body: .json(body)) {
            case .ok(let answer): return .done(try answer.body.json)
            case .badRequest(let answer): throw Self.failure(400, try? answer.body.json)
            case .unauthorized(let answer): throw Self.failure(401, try? answer.body.json)
            case .notFound(let answer): throw Self.failure(404, try? answer.body.json)
            case .conflict(let answer): throw Self.failure(409, try? answer.body.json)
            case .gone(let answer): throw Self.failure(410, try? answer.body.json)
            case .requestTimeout(let answer): throw Self.failure(408, try? answer.body.json)
            case .contentTooLarge(let answer): throw Self.failure(413, try? answer.body.json)
            case .unsupportedMediaType(let answer): throw Self.failure(415, try? answer.body.json)
            case .tooManyRequests(let answer): throw Self.failure(429, try? answer.body.json, retryAfter: answer.headers.Retry_hyphen_After)
            case .internalServerError(let answer): throw Self.failure(500, try? answer.body.json)
            case .serviceUnavailable(let answer): return .retry(Self.failure(503, try? answer.body.json, retryAfter: answer.headers.Retry_hyphen_After))
            case .undocumented(let status, _): throw Self.undocumented(status)
            }
        }
    }

    /// The session's audit rows after `seq` (its trail, as `GET /v1/sessions/{id}/events` serves it).
    public func events(after seq: Int = 0, limit: Int = 100) async throws(NavigationError) -> [AuditRow] {
        guard let id = sessionID else { throw .noSession }
        return try await withRetries("sessionEvents") { [client] () async throws -> Attempt<[AuditRow]> in
            switch try await client.sessionEvents(path: .init(id: id), query: .init(after: seq, limit: limit)) {
            case .ok(let answer): return .done(try answer.body.json.events)
            case .badRequest(let answer): throw Self.failure(400, try? answer.body.json)
            case .unauthorized(let answer): throw Self.failure(401, try? answer.body.json)
            case .notFound(let answer): throw Self.failure(404, try? answer.body.json)
            case .requestTimeout(let answer): throw Self.failure(408, try? answer.body.json)
            case .contentTooLarge(let answer): throw Self.failure(413, try? answer.body.json)
            case .internalServerError(let answer): throw Self.failure(500, try? answer.body.json)
            case .serviceUnavailable(let answer): return .retry(Self.failure(503, try? answer.body.json, retryAfter: answer.headers.Retry_hyphen_After))
            case .undocumented(let status, _): throw Self.undocumented(status)
            }
        }
    }

    // MARK: The change feed

    /// A change of the session made elsewhere (another device, an operator, the server), with
    /// the commands that show it.
    public struct Change: Sendable {
        /// The session's version after the change.
        public var version: Int { session.version }
        /// The session after the change.
        public var session: Session
        /// What to do to the app's navigation, in order (empty for a change of `feed` alone).
        public var commands: [NavigationCommand]
        /// How the feed follows the session now: `.live` (a long poll, answered within ~50 ms of
        /// a change) or `.polling` (the server refused the long poll: too many waits from this
        /// address; the session is read every `RetryPolicy.maxWaitSeconds` until it takes one
        /// again, so a change shows within that time). A change of it alone is reported too.
        public var feed: Feed = .live
    }

    /// How the change feed follows the session (`Change.feed`).
    public enum Feed: Sendable, Equatable {
        /// A long poll: changes show at once.
        case live
        /// The long poll was refused (`429`): the session is read every few seconds until
        /// `retryAfter` has passed, then the long poll is asked for again.
        case polling(retryAfter: Int)
    }

    /// The session's changes made elsewhere, as they happen, until the task iterating them is
    /// cancelled: each with the commands from what the app shows to the new navigation (the
    /// driver takes it, as `refresh()` would). Long polling on `GET /v1/sessions/{id}/changes`
    /// with the version last seen, so a lost connection resumes where it was (after a backoff
    /// that starts at `retry.transportBackoffSeconds`); a change this app's own `send` made is
    /// not reported again; after a `429` (too many waits open from one address) the session is
    /// read every `retry.maxWaitSeconds` until the server's `Retry-After` has passed (`Change.feed`
    /// is `.polling` meanwhile, and the switch is reported by itself). Ends
    /// with an error the feed cannot get past (`sessionExpired`, `unauthorized`, `noSession`,
    /// `undecodable`).
    public nonisolated func changes(wait seconds: Int = 25) -> AsyncThrowingStream<Change, any Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                var backoff = retry.transportBackoffSeconds
                var feed = Feed.live
                while !Task.isCancelled {
                    do {
                        guard let (id, version) = await self.followed() else { throw NavigationError.noSession }
                        let answer = try await self.waitForChange(id, after: version, wait: seconds)
                        backoff = retry.transportBackoffSeconds
                        if var change = await self.adoptFromFeed(answer) {
                            change.feed = .live
                            feed = .live
                            continuation.yield(change)
                        } else if feed != .live, let current = await self.session {
                            // Taken again: said even when nothing changed.
                            feed = .live
                            continuation.yield(Change(session: current, commands: [], feed: .live))
                        }
                    } catch {
                        let failure = Task.isCancelled ? .cancelled : NavigationError(error)
                        switch failure {
                        case .cancelled:
                            continuation.finish()
                            return
                        case .tooManyAttempts(let retryAfter, _):
                            // Too many waits open from this address (`limits.longPollsPerAddress`;
                            // phones behind one carrier NAT share one): the app is told, and the
                            // session is read every few seconds until the server's Retry-After has
                            // passed, rather than nothing seen for that long.
                            let refusedFor = max(1, retryAfter ?? 1)
                            if feed == .live {
                                log?(NavigationLog(
                                    level: .warning, operation: "sessionChanges",
                                    message: "\(failure); reading the session every \(Self.seconds(retry.maxWaitSeconds)) until the feed is taken again", error: failure))
                            }
                            feed = .polling(retryAfter: refusedFor)
                            if let change = await self.poll(feed: feed, announce: true) { continuation.yield(change) }
                            let until = ContinuousClock.now + .seconds(refusedFor)
                            while ContinuousClock.now < until, !Task.isCancelled {
                                try? await Task.sleep(for: .seconds(min(retry.delay(for: retry.maxWaitSeconds), Double((until - ContinuousClock.now).components.seconds) + 0.05)))
                                if let change = await self.poll(feed: feed, announce: false) { continuation.yield(change) }
                            }
                        case .transport, .unavailable, .server:
                            let wait = retry.delay(for: backoff)
                            log?(NavigationLog(level: .info, operation: "sessionChanges", message: "\(failure); polling again in \(Self.seconds(wait))", error: failure))
                            try? await Task.sleep(for: .seconds(wait))
                            backoff *= 2
                        default:
                            log?(NavigationLog(level: .warning, operation: "sessionChanges", message: "the change feed ended: \(failure)", error: failure))
                            continuation.finish(throwing: failure)
                            return
                        }
                    }
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// The session followed and the version the app has (a session whose answer could not be
    /// read is followed from version 0: its first change brings it).
    private func followed() -> (String, Int)? {
        guard let sessionID else { return nil }
        return (sessionID, session?.version ?? 0)
    }

    /// One long poll (no retries: the feed's loop retries).
    private nonisolated func waitForChange(_ id: String, after version: Int, wait: Int) async throws(NavigationError) -> Session {
        do {
            switch try await client.sessionChanges(path: .init(id: id), query: .init(after: version, wait: wait)) {
            case .ok(let answer): return Session(try answer.body.json)
            case .badRequest(let answer): throw Self.failure(400, try? answer.body.json)
            case .unauthorized(let answer): throw Self.failure(401, try? answer.body.json)
            case .notFound(let answer): throw Self.failure(404, try? answer.body.json)
            case .gone(let answer): throw Self.failure(410, try? answer.body.json)
            case .requestTimeout(let answer): throw Self.failure(408, try? answer.body.json)
            case .contentTooLarge(let answer): throw Self.failure(413, try? answer.body.json)
            case .tooManyRequests(let answer): throw Self.failure(429, try? answer.body.json, retryAfter: answer.headers.Retry_hyphen_After)
            case .internalServerError(let answer): throw Self.failure(500, try? answer.body.json)
            case .serviceUnavailable(let answer): throw Self.failure(503, try? answer.body.json, retryAfter: answer.headers.Retry_hyphen_After)
            case .undocumented(let status, _): throw Self.undocumented(status)
            }
        } catch let error as NavigationError {
            throw error
        } catch {
            throw NavigationError(error)
        }
    }

    /// Takes a session the feed brought when it is newer than what the app has and no send is
    /// in flight (a send's own answer brings its change, with its commands).
    private func adoptFromFeed(_ new: Session) -> Change? {
        guard inFlight == nil, new.id == sessionID, new.version > session?.version ?? 0 else { return nil }
        return Change(session: new, commands: adopt(new))
    }

    /// One plain read of the session while the feed is refused: a change if it moved on (or,
    /// with `announce`, the session as it is, to say the feed is `feed` now); nil otherwise, and
    /// on any failure (the next read tries again).
    private func poll(feed: Feed, announce: Bool) async -> Change? {
        guard let id = sessionID, let current = try? await fetch(id) else {
            return announce ? session.map { Change(session: $0, commands: [], feed: feed) } : nil
        }
        if var change = adoptFromFeed(current) {
            change.feed = feed
            return change
        }
        return announce ? session.map { Change(session: $0, commands: [], feed: feed) } : nil
    }

    // MARK: Helpers

    /// What an app shows just after its launch, for `navigation`: an empty root stack (in a
    /// tabs session nothing selected, and every tab but the one to select as it was left).
    static func launched(_ navigation: NavigationState) -> NavigationState {
        guard let selected = navigation.selectedTab else { return NavigationState(stacks: [PresentedStack(presentation: .root, screens: [])]) }
        return NavigationState(stacks: [], tabs: navigation.tabs.filter { $0.key != selected })
    }

    /// Takes `new` as the session, and returns the commands from what the app shows to it. The
    /// store keeps it too: an app launched offline shows its last screens from there.
    private func adopt(_ new: Session) -> [NavigationCommand] {
        let commands = NavigationCommand.diff(from: shown, to: new.navigation)
        for command in commands { shown.apply(command) }
        session = new
        if store != nil, let sessionID, let sessionSecret, new.id == sessionID {
            keep(StoredSession(id: sessionID, secret: sessionSecret, layout: new.layout, session: new))
        }
        return commands
    }

    private func fetch(_ id: String) async throws(NavigationError) -> Session {
        try await withRetries("getSession") { [client] () async throws -> Attempt<Session> in
            switch try await client.getSession(path: .init(id: id)) {
            case .ok(let answer): return .done(Session(try answer.body.json))
            case .badRequest(let answer): throw Self.failure(400, try? answer.body.json)
            case .unauthorized(let answer): throw Self.failure(401, try? answer.body.json)
            case .notFound(let answer): throw Self.failure(404, try? answer.body.json)
            case .gone(let answer): throw Self.failure(410, try? answer.body.json)
            case .requestTimeout(let answer): throw Self.failure(408, try? answer.body.json)
            case .contentTooLarge(let answer): throw Self.failure(413, try? answer.body.json)
            case .internalServerError(let answer): throw Self.failure(500, try? answer.body.json)
            case .serviceUnavailable(let answer): return .retry(Self.failure(503, try? answer.body.json, retryAfter: answer.headers.Retry_hyphen_After))
            case .undocumented(let status, _): throw Self.undocumented(status)
            }
        }
    }

    /// What one attempt came to.
    private enum Attempt<T: Sendable>: Sendable {
        /// An answer to return.
        case done(T)
        /// A `503`: try again after its `Retry-After` (or give up with this error).
        case retry(NavigationError)
    }

    /// Runs `attempt` (of the API's `operation`) until it is done, it throws a `NavigationError`,
    /// or the policy's attempts are spent; a transport failure is retried after a backoff. Each
    /// retry is logged.
    private nonisolated func withRetries<T: Sendable>(
        _ operation: String, _ attempt: @Sendable () async throws -> Attempt<T>
    ) async throws(NavigationError) -> T {
        var backoff = retry.transportBackoffSeconds
        var last = NavigationError.transport(message: "no attempt made")
        for number in 1...retry.maxAttempts {
            let wait: Double
            do {
                switch try await attempt() {
                case .done(let value): return value
                case .retry(let error):
                    last = error
                    if case .unavailable(let retryAfter, _) = error { wait = Double(retryAfter ?? 1) } else { wait = 1 }
                }
            } catch let error as NavigationError {
                throw error
            } catch {
                let failure = Task.isCancelled ? NavigationError.cancelled : NavigationError(error)
                if case .undecodable = failure { log?(NavigationLog(level: .warning, operation: operation, message: "\(failure)", error: failure)) }
                guard case .transport = failure else { throw failure }
                last = failure
                wait = backoff
                backoff *= 2
            }
            guard number < retry.maxAttempts else { break }
            if Task.isCancelled { throw .cancelled }
            let delay = retry.delay(for: wait)
            log?(NavigationLog(
                level: .info, operation: operation,
                message: "\(last); trying again in \(Self.seconds(delay)) (attempt \(number + 1) of \(retry.maxAttempts))", error: last))
            try? await Task.sleep(for: .seconds(delay))
            if Task.isCancelled { throw .cancelled }
        }
        throw last
    }

    /// `1.1 s`.
    private static func seconds(_ value: Double) -> String {
        "\((value * 10).rounded() / 10) s"
    }

    /// True when `error` is a cancellation (of the task, or of the request under it).
    static func isCancellation(_ error: any Error) -> Bool {
        if error is CancellationError { return true }
        if let error = error as? URLError, error.code == .cancelled { return true }
        if let error = error as? ClientError { return isCancellation(error.underlyingError) }
        return false
    }

    /// True when the request failed on its way (no answer), not in reading an answer.
    static func isTransport(_ error: ClientError) -> Bool {
        error.response == nil && (error.underlyingError is URLError || error.underlyingError is POSIXError
            || error.causeDescription.localizedCaseInsensitiveContains("transport"))
    }

    private static func undocumented(_ status: Int) -> NavigationError {
        .server(status: status, code: nil, message: "photosd answered \(status), which docs/openapi.yaml does not describe")
    }

    /// The error an error answer stands for.
    static func failure(_ status: Int, _ body: Components.Schemas._Error?, retryAfter: Int? = nil) -> NavigationError {
        let message = body?.error.message ?? "HTTP \(status)"
        let code = body.map { $0.error.code.value1?.rawValue ?? $0.error.code.value2 ?? "" }
        switch body?.error.code.value1 {
        case .action_not_available?:
            // Like `Session.actions`: only what this client knows (it could not send the rest).
            let allowed = (body?.error.allowed ?? []).map(ActionName.init).filter(\.isKnown).map(\.rawValue)
            return .actionNotAvailable(allowed: allowed, message: message)
        case .version_conflict?: return .versionConflict(message: message, caughtUp: [])
        case .invalid_credentials?: return .invalidCredentials(message: message)
        case .unauthorized?: return .unauthorized(message: message)
        case .not_found?: return .notFound(message: message)
        case .session_expired?: return .sessionExpired(message: message)
        case .bad_request?: return .badRequest(message: message)
        case .too_many_attempts?: return .tooManyAttempts(retryAfter: retryAfter, message: message)
        case .unavailable?: return .unavailable(retryAfter: retryAfter, message: message)
        case .some: return .server(status: status, code: code, message: message)
        case nil: return .server(status: status, code: code?.isEmpty == false ? code : nil, message: message)
        }
    }
}
