import Foundation
import PhotosCore
import SQLiteStore

/// Runs the coordinator tree of every client session on the server.
///
/// Each action is applied in **one write transaction**: load the session (state + version),
/// rebuild the coordinator tree from the persisted state, deliver the action to the owner of the
/// top screen, let coordinators and services do their work, append every step to the audit
/// trail, and save the new state with version + 1. The state is plain JSON in `sessions.state`,
/// so a restarted process resumes every session exactly where it was.
public struct SessionCoordinator: Sendable {
    let database: any DatabaseStore
    let auth: AuthService
    let idempotency: IdempotencyStore
    let cache: StateCache

    /// Creates the coordinator over `database`, signing users in through `auth` (whose clock
    /// also stamps every step) and answering retries from `idempotency`.
    public init(database: any DatabaseStore, auth: AuthService, idempotency: IdempotencyStore) {
        self.database = database
        self.auth = auth
        self.idempotency = idempotency
        self.cache = StateCache()
    }

    var services: SessionServices { SessionServices(auth: auth) }

    // MARK: Sessions

    /// Starts a new session: `[photos]` with the coordinator tree `app` (stack layout), or a
    /// tab bar with one coordinator and stack per tab (tabs layout); with `link`, already at
    /// that place, built as if tapped. Throws `bad_request` for a link the layout does not have
    /// and `not_found` for a photo that does not exist, creating nothing.
    public func createSession(layout: SessionLayout = .stack, link: DeepLink? = nil, actor: AuditActor = .client) async throws -> ActionResult {
        try link?.check(for: layout)
        let id = SecureToken.random(byteCount: 18)
        let services = self.services
        let at = auth.timestamp()
        return try await database.write { connection in
            let context = NavigationContext(
                state: .started(layout: layout), trail: try AuditTrailWriter(sessionID: id, on: connection), actor: actor,
                connection: connection, services: services, credentialCheck: nil)
            context.record(.sessionStart, coordinator: nil, detail: layout == .stack ? [:] : ["layout": .string(layout.rawValue)])
            context.record(.coordinatorStart, coordinator: "app", detail: ["id": "app", "kind": "app"])
            let app = AppCoordinator(model: CoordinatorState(kind: .app, id: "app"), path: "app", context: context)
            app.start()
            if let link { try app.open(link) }
            var state = context.state
            state.coordinators = app.persisted
            state.refreshTop()
            try connection.execute(
                "INSERT INTO sessions (id, version, state, user_id, created_at, updated_at) VALUES (?, 1, ?, NULL, ?, ?)",
                id, state.jsonText, at, at)
            let rows = try context.trail.write(at: at)
            return ActionResult(
                session: try Self.view(id: id, version: 1, state: state, on: connection),
                events: rows, outcome: .navigated, token: nil, error: nil)
        }
    }

    /// The session as it is now. Throws `not_found`.
    public func session(id: String) async throws -> SessionView {
        try await database.read { connection in
            let session = try Self.load(id, on: connection)
            return try Self.view(id: id, version: session.version, state: session.state, on: connection)
        }
    }

    /// Audit rows of one client session after `seq`. Throws `not_found` for an unknown session
    /// and for the reserved trails (`api`, `operator`): they are not a client's to read (they name
    /// users and operators); operators read them with `photos-admin audit` or SQL.
    public func events(sessionID: String, after: Int = 0, limit: Int = 100) async throws -> [AuditRow] {
        try await database.read { connection in
            if try connection.queryOne("SELECT 1 FROM sessions WHERE id = ?", sessionID) == nil {
                throw PhotosError.notFound("no session \(sessionID.prefix(64))")
            }
            return try AuditLog.rows(sessionID: sessionID, after: after, limit: limit, on: connection)
        }
    }

    /// One line per session, newest first.
    public struct Summary: Codable, Sendable, Equatable {
        public var id: String
        public var version: Int
        public var username: String?
        public var top: ScreenKind?
        public var updatedAt: String
    }

    /// Lists sessions, most recently changed first.
    public func list(limit: Int = 100) async throws -> [Summary] {
        try await database.read { connection in
            let topScreen = connection.dialect == .postgres ? "s.state::jsonb #>> '{top,screen}'" : "json_extract(s.state, '$.top.screen')"
            return try connection.query(
                """
                SELECT s.id, s.version, u.username, \(topScreen), s.updated_at
                FROM sessions s LEFT JOIN users u ON u.id = s.user_id ORDER BY s.updated_at DESC, s.id LIMIT ?
                """, limit
            ).map { row in
                Summary(id: row.string(0), version: row.int(1), username: row.optionalString(2),
                        top: row.optionalString(3).flatMap(ScreenKind.init(rawValue:)), updatedAt: row.string(4))
            }
        }
    }

    // MARK: Actions

    /// Applies one client action. Throws for what changes nothing (`bad_request`, `not_found`,
    /// `version_conflict`); returns a result with `error` set for refusals that are recorded
    /// (`action_not_available`, `invalid_credentials`, `too_many_attempts`).
    public func apply(
        _ action: ClientAction, to sessionID: String, expectVersion: Int? = nil,
        idempotencyKey: String? = nil, actor: AuditActor = .client
    ) async throws -> ActionResult {
        if let idempotencyKey {
            guard (1...200).contains(idempotencyKey.utf8.count) else {
                throw PhotosError.badRequest("Idempotency-Key must be 1 to 200 bytes")
            }
            // A retry is answered before anything else: no password check, no sign-in limit.
            let now = auth.now()
            if let earlier = try await database.read({ connection in
                try idempotency.lookup(key: idempotencyKey, sessionID: sessionID, fingerprint: action.fingerprint, now: now, on: connection)
            }) {
                return earlier
            }
        }
        var request = ActionApplication(
            action: action, sessionID: sessionID, expectVersion: expectVersion, idempotencyKey: idempotencyKey,
            actor: actor, credentialCheck: nil)
        // bcrypt is slow: credentials are checked before the write transaction, when the session
        // is on a screen that takes them. If it gets there in between (another request moved
        // it), the transaction says so and the check is made then: at most a few rounds.
        var checkNow = false
        if action.name == .submit {
            try action.validateParameters()
            checkNow = try await database.read { connection in try Self.load(sessionID, on: connection).state.availableActions() }.contains(.submit)
        }
        for _ in 0..<3 {
            if checkNow { request.credentialCheck = await checkCredentials(action) }
            let prepared = request
            do {
                return try await database.write { connection in try applyInTransaction(prepared, on: connection) }
            } catch is CredentialsNotChecked {
                checkNow = true
            }
        }
        throw PhotosError(.conflict, "the session kept changing while the credentials were checked; retry")
    }

    /// Checks submitted credentials (bcrypt, off the event loops; counted by the sign-in limits).
    private func checkCredentials(_ action: ClientAction) async -> CredentialCheck {
        let username = action.username ?? ""
        do {
            return .valid(try await auth.authenticate(username: username, password: action.password ?? ""))
        } catch let error as PhotosError where error.code == .tooManyAttempts {
            return .limited(error, existingUser: await auth.existingUsername(username))
        } catch {
            return .invalid(existingUser: await auth.existingUsername(username))
        }
    }

    /// Signs a live session in as `username` on the operator's authority. If the session waits
    /// on a `signIn` screen, its flow resumes exactly as after a successful `submit`.
    public func operatorSignIn(sessionID: String, username: String, actor: AuditActor) async throws -> ActionResult {
        guard let user = try await auth.user(named: username) else { throw PhotosError.notFound("no user named \(username)") }
        return try await database.write { connection in
            let loaded = try Self.load(sessionID, forUpdate: true, on: connection)
            if let current = loaded.state.user { throw PhotosError(.conflict, "session \(sessionID) is already signed in as \(current.username)") }
            if loaded.state.availableActions().contains(.submit) {
                return try applyInTransaction(
                    ActionApplication(action: ClientAction(.submit, username: username), sessionID: sessionID, expectVersion: nil,
                                      idempotencyKey: nil, actor: actor, credentialCheck: .valid(user)),
                    on: connection)
            }
            return try mutate(loaded, sessionID: sessionID, actor: actor, on: connection) { context, _ in
                try context.signIn(user)
                return .accepted
            }
        }
    }

    /// Completes the `buy` screen of a live session on the operator's authority.
    public func operatorPurchase(sessionID: String, actor: AuditActor) async throws -> ActionResult {
        try await database.write { connection in
            let state = try Self.load(sessionID, forUpdate: true, on: connection).state
            guard let top = state.topScreen, top.screen == .buy else {
                throw PhotosError(.actionNotAvailable, "session \(sessionID) is on the \(state.topScreen?.screen.rawValue ?? "no") screen, not buy")
            }
            return try applyInTransaction(
                ActionApplication(action: ClientAction(.buy), sessionID: sessionID, expectVersion: nil,
                                  idempotencyKey: nil, actor: actor, credentialCheck: nil),
                on: connection)
        }
    }

    // MARK: The transaction

    /// One action on its way into the write transaction.
    struct ActionApplication: Sendable {
        var action: ClientAction
        var sessionID: String
        var expectVersion: Int?
        var idempotencyKey: String?
        var actor: AuditActor
        /// Set when the password was checked before the transaction (or by an operator).
        var credentialCheck: CredentialCheck?
    }

    /// Thrown inside the transaction when a `submit` reached a sign-in screen whose
    /// credentials were not checked beforehand (the session moved there meanwhile).
    struct CredentialsNotChecked: Error {}

    /// Applies one action inside the writer's transaction: idempotency, version, the action.
    func applyInTransaction(_ request: ActionApplication, on connection: any DatabaseConnection) throws -> ActionResult {
        let action = request.action
        let fingerprint = action.fingerprint
        let now = auth.now()
        // The session first, locked (PostgreSQL: other instances' actions on it wait here), then
        // the idempotency key: a retry that reached another instance finds the first answer.
        let loaded = try Self.load(request.sessionID, cache: cache, forUpdate: true, on: connection)
        if let key = request.idempotencyKey,
           let earlier = try idempotency.lookup(key: key, sessionID: request.sessionID, fingerprint: fingerprint, now: now, on: connection) {
            return earlier
        }
        if let expectVersion = request.expectVersion, expectVersion != loaded.version {
            throw PhotosError(.versionConflict, "session is at version \(loaded.version), not \(expectVersion)")
        }
        let result = try mutate(loaded, sessionID: request.sessionID, actor: request.actor, credentialCheck: request.credentialCheck, cache: cache, on: connection) { context, tree in
            let allowed = context.state.availableActions()
            // A link comes from outside the screens: accepted on every one, listed on none.
            guard let top = context.state.topScreen, allowed.contains(action.name) || action.name == .openLink else {
                context.record(.actionRejected, coordinator: nil, detail: action.auditDetail)
                return .rejected(allowed)
            }
            if action.name == .submit {
                guard request.credentialCheck != nil else { throw CredentialsNotChecked() }
            } else {
                try action.validateParameters()
            }
            guard let app = tree as? AppCoordinator else {
                throw SessionStateError(sessionID: request.sessionID, problem: "the root coordinator is not app")
            }
            if action.name == .openLink, let link = action.link {
                try link.check(for: context.state.sessionLayout)
                try app.open(link)  // recorded as link.open, not as an action
                return .accepted
            }
            let coordinators = Dictionary(uniqueKeysWithValues: tree.subtree.map { ($0.id, $0) })
            guard let owner = coordinators[top.owner] else {
                throw SessionStateError(sessionID: request.sessionID, problem: "no coordinator \(top.owner) owns the top screen")
            }
            // The tab bar is the app coordinator's; every other action goes to the top screen's owner.
            context.record(.action, coordinator: action.name == .selectTab ? app.path : owner.path, detail: action.auditDetail)
            switch action.name {
            case .back:
                context.pop(by: owner.path)
                tree.finishDescendantsWithoutScreens(reason: .back)
            case .selectTab:
                if let tab = action.tab { app.selectTab(tab) }
            case .dismiss:
                let presenter = context.state.stacks.last?.presenter ?? "app"
                // Dismissing a flow's stack finishes the flow; the app's or a tab's own modal
                // sign-in is just dismissed (they run for the whole session).
                if let coordinator = coordinators[presenter], !(coordinator is ContentCoordinator) {
                    coordinator.finish(.dismissed)
                } else {
                    context.dismiss(downTo: context.state.stacks.count - 1, by: owner.path)
                }
            default:
                try owner.handle(action, on: top)
            }
            return .accepted
        }
        if let key = request.idempotencyKey {
            try idempotency.save(result, key: key, sessionID: request.sessionID, fingerprint: fingerprint, now: now, on: connection)
        }
        return result
    }

    enum Verdict { case accepted, rejected([ActionName]) }

    /// Rebuilds the loaded session's tree, runs `body`, then saves the state and the audit rows.
    func mutate(
        _ loaded: LoadedSession, sessionID: String, actor: AuditActor, credentialCheck: CredentialCheck? = nil,
        cache: StateCache? = nil, on connection: any DatabaseConnection,
        _ body: (NavigationContext, Coordinator) throws -> Verdict
    ) throws -> ActionResult {
        let before = loaded.state
        let at = auth.timestamp()
        let context = NavigationContext(
            state: before, trail: try AuditTrailWriter(sessionID: sessionID, on: connection), actor: actor,
            connection: connection, services: services, credentialCheck: credentialCheck)
        // A session signed in with a token that has since been revoked or has expired is signed
        // out before its next action.
        if let tokenId = context.state.tokenId, try !auth.isLive(tokenID: tokenId, on: connection) {
            try context.signOut(reason: "tokenInvalid", actor: .system)
        }
        guard let treeState = context.state.coordinators else {
            throw SessionStateError(sessionID: sessionID, problem: "no coordinator tree")
        }
        let tree = Coordinator.restore(treeState, context: context)
        let verdict = try body(context, tree)
        var state = context.state
        state.coordinators = tree.persisted
        state.refreshTop()
        var newVersion = loaded.version
        if state != before || verdict.isAccepted {
            newVersion += 1
            let text = state.jsonText
            try connection.execute(
                "UPDATE sessions SET version = ?, state = ?, user_id = ?, updated_at = ? WHERE id = ?",
                newVersion, text, state.user?.id, at, sessionID)
            cache?.store(sessionID, text: text, state: state)
        }
        let rows = try context.trail.write(at: at)
        let view = try Self.view(id: sessionID, version: newVersion, state: state, on: connection)
        var error: ActionError?
        if case .rejected(let allowed) = verdict {
            error = ActionError(code: .actionNotAvailable, message: "the \(before.topScreen?.screen.rawValue ?? "current") screen does not offer this action", allowed: allowed)
        } else if let reported = context.reportedError {
            error = ActionError(code: reported.code, message: reported.message, allowed: nil)
        }
        return ActionResult(
            session: view, events: rows, outcome: error?.code == .actionNotAvailable ? .rejected : context.outcome,
            token: context.issuedToken, error: error)
    }

    // MARK: Persistence

    /// A session as read from `sessions`: its version and state.
    struct LoadedSession {
        var version: Int
        var state: SessionState
    }

    /// Reads a session's version and state (one query); decodes the state unless `cache`
    /// holds it for exactly this text. `forUpdate` (in a write transaction) locks the session's
    /// row until the transaction ends on PostgreSQL, where several instances may act on one
    /// session; SQLite's single writer already runs one transaction at a time.
    static func load(_ sessionID: String, cache: StateCache? = nil, forUpdate: Bool = false, on connection: any DatabaseConnection) throws -> LoadedSession {
        let sql = forUpdate && connection.dialect == .postgres
            ? "SELECT version, state FROM sessions WHERE id = ? FOR UPDATE"
            : "SELECT version, state FROM sessions WHERE id = ?"
        guard let row = try connection.queryOne(sql, sessionID) else {
            throw PhotosError.notFound("no session \(sessionID.prefix(64))")
        }
        let text = row.string(1)
        if let state = cache?.state(sessionID, text: text) { return LoadedSession(version: row.int(0), state: state) }
        do {
            let state = try JSONDecoder().decode(SessionState.self, from: Data(text.utf8))
            cache?.store(sessionID, text: text, state: state)
            return LoadedSession(version: row.int(0), state: state)
        } catch {
            throw SessionStateError(sessionID: sessionID, problem: "unreadable state: \(error)")
        }
    }

    /// The session as the API shows it: with whether each `photo` screen's photo is owned,
    /// and, when a `purchases` screen is on any stack, the user's purchased photos.
    static func view(id: String, version: Int, state: SessionState, on connection: any DatabaseConnection) throws -> SessionView {
        guard let user = state.user else { return SessionView(id: id, version: version, state: state, owned: [], purchases: []) }
        let screens = state.allStacks.flatMap(\.screens)
        var owned = Set<Int64>()
        for photoId in Set(screens.filter { $0.screen == .photo }.compactMap(\.photoId))
        where try PurchaseService.purchase(userID: user.id, photoID: photoId, on: connection) != nil {
            owned.insert(photoId)
        }
        let purchases = screens.contains { $0.screen == .purchases } ? try PurchaseService.purchasedPhotos(userID: user.id, on: connection) : []
        return SessionView(id: id, version: version, state: state, owned: owned, purchases: purchases)
    }
}

extension SessionCoordinator.Verdict {
    var isAccepted: Bool {
        if case .accepted = self { return true }
        return false
    }
}

/// A session whose stored state cannot be used (edited by hand, or written by a newer
/// version). Not a `PhotosError`: the server logs it and answers `500 internal`, never
/// showing the details (which may quote the decoder) to the client.
public struct SessionStateError: Error, CustomStringConvertible {
    /// The session.
    public let sessionID: String
    /// What is wrong with it.
    public let problem: String
    public var description: String { "session \(sessionID) has an inconsistent state: \(problem)" }
}
