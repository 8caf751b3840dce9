import AuditTrail
import DatabaseAccess
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import Navigation
import PhotosCore
import PhotosListener
import PhotosModel
import Sessions

extension ConsoleRoutes {
    /// Sessions shown per page, and audit rows per page of a session's timeline.
    static let sessionsPerPage = 50
    static let stepsPerPage = 200

    func addSessionRoutes(to router: Router<ConsoleRequestContext>) {
        router.get("/console/sessions") { request, context in try await self.sessionsPage(request, context: context) }
        router.get("/console/sessions/live") { request, context in try await self.sessionsLive(request, context: context) }
        router.get("/console/sessions/:id") { request, context in try await self.sessionPage(request, context: context) }
        router.get("/console/sessions/:id/live") { request, context in try await self.trailLive(request, context: context) }
        router.post("/console/sessions/:id/sign-in") { request, context in
            try await self.act(request, context: context) { id, form, actor in
                guard let username = form["username"], !username.isEmpty, username.utf8.count <= 128 else {
                    throw ConsoleRefusal(status: .badRequest, message: "Name the user to sign the session in as.")
                }
                _ = try await services.sessions.operatorSignIn(sessionID: id, username: username, actor: actor)
                return "signed-in"
            }
        }
        router.post("/console/sessions/:id/purchase") { request, context in
            try await self.act(request, context: context) { id, _, actor in
                _ = try await services.sessions.operatorPurchase(sessionID: id, actor: actor)
                return "purchased"
            }
        }
    }

    // MARK: The list

    private func sessionsPage(_ request: Request, context: ConsoleRequestContext) async throws -> Response {
        let session = try context.requireSession()
        let query = request.uri.queryParameters
        var filter = ConsoleQueries.SessionFilter()
        func field(_ name: String, max: Int = 128) -> String? {
            guard let value = query.get(name), !value.isEmpty else { return nil }
            return String(value.prefix(max))
        }
        filter.username = field("user")
        filter.topScreen = field("screen").flatMap { ScreenKind(rawValue: $0) }?.rawValue
        filter.layout = field("layout").flatMap { SessionLayout(rawValue: $0) }?.rawValue
        if let since = field("since", max: 40) {
            guard let date = ISO8601Timestamp.parse(since) else {
                throw ConsoleRefusal(status: .badRequest, message: "Updated since takes a time like 2026-11-23T10:00:00Z or a date like 2026-11-23.")
            }
            filter.updatedSince = ISO8601Timestamp.string(from: date)
        }
        if let before = field("before", max: 200) {
            let parts = before.split(separator: "|", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { throw ConsoleRefusal(status: .badRequest, message: "That page link is not one the console made.") }
            filter.before = (parts[0], parts[1])
        }
        let limit = Self.sessionsPerPage
        let chosen = filter
        let (rows, newestAuditID) = try await services.database.read { connection in
            await (try ConsoleQueries.sessions(chosen, limit: limit + 1, on: connection), try ConsoleQueries.newestAuditID(on: connection))
        }
        var next: String?
        if rows.count > limit, let last = rows.dropLast().last {
            var components = URLComponents()
            components.path = "/console/sessions"
            components.queryItems = [
                ("user", filter.username), ("screen", filter.topScreen), ("layout", filter.layout), ("since", field("since", max: 40)),
                ("before", "\(last.createdAt)|\(last.id)"),
            ].compactMap { name, value in value.map { URLQueryItem(name: name, value: $0) } }
            next = components.string
        }
        let values: [String: Any] = [
            "sessions": rows.prefix(limit).map(\.values),
            "filter": ["user": filter.username ?? "", "screen": filter.topScreen ?? "", "layout": filter.layout ?? "", "since": field("since", max: 40) ?? ""],
            "screens": ScreenKind.allCases.map { ["value": $0.rawValue, "selected": $0.rawValue == filter.topScreen] },
            "layouts": SessionLayout.allCases.map { ["value": $0.rawValue, "selected": $0.rawValue == filter.layout] },
            "next": next as Any,
            "liveAfter": newestAuditID,
        ]
        return pages.page("sessions", title: "Sessions", values: values, session: session)
    }

    /// Server-sent events: each session an audit row was appended to since `after` (an audit row
    /// id; the event ids continue from it, so a reconnecting browser resumes where it was). Without
    /// `after` it starts at the newest row: it never replays history it was not asked for, and
    /// one poll reads at most `liveRowsPerPoll` audit rows' worth.
    private func sessionsLive(_ request: Request, context: ConsoleRequestContext) async throws -> Response {
        let database = services.database
        let given = try EventStream.start(request)
        let start: Int64
        if let given { start = given } else { start = try await AuditChains.readSettled(database) { _, settled in settled } }
        return try liveStream(request, context: context) { stream in
            var after = start
            while try await stream.waitForNextPoll() {
                let from = after
                let (changed, upTo) = try await AuditChains.readSettled(database) { connection, settled in
                    // `from` is the client's (up to Int64.max): step towards `settled` without overflow.
                    let upTo = settled - from > Self.liveRowsPerPoll ? from + Self.liveRowsPerPoll : max(from, settled)
                    return (try await ConsoleQueries.sessionsChanged(after: from, upTo: upTo, on: connection), upTo)
                }
                for row in changed { try await stream.send(event: "session", id: String(upTo), json: row.values) }
                after = max(after, upTo)
            }
        }
    }

    /// The most audit rows one poll of the sessions stream looks at.
    static let liveRowsPerPoll: Int64 = 5_000

    /// A live stream of the signed-in operator's: one of their `liveSlots`, and over at the
    /// first poll after their console session ends.
    private func liveStream(
        _ request: Request, context: ConsoleRequestContext, _ produce: @escaping @Sendable (inout EventStreamWriter) async throws -> Void
    ) throws -> Response {
        let session = try context.requireSession()
        let cookie = ConsoleCookies.value(ConsoleCookies.session, in: request.headers) ?? ""
        let (consoleSessions, slots, operatorID) = (self.consoleSessions, self.liveSlots, session.operator.id)
        try slots.takeForOperator(operatorID)
        return EventStream.response(
            isLive: { try await consoleSessions.isLive(cookie: cookie) }, commits: services.sessions.commits, ended: { slots.release(operatorID) },
            produce)
    }

    // MARK: One session

    /// The state `rows` replay to; a trail that cannot be replayed (an edited row) is refused,
    /// naming the step, never shown as a default.
    static func replayed(_ rows: [AuditRow], of id: String) throws -> SessionState {
        do {
            return try SessionReplay.state(from: rows)
        } catch let error as SessionReplay.ReplayError {
            throw ConsoleRefusal(status: .conflict, message: "Session \(id)'s trail cannot be replayed: \(error). Read its rows on the audit page.")
        }
    }

    private func sessionPage(_ request: Request, context: ConsoleRequestContext) async throws -> Response {
        let session = try context.requireSession()
        let id = try context.parameters.require("id")
        guard id.utf8.count <= 64 else { throw HTTPError(.notFound) }
        let query = request.uri.queryParameters
        let at = try query.get("at").map { text -> Int in
            guard let at = Int(text), at >= 1 else { throw ConsoleRefusal(status: .badRequest, message: "at= takes a step number, 1 or more.") }
            return at
        }
        let from = try query.get("from").map { text -> Int in
            guard let from = Int(text), from >= 1 else { throw ConsoleRefusal(status: .badRequest, message: "from= takes a step number, 1 or more.") }
            return from
        } ?? 1
        let view: SessionView
        var endedAt: String?
        switch try await services.sessions.lookup(id: id) {
        case .live(let live):
            view = live
        case .ended(let at):
            // Its row keeps no state: show where its trail left it.
            let rows = try await services.sessions.events(sessionID: id, after: 0, limit: 100_000)
            view = SessionView(id: id, version: 0, state: try Self.replayed(rows, of: id), owned: [])
            endedAt = at
        case .missing:
            throw ConsoleRefusal(status: .notFound, message: "There is no session \(id).")
        }
        let steps = try await services.sessions.events(sessionID: id, after: from - 1, limit: Self.stepsPerPage + 1)
        let lastSeq = try await services.database.read { connection in try await ConsoleQueries.lastSeq(of: id, on: connection) }
        var shown = view
        if let at {
            guard at <= lastSeq else { throw ConsoleRefusal(status: .notFound, message: "Session \(id) has \(lastSeq) steps, not \(at).") }
            let rows = try await services.sessions.events(sessionID: id, after: 0, limit: at)
            shown = SessionView(id: id, version: 0, state: try Self.replayed(rows, of: id), owned: [])
        }
        var values = SessionPresentation.values(shown, csrf: session.csrfToken)
        values["id"] = id
        values["version"] = view.version
        values["lastSeq"] = lastSeq
        values["asOf"] = at as Any
        values["canAct"] = session.operator.role == .operator && at == nil && endedAt == nil
        values["groups"] = SessionPresentation.timeline(Array(steps.prefix(Self.stepsPerPage)), current: at)
        let more = steps.count > Self.stepsPerPage
        values["olderSteps"] = more ? "/console/sessions/\(id)?from=\(from + Self.stepsPerPage)" as Any : nil as Any?
        // The trail follows live when its last page is shown.
        values["live"] = more ? "" : "/console/sessions/\(id)/live?after=\(lastSeq)"
        values["notice"] = switch query.get("done") {
        case "signed-in": "Signed in." as Any
        case "purchased": "Purchase completed." as Any
        default: nil as Any?
        }
        values["ended"] = endedAt.map { "Ended at \($0) after being idle. Shown as its trail left it." } as Any
        return pages.page("session", title: "Session \(id.prefix(8))", values: values, session: session)
    }

    /// Server-sent events: the session's audit rows after seq `after` (without it, from its newest
    /// row). A session that does not exist, or a reserved trail, is `404` — an answer the browser's
    /// `EventSource` does not retry.
    private func trailLive(_ request: Request, context: ConsoleRequestContext) async throws -> Response {
        _ = try context.requireSession()
        let id = try context.parameters.require("id")
        let given = try EventStream.start(request)
        guard id.utf8.count <= 64, !AuditTrails.isReserved(id),
              let lastSeq = try await services.database.read({ connection in try await ConsoleQueries.storedLastSeq(of: id, on: connection) })
        else { throw ConsoleRefusal(status: .notFound, message: "There is no session \(id).") }
        let start = given.map(Int.init) ?? lastSeq
        let sessions = services.sessions
        return try liveStream(request, context: context) { stream in
            var after = start
            while try await stream.waitForNextPoll() {
                for row in try await sessions.events(sessionID: id, after: after, limit: 500) {
                    try await stream.send(event: "step", id: String(row.seq), json: SessionPresentation.liveStep(row))
                    after = row.seq
                }
            }
        }
    }

    // MARK: Acting

    /// An operator action from a form: the CSRF token, the role, then `body` with the session id,
    /// the form and the actor (`operator:<name>`, as the CLI's); back to the session's page.
    private func act(
        _ request: Request, context: ConsoleRequestContext,
        _ body: @Sendable (String, ConsoleForm, AuditActor) async throws -> String
    ) async throws -> Response {
        let session = try context.requireSession()
        let form = try await ConsoleForm(request, context: context)
        try form.requireCSRF(session.csrfToken)
        try requireOperatorRole(session)
        let id = try context.parameters.require("id")
        let done: String
        do {
            done = try await body(id, form, .operator(session.operator.name))
        } catch let error as PhotosError {
            throw ConsoleRefusal(status: error.code == .notFound ? .notFound : .conflict, message: error.message)
        }
        logger.notice("console operator action", metadata: ["operator": "\(session.operator.name)", "action": "\(done)"])
        return ConsolePages.redirect("/console/sessions/\(id)?done=\(done)")
    }
}
