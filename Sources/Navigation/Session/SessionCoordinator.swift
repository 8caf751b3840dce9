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
    let database: SQLiteDatabase
    let auth: AuthService
    let cache: StateCache

    /// Creates the coordinator over `database`, signing users in through `auth`.
    public init(database: SQLiteDatabase, auth: AuthService) {
        self.database = database
        self.auth = auth
        self.cache = StateCache()
    }

    // MARK: Sessions

    /// Starts a new session on `[photos]` with the coordinator tree `app`.
    public func createSession(actor: Actor = .client) async throws -> ActionResult {
        let id = SecureToken.random(byteCount: 18)
        let services = SessionServices(auth: auth)
        return try await database.write { connection in
            let at = ISO8601Timestamp.now()
            let context = NavigationContext(
                state: .empty, sessionID: id, actor: actor, connection: connection, services: services,
                nextSeq: 1, credentialCheck: nil)
            context.record(.sessionStart, coordinator: nil)
            context.record(.coordinatorStart, coordinator: "app", detail: ["id": "app", "kind": "app"])
            let app = AppCoordinator(
                model: CoordinatorState(kind: .app, id: "app", presentation: nil, photoId: nil, stackIndex: nil, initialDepth: nil, children: []),
                path: "app", context: context)
            app.start()
            var state = context.state
            state.coordinators = app.persisted
            state.refreshTop()
            try connection.execute(
                "INSERT INTO sessions (id, version, state, user_id, created_at, updated_at) VALUES (?, 1, ?, NULL, ?, ?)",
                id, state.jsonText, at, at)
            let rows = try AuditLog.append(context.entries, at: at, on: connection)
            return ActionResult(
                session: SessionView(id: id, version: 1, state: state, owned: []),
                events: rows, outcome: .navigated, token: nil, error: nil)
        }
    }

    /// The session as it is now. Throws `not_found`.
    public func session(id: String) async throws -> SessionView {
        try await database.read { connection in
            let (version, state) = try Self.load(id, on: connection)
            return SessionView(id: id, version: version, state: state, owned: try Self.owned(state, on: connection))
        }
    }

    /// Audit rows of one session after `seq`. Throws `not_found` for an unknown session.
    public func events(sessionID: String, after: Int = 0, limit: Int = 100) async throws -> [AuditRow] {
        try await database.read { connection in
            if sessionID != AuditLog.operatorSession && sessionID != AuditLog.apiSession,
               try connection.queryOne("SELECT 1 FROM sessions WHERE id = ?", sessionID) == nil {
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
            try connection.query(
                """
                SELECT s.id, s.version, u.username, json_extract(s.state, '$.top.screen'), s.updated_at
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
    /// (`action_not_available`, `invalid_credentials`).
    public func apply(
        _ action: ClientAction, to sessionID: String, expectVersion: Int? = nil,
        idempotencyKey: String? = nil, actor: Actor = .client
    ) async throws -> ActionResult {
        if let idempotencyKey {
            guard (1...200).contains(idempotencyKey.utf8.count) else {
                throw PhotosError.badRequest("Idempotency-Key must be 1 to 200 bytes")
            }
        }
        // bcrypt is slow: check credentials before the write transaction, and only when the
        // session is on a screen that takes them.
        var credentialCheck: CredentialCheck?
        if action.name == .submit {
            try action.validateParameters()
            let top = try await database.read { connection in try Self.load(sessionID, on: connection).1.availableActions() }
            if top.contains(.submit) {
                do {
                    credentialCheck = .valid(try await auth.authenticate(username: action.username ?? "", password: action.password ?? ""))
                } catch let error as PhotosError where error.code == .invalidCredentials {
                    credentialCheck = .invalid
                }
            }
        }
        let check = credentialCheck
        return try await database.write { connection in
            try Self.apply(action, to: sessionID, expectVersion: expectVersion, idempotencyKey: idempotencyKey,
                           actor: actor, credentialCheck: check, services: SessionServices(auth: auth), cache: cache, on: connection)
        }
    }

    /// Signs a live session in as `username` on the operator's authority. If the session waits
    /// on a `signIn` screen, its flow resumes exactly as after a successful `submit`.
    public func operatorSignIn(sessionID: String, username: String, actor: Actor) async throws -> ActionResult {
        guard let user = try await auth.user(named: username) else { throw PhotosError.notFound("no user named \(username)") }
        let services = SessionServices(auth: auth)
        return try await database.write { connection in
            let loaded = try Self.load(sessionID, on: connection)
            if let current = loaded.1.user { throw PhotosError(.conflict, "session \(sessionID) is already signed in as \(current.username)") }
            if loaded.1.availableActions().contains(.submit) {
                return try Self.apply(ClientAction(.submit, username: username), to: sessionID, expectVersion: nil, idempotencyKey: nil,
                                      actor: actor, credentialCheck: .valid(user), services: services, cache: nil, on: connection)
            }
            return try Self.mutate(sessionID, loaded: loaded, actor: actor, services: services, on: connection) { context, _ in
                try context.signIn(user)
                return .accepted
            }
        }
    }

    /// Completes the `buy` screen of a live session on the operator's authority.
    public func operatorPurchase(sessionID: String, actor: Actor) async throws -> ActionResult {
        let services = SessionServices(auth: auth)
        return try await database.write { connection in
            let (_, state) = try Self.load(sessionID, on: connection)
            guard let top = state.topScreen, top.screen == .buy else {
                throw PhotosError(.actionNotAvailable, "session \(sessionID) is on the \(state.topScreen?.screen.rawValue ?? "no") screen, not buy")
            }
            return try Self.apply(ClientAction(.buy), to: sessionID, expectVersion: nil, idempotencyKey: nil,
                                  actor: actor, credentialCheck: nil, services: services, cache: nil, on: connection)
        }
    }

    // MARK: The transaction

    static func apply(
        _ action: ClientAction, to sessionID: String, expectVersion: Int?, idempotencyKey: String?,
        actor: Actor, credentialCheck: CredentialCheck?, services: SessionServices, cache: StateCache?, on connection: Connection
    ) throws -> ActionResult {
        let fingerprint = action.fingerprint
        if let idempotencyKey, let earlier = try IdempotencyStore.lookup(key: idempotencyKey, sessionID: sessionID, fingerprint: fingerprint, on: connection) {
            return earlier
        }
        let loaded = try load(sessionID, cache: cache, on: connection)
        if let expectVersion, expectVersion != loaded.0 {
            throw PhotosError(.versionConflict, "session is at version \(loaded.0), not \(expectVersion)")
        }
        let result = try mutate(sessionID, loaded: loaded, actor: actor, credentialCheck: credentialCheck, services: services, cache: cache, on: connection) { context, tree in
            let allowed = context.state.availableActions()
            guard let top = context.state.topScreen, allowed.contains(action.name) else {
                context.record(.actionRejected, coordinator: nil, detail: action.auditDetail)
                return .rejected(allowed)
            }
            if action.name == .submit {
                // Checked before the transaction (bcrypt); an operator's sign-in comes pre-checked.
                guard credentialCheck != nil else {
                    throw PhotosError(.versionConflict, "the session changed while the credentials were checked; retry")
                }
            } else {
                try action.validateParameters()
            }
            let coordinators = Dictionary(uniqueKeysWithValues: tree.subtree.map { ($0.id, $0) })
            guard let owner = coordinators[top.owner] else {
                throw PhotosError(.conflict, "session state is inconsistent: no coordinator \(top.owner)")
            }
            context.record(.action, coordinator: owner.path, detail: action.auditDetail)
            switch action.name {
            case .back:
                context.pop(by: owner.path)
                finishCoordinatorsWithoutScreens(tree, reason: .back)
            case .dismiss:
                let presenter = context.state.stacks.last?.presenter ?? "app"
                if let coordinator = coordinators[presenter], coordinator !== tree {
                    coordinator.finish(.dismissed)
                } else {
                    context.dismiss(downTo: context.state.stacks.count - 1, by: owner.path)
                }
            default:
                try owner.handle(action, on: top)
            }
            return .accepted
        }
        if let idempotencyKey {
            try IdempotencyStore.save(result, key: idempotencyKey, sessionID: sessionID, fingerprint: fingerprint, on: connection)
        }
        return result
    }

    enum Verdict { case accepted, rejected([ActionName]) }

    /// Rebuilds the loaded session's tree, runs `body`, then saves the state and the audit rows.
    static func mutate(
        _ sessionID: String, loaded: (Int, SessionState), actor: Actor, credentialCheck: CredentialCheck? = nil,
        services: SessionServices, cache: StateCache? = nil, on connection: Connection,
        _ body: (NavigationContext, Coordinator) throws -> Verdict
    ) throws -> ActionResult {
        let (version, before) = loaded
        let at = ISO8601Timestamp.now()
        let lastSeq = try connection.queryOne("SELECT seq FROM audit_events WHERE session_id = ? ORDER BY seq DESC LIMIT 1", sessionID)?.int(0) ?? 0
        let context = NavigationContext(
            state: before, sessionID: sessionID, actor: actor, connection: connection, services: services,
            nextSeq: lastSeq + 1, credentialCheck: credentialCheck)
        // A session signed in with a token that has since been revoked or has expired is signed
        // out before its next action.
        if let tokenId = context.state.tokenId,
           try connection.queryOne("SELECT 1 FROM tokens WHERE id = ? AND revoked_at IS NULL AND expires_at > ?", tokenId, at) == nil {
            try context.signOut(reason: "tokenInvalid", actor: .system)
        }
        guard let treeState = context.state.coordinators else {
            throw PhotosError(.conflict, "session state has no coordinator tree")
        }
        let tree = Coordinator.restore(treeState, context: context)
        let verdict = try body(context, tree)
        var state = context.state
        state.coordinators = tree.persisted
        state.refreshTop()
        var newVersion = version
        if state != before || verdict.isAccepted {
            newVersion += 1
            let text = state.jsonText
            try connection.execute(
                "UPDATE sessions SET version = ?, state = ?, user_id = ?, updated_at = ? WHERE id = ?",
                newVersion, text, state.user?.id, at, context.sessionID)
            cache?.store(context.sessionID, text: text, state: state)
        }
        let rows = try AuditLog.append(context.entries, at: at, knownNextSeq: [context.sessionID: lastSeq + 1], on: connection)
        let view = SessionView(id: context.sessionID, version: newVersion, state: state, owned: try owned(state, on: connection))
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

    /// Finishes (deepest first) every coordinator below the root that no longer owns a screen.
    static func finishCoordinatorsWithoutScreens(_ tree: Coordinator, reason: FinishReason) {
        let owners = Set(tree.context.state.stacks.flatMap { $0.screens.map(\.owner) })
        for coordinator in tree.subtree.dropFirst().reversed() where !owners.contains(coordinator.id) {
            coordinator.finish(reason)
        }
    }

    // MARK: Persistence

    /// Reads a session's version and state (one query); decodes the state unless `cache`
    /// holds it for exactly this text.
    static func load(_ sessionID: String, cache: StateCache? = nil, on connection: Connection) throws -> (Int, SessionState) {
        guard let row = try connection.queryOne("SELECT version, state FROM sessions WHERE id = ?", sessionID) else {
            throw PhotosError.notFound("no session \(sessionID.prefix(64))")
        }
        let text = row.string(1)
        if let state = cache?.state(sessionID, text: text) { return (row.int(0), state) }
        do {
            let state = try JSONDecoder().decode(SessionState.self, from: Data(text.utf8))
            cache?.store(sessionID, text: text, state: state)
            return (row.int(0), state)
        } catch {
            throw PhotosError(.conflict, "session \(sessionID) has unreadable state: \(error)")
        }
    }

    /// Photo ids on `photo` screens that the signed-in user owns.
    static func owned(_ state: SessionState, on connection: Connection) throws -> Set<Int64> {
        guard let user = state.user else { return [] }
        let photoIds = Set(state.stacks.flatMap { $0.screens.filter { $0.screen == .photo }.compactMap(\.photoId) })
        var owned = Set<Int64>()
        for photoId in photoIds where try PurchaseService.purchase(userID: user.id, photoID: photoId, on: connection) != nil {
            owned.insert(photoId)
        }
        return owned
    }
}

extension SessionCoordinator.Verdict {
    var isAccepted: Bool {
        if case .accepted = self { return true }
        return false
    }
}
