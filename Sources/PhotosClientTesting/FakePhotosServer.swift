import Foundation
import HTTPTypes
import Navigation
import OpenAPIRuntime
import PhotosClient
import PhotosModel

/// A photosd in memory, for an app's own tests and SwiftUI previews: a `ClientTransport` that
/// answers `NavigationDriver` (and the generated `Client`) with photosd's own navigation core —
/// the same coordinators, screens, flows, experiments and JSON — over a catalogue and users the
/// test sets. No network, no database, no process.
///
/// ```swift
/// let server = try FakePhotosServer(users: ["alice": "wonderland"])
/// let driver = server.driver()
/// try await driver.start()
/// let step = try await driver.send(.selectPhoto(2))   // push photo 2, as photosd answers
/// ```
///
/// What it serves: the session API (`createSession`, `getSession`, `act` with `expectVersion`
/// and `Idempotency-Key`, `sessionEvents`, `sessionChanges`), with session secrets, and the
/// catalogue (`listPhotos`, `getPhoto`, without `purchased`). Anything else is answered `501`
/// with a JSON error. photosd's limits are there when asked for (`Limits`: change-feed waits
/// open at once, sessions created per minute, failed sign-ins per username — every driver on
/// one fake is one address, like phones behind one carrier NAT), answered `429` with
/// `Retry-After` as photosd answers them; any operation can be refused once or more with a
/// `429` or a `503` (`refuseNext`), for an app's retry and "try later" paths. What it leaves out:
/// receipts and the log. A session ends when the test says so (`endSession`), as an idle one
/// does on a real server.
public final class FakePhotosServer: ClientTransport, Sendable {
    /// The URL drivers on this server use (nothing listens there).
    public static let serverURL = URL(string: "https://photosd.fake")!

    /// The world: photos, users, purchases, tokens, sessions and their audit rows.
    let world: InMemorySessions
    /// What HTTP adds to it: secrets, idempotency, ended sessions, limits, scripted refusals.
    let http: FakeHTTPState

    /// photosd's limits, as the fake applies them to everything its drivers send (one address).
    /// Nil: no limit (the default, so that a test meets a limit only when it asks for one).
    public struct Limits: Sendable, Hashable {
        /// Change-feed waits open at once (photosd: `limits.longPollsPerAddress`, 16); beyond,
        /// `429` with `Retry-After` = the wait asked for.
        public var longPolls: Int?
        /// Sessions created per minute (photosd: `limits.sessionsPerMinutePerAddress`, 120);
        /// beyond, `429` with `Retry-After` until the oldest is a minute old.
        public var sessionsPerMinute: Int?
        /// Failed sign-ins per username within `signInWindowSeconds` (photosd:
        /// `auth.signInMaxAttempts`, 5 in 300 s); beyond, `429` before the password is checked.
        public var failedSignIns: Int?
        /// The window failed sign-ins are counted in.
        public var signInWindowSeconds: Int

        /// Limits; nil for none.
        public init(longPolls: Int? = nil, sessionsPerMinute: Int? = nil, failedSignIns: Int? = nil, signInWindowSeconds: Int = 300) {
            self.longPolls = longPolls
            self.sessionsPerMinute = sessionsPerMinute
            self.failedSignIns = failedSignIns
            self.signInWindowSeconds = signInWindowSeconds
        }

        /// No limits.
        public static let none = Limits()
        /// photosd's defaults.
        public static let photosd = Limits(longPolls: 16, sessionsPerMinute: 120, failedSignIns: 5)
    }

    /// A refusal scripted for an operation (`refuseNext`).
    public enum Refusal: Sendable, Hashable {
        /// `429 too_many_attempts` with `Retry-After`.
        case tooManyAttempts(retryAfter: Int)
        /// `503 unavailable` with `Retry-After` (storage that cannot take the write; nothing is
        /// applied): `NavigationDriver` retries it under its `RetryPolicy`.
        case unavailable(retryAfter: Int)
    }

    /// A server with `photos` (by default photosd's demo catalogue, photos 1–5, as
    /// `photosd --seed-demo` has them), `users` (username → password) and `limits` (none by
    /// default; `.photosd` for photosd's). Throws for a username or password photosd would refuse.
    public init(photos: [NewPhoto] = NewPhoto.demoCatalogue, users: [String: String] = [:], limits: Limits = .none) throws {
        let catalogue = photos.enumerated().map { index, photo in
            PhotosModel.Photo(id: Int64(index + 1), title: photo.title, url: photo.url ?? Self.defaultURL(photo.title), priceCents: photo.priceCents)
        }
        world = try InMemorySessions(photos: catalogue, users: users, clock: Date())
        http = FakeHTTPState(limits: limits)
    }

    /// The URL photosd's catalogue gives a photo added without one (`PhotoRules.defaultURL`).
    static func defaultURL(_ title: String) -> String {
        var url: [UInt8] = []
        Array(title.utf8).withUnsafeBufferPointer { PhotoRules.defaultURL(title: $0, into: &url) }
        return String(decoding: url, as: UTF8.self)
    }

    /// A driver on this server.
    public func driver(
        retry: RetryPolicy = RetryPolicy(), store: (any SessionStore)? = nil, log: (@Sendable (NavigationLog) -> Void)? = nil
    ) -> NavigationDriver {
        NavigationDriver(serverURL: Self.serverURL, retry: retry, transport: self, store: store, log: log)
    }

    // MARK: What a test does outside the app

    /// Adds a user.
    public func addUser(_ username: String, password: String) async throws {
        try await world.addUser(username, password: password)
    }

    /// Starts a flow experiment, as `photos-admin experiments add NAME --point POINT --variants
    /// VARIANTS` does (`"buy.presentation"`, `"push:50,modal:50"`).
    public func addExperiment(_ name: String, point: String, variants: String) async throws {
        guard let variationPoint = VariationPoint(rawValue: point) else {
            throw PhotosError.badRequest("no variation point \(point); points are \(VariationPoint.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        guard Experiment.isValidName(name) else { throw PhotosError.badRequest("\(name) cannot name an experiment") }
        await world.addExperiment(Experiment(name: name, point: variationPoint, variants: try Experiment.parseVariants(variants, for: variationPoint)))
    }

    /// Ends a session, as the server does after it was idle too long: from now on every request
    /// on it is answered `410 session_expired` (an app's `startOver()` path).
    public func endSession(_ id: String) async {
        await http.end(id)
    }

    /// How many change-feed waits are open now (an app's `follow()` holds one): what a test
    /// waits for before it counts on the app following.
    public var openChangeFeedWaits: Int {
        get async { await http.openLongPolls }
    }

    /// Refuses the next `times` requests of `operationID` (`createSession`, `getSession`, `act`,
    /// `sessionChanges`, …) with `refusal`, before anything is applied; the ones after are
    /// answered as usual.
    public func refuseNext(_ operationID: String, with refusal: Refusal, times: Int = 1) async {
        await http.script(operationID, refusal, times: times)
    }

    /// Signs `username` into a session from outside the app (an operator, another device): the
    /// session changes, and its change feed says so.
    public func signIn(_ username: String, intoSession id: String) async throws {
        _ = try await world.operatorSignIn(sessionID: id, username: username, actor: .operator("fake"))
        await http.changed()
    }

    // MARK: ClientTransport

    public func send(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws -> (HTTPResponse, HTTPBody?) {
        var bytes = Data()
        if let body { bytes = try await Data(collecting: body, upTo: 1 << 20) }
        do {
            return try await answer(request, body: bytes, operationID: operationID)
        } catch let error as PhotosError {
            return Self.error(error)
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            // As photosd answers anything unexpected: 500, without the details.
            return Self.error(PhotosError(.internal, "internal error"))
        }
    }

    /// The answer to one request, as photosd gives it.
    private func answer(_ request: HTTPRequest, body: Data, operationID: String) async throws -> (HTTPResponse, HTTPBody?) {
        let query = Self.query(request.path ?? "")
        switch await http.scripted(operationID) {
        case .tooManyAttempts(let retryAfter)?:
            throw PhotosError.tooManyRequests("refused by the test (FakePhotosServer.refuseNext); retry in \(retryAfter) s", retryAfter: retryAfter)
        case .unavailable(let retryAfter)?:
            throw PhotosError(.unavailable, "storage is unavailable (FakePhotosServer.refuseNext); retry in \(retryAfter) s", retryAfter: retryAfter)
        case nil: break
        }
        switch operationID {
        case "createSession":
            if let wait = await http.admitSession(at: .now) {
                throw PhotosError.tooManyRequests("too many sessions created from this address; retry in \(wait) s", retryAfter: wait)
            }
            let fields = try Self.object(body, allowEmpty: true)
            let layout = try (fields["layout"] as? String).map(SessionLayout.init(parsing:)) ?? .stack
            let link = try (fields["link"] as? String).map(DeepLink.init(parsing:))
            let result = try await world.createSession(layout: layout, link: link, actor: .client)
            let secret = SecureToken.random(byteCount: 32)
            await http.created(result.session.id, secret: secret)
            return Self.response(201, result.session.jsonText(sessionSecret: secret), headers: [.location: "/v1/sessions/\(result.session.id)"])
        case "getSession":
            let id = try await authorized(request)
            return Self.response(200, try await world.session(id: id).jsonText)
        case "act":
            let id = try await authorized(request)
            let key = request.headerFields[HTTPField.Name("Idempotency-Key")!]
            if let key, let earlier = await http.answer(to: key, in: id) { return Self.response(200, earlier) }
            let fields = try Self.object(body, allowEmpty: false)
            guard let name = (fields["action"] as? String).flatMap(ActionName.init(rawValue:)) else {
                throw PhotosError.badRequest("unknown action \"\(String(describing: fields["action"] ?? "").prefix(40))\"; actions are \(ActionName.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            let action = ClientAction(
                name, photoId: (fields["photoId"] as? NSNumber)?.int64Value, username: fields["username"] as? String, password: fields["password"] as? String,
                tab: try (fields["tab"] as? String).map(TabName.init(parsing:)), link: try (fields["link"] as? String).map(DeepLink.init(parsing:)))
            let expected = (fields["expectVersion"] as? NSNumber)?.intValue
            let username = name == .submit ? action.username : nil
            if let username, let wait = await http.signInRefusal(for: username, at: .now) {
                throw PhotosError(.tooManyAttempts, "too many failed sign-ins for this username from this address; try again in \(wait) s", retryAfter: wait)
            }
            let result = try await world.apply(action, to: id, expectVersion: expected, idempotencyKey: key, actor: .client)
            await http.changed()
            if let username, result.error?.code == .invalidCredentials { await http.signInFailed(username, at: .now) }
            if let error = result.error {
                return Self.error(PhotosError(error.code, error.message), allowed: error.allowed?.map(\.rawValue))
            }
            let text = result.jsonText
            if let key { await http.keep(text, for: key, in: id) }
            return Self.response(200, text)
        case "sessionEvents":
            let id = try await authorized(request)
            let after = try Self.integer(query, "after", default: 0, in: 0...Int(Int32.max))
            let limit = try Self.integer(query, "limit", default: 100, in: 1...1_000)
            let events = try await world.events(sessionID: id, after: after, limit: limit)
            return Self.response(200, try Self.encode(["events": events]))
        case "sessionChanges":
            let id = try await authorized(request)
            let after = try Self.integer(query, "after", default: 0, in: 0...Int(Int32.max))
            let wait = try Self.integer(query, "wait", default: 25, in: 0...25)
            guard await http.takeLongPoll() else {
                let limit = http.limits.longPolls ?? 0
                throw PhotosError(.tooManyAttempts, "\(limit) change-feed waits are open from this address; retry in \(max(1, wait)) s", retryAfter: max(1, wait))
            }
            do {
                let deadline = ContinuousClock.now + .seconds(wait)
                var session = try await world.session(id: id)
                while session.version <= after, ContinuousClock.now < deadline {
                    await http.waitForChange(until: deadline)
                    try Task.checkCancellation()  // a cancelled wait returns at once: no spinning
                    if await http.hasEnded(id) { throw Self.ended() }
                    session = try await world.session(id: id)
                }
                await http.releaseLongPoll()  // given back before the answer, however it ends
                return Self.response(200, session.jsonText)
            } catch {
                await http.releaseLongPoll()
                throw error
            }
        case "listPhotos":
            let after = try Self.integer(query, "after", default: 0, in: 0...Int(Int32.max))
            let limit = try Self.integer(query, "limit", default: 50, in: 1...500)
            let page = await world.catalogue.filter { $0.id > after }.prefix(limit + 1)
            var object: [String: Any] = ["photos": page.prefix(limit).map(Self.photo)]
            if page.count > limit, let last = page.prefix(limit).last { object["nextAfter"] = last.id }
            return Self.response(200, try Self.json(object))
        case "getPhoto":
            let id = Int64(request.path?.split(separator: "/").last ?? "") ?? 0
            guard let photo = await world.catalogue.first(where: { $0.id == id }) else { throw PhotosError.notFound("no photo \(id)") }
            return Self.response(200, try Self.json(Self.photo(photo)))
        default:
            return Self.response(501, #"{"error":{"code":"internal","message":"FakePhotosServer does not serve \#(operationID)"}}"#)
        }
    }

    /// The session a request on `/v1/sessions/{id}` is for, once its secret is this session's.
    private func authorized(_ request: HTTPRequest) async throws -> String {
        let parts = (request.path ?? "").split(separator: "?")[0].split(separator: "/")
        let id = parts.count >= 3 ? String(parts[2]) : ""
        guard let header = request.headerFields[.authorization] else {
            throw PhotosError.unauthorized("requests on a session need Authorization: Session <sessionSecret>, as returned when it was created")
        }
        guard header.hasPrefix("Session "), await http.secretFits(String(header.dropFirst("Session ".count)), for: id) else {
            throw PhotosError.unauthorized("the session secret is not this session's")
        }
        if await http.hasEnded(id) { throw Self.ended() }
        return id
    }

    private static func ended() -> PhotosError {
        PhotosError(.sessionExpired, "this session ended after being idle; start a new one")
    }

    // MARK: HTTP's shapes

    static func response(_ status: Int, _ text: String, headers: HTTPFields = [:]) -> (HTTPResponse, HTTPBody?) {
        var fields = headers
        fields[.contentType] = "application/json; charset=utf-8"
        fields[HTTPField.Name("Photos-API-Version")!] = "1"
        return (HTTPResponse(status: .init(code: status), headerFields: fields), HTTPBody(text))
    }

    /// photosd's error body: `{"error": {"code", "message", "allowed"?}}` with the code's status.
    static func error(_ error: PhotosError, allowed: [String]? = nil) -> (HTTPResponse, HTTPBody?) {
        var detail: [String: Any] = ["code": error.code.rawValue, "message": error.message]
        if let allowed { detail["allowed"] = allowed }
        var headers: HTTPFields = [:]
        if let retryAfter = error.retryAfter { headers[.retryAfter] = String(retryAfter) }
        let text = (try? json(["error": detail])) ?? #"{"error":{"code":"internal","message":"internal error"}}"#
        return response(error.code.httpStatus, text, headers: headers)
    }

    static func photo(_ photo: PhotosModel.Photo) -> [String: Any] {
        ["id": photo.id, "title": photo.title, "url": photo.url, "priceCents": photo.priceCents]
    }

    static func json(_ object: Any) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]), as: UTF8.self)
    }

    static func encode(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// A JSON object body (`allowEmpty`: no body is `{}`).
    static func object(_ body: Data, allowEmpty: Bool) throws -> [String: Any] {
        if body.isEmpty, allowEmpty { return [:] }
        guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any] else {
            throw PhotosError.badRequest("the body must be a JSON object")
        }
        return object
    }

    static func query(_ path: String) -> [String: String] {
        guard let start = path.firstIndex(of: "?") else { return [:] }
        var fields: [String: String] = [:]
        for pair in path[path.index(after: start)...].split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            fields[String(parts[0])] = parts.count > 1 ? String(parts[1]).removingPercentEncoding : ""
        }
        return fields
    }

    static func integer(_ query: [String: String], _ name: String, default value: Int, in range: ClosedRange<Int>) throws -> Int {
        guard let text = query[name] else { return value }
        guard let number = Int(text), range.contains(number) else {
            throw PhotosError.badRequest("\(name) must be an integer from \(range.lowerBound) to \(range.upperBound)")
        }
        return number
    }
}

/// What HTTP adds to the world: each session's secret (as its SHA-256, as photosd keeps it),
/// the answers kept by idempotency key, the sessions a test ended, and a wake-up for the change
/// feed's waits.
actor FakeHTTPState {
    nonisolated let limits: FakePhotosServer.Limits
    private var secrets: [String: String] = [:]
    /// Change-feed waits open now.
    private var longPolls = 0
    /// When the sessions of the last minute were created.
    private var created: [ContinuousClock.Instant] = []
    /// Failed sign-ins by username, when.
    private var failedSignIns: [String: [ContinuousClock.Instant]] = [:]
    /// Refusals scripted by operation, in order.
    private var scripts: [String: [FakePhotosServer.Refusal]] = [:]

    init(limits: FakePhotosServer.Limits) { self.limits = limits }

    func script(_ operation: String, _ refusal: FakePhotosServer.Refusal, times: Int) {
        scripts[operation, default: []] += Array(repeating: refusal, count: max(0, times))
    }

    /// The next refusal scripted for `operation`, taken.
    func scripted(_ operation: String) -> FakePhotosServer.Refusal? {
        guard var queue = scripts[operation], !queue.isEmpty else { return nil }
        let next = queue.removeFirst()
        scripts[operation] = queue
        return next
    }

    /// Counts a session created now; the seconds to wait when the limit refuses it.
    func admitSession(at now: ContinuousClock.Instant) -> Int? {
        guard let limit = limits.sessionsPerMinute else { return nil }
        created.removeAll { now - $0 >= .seconds(60) }
        guard created.count >= limit, let oldest = created.first else {
            created.append(now)
            return nil
        }
        return max(1, Int(((oldest + .seconds(60)) - now).components.seconds) + 1)
    }

    /// The seconds to wait when `username` has failed too often within the window.
    func signInRefusal(for username: String, at now: ContinuousClock.Instant) -> Int? {
        guard let limit = limits.failedSignIns else { return nil }
        let window = Duration.seconds(limits.signInWindowSeconds)
        let recent = (failedSignIns[username] ?? []).filter { now - $0 < window }
        failedSignIns[username] = recent
        guard recent.count >= limit, let oldest = recent.first else { return nil }
        return max(1, Int(((oldest + window) - now).components.seconds) + 1)
    }

    func signInFailed(_ username: String, at now: ContinuousClock.Instant) {
        failedSignIns[username, default: []].append(now)
    }

    /// A place among the open change-feed waits; false when the limit is reached.
    func takeLongPoll() -> Bool {
        if let limit = limits.longPolls, longPolls >= limit { return false }
        longPolls += 1
        return true
    }

    func releaseLongPoll() { longPolls -= 1 }

    var openLongPolls: Int { longPolls }

    private var answers: [String: String] = [:]
    private var ended: Set<String> = []
    /// The change feed's waits, by number.
    private var waiting: [Int: CheckedContinuation<Void, Never>] = [:]
    private var waitsStarted = 0

    func created(_ id: String, secret: String) { secrets[id] = SecureToken.sha256Hex(secret) }

    func secretFits(_ secret: String, for id: String) -> Bool {
        secrets[id] != nil && secrets[id] == SecureToken.sha256Hex(secret)
    }

    func end(_ id: String) {
        ended.insert(id)
        changed()
    }

    func hasEnded(_ id: String) -> Bool { ended.contains(id) }

    func answer(to key: String, in id: String) -> String? { answers[id + "\u{0}" + key] }

    func keep(_ text: String, for key: String, in id: String) { answers[id + "\u{0}" + key] = text }

    /// Something changed: every change-feed wait looks again.
    func changed() {
        let woken = waiting
        waiting = [:]
        for continuation in woken.values { continuation.resume() }
    }

    /// Waits for the next change, until `deadline`, or until the waiting task is cancelled.
    func waitForChange(until deadline: ContinuousClock.Instant) async {
        waitsStarted += 1
        let number = waitsStarted
        let timer = Task {
            try? await Task.sleep(until: deadline)
            self.wake(number)
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { waiting[number] = $0 }
        } onCancel: {
            Task { await self.wake(number) }
        }
        timer.cancel()
    }

    private func wake(_ number: Int) {
        waiting.removeValue(forKey: number)?.resume()
    }
}
