import DatabaseAccess
import Foundation
import Navigation
import PhotosCore
import PhotosModel

/// Runs the coordinator tree of every client session on the server: the thin layer between the
/// navigation core (`SessionMachine`, pure) and the database.
///
/// An action is read, decided, written: in one write transaction it loads the session (state,
/// version) and the trail's head, reads the facts the core asks for (`SessionMachine.needs`),
/// lets the core decide, and writes the decision — the session row with version + 1, the audit
/// rows, the purchase, the token, the idempotency answer — all or nothing. A fact that no longer
/// holds when written (`StaleFacts`), or a `submit` whose credentials were not checked
/// beforehand, makes it read and decide again (a few rounds). The state is plain JSON in
/// `sessions.state`, so a restarted process resumes every session exactly where it was.
public struct SessionCoordinator: Sendable {
    let database: any DatabaseStore
    let auth: AuthService
    let idempotency: IdempotencyStore
    let cache: StateCache
    let known: KnownFacts

    /// Creates the coordinator over `database`, signing users in through `auth` (whose clock
    /// also stamps every step) and answering retries from `idempotency`.
    public init(database: any DatabaseStore, auth: AuthService, idempotency: IdempotencyStore) {
        self.database = database
        self.auth = auth
        self.idempotency = idempotency
        self.cache = StateCache()
        self.known = KnownFacts()
    }

    /// How many times an action is read and decided again before giving up with `conflict`.
    static let rounds = 4

    // MARK: Sessions

    /// Starts a new session: `[photos]` with the coordinator tree `app` (stack layout), or a
    /// tab bar with one coordinator and stack per tab (tabs layout); with `link`, already at
    /// that place, built as if tapped. Throws `bad_request` for a link the layout does not have
    /// and `not_found` for a photo that does not exist, creating nothing.
    public func createSession(layout: SessionLayout = .stack, link: DeepLink? = nil, actor: AuditActor = .client) async throws -> ActionResult {
        try link?.check(for: layout)
        let id = SecureToken.random(byteCount: 18)
        let at = auth.timestamp()
        let auth = self.auth
        let needs = SessionMachine.needs(state: nil, action: nil, link: link)
        if let store = database as? any SingleStatementStore, needs.photoIDs.isEmpty, needs.userIDs.isEmpty, needs.tokenID == nil {
            // Nothing to read (no link: no photo, no user, no token): decide, then write the row
            // and its first audit rows in one statement, one round trip.
            let decision = try SessionMachine.start(sessionID: id, layout: layout, link: link, actor: actor, facts: SessionFacts(now: at))
            let prepared = PreparedWrite(decision, sessionID: id, lastSeq: 0, previousHash: AuditLog.genesisHash)
            let written = try await store.run(ActionStatements.Create.self, arguments: ActionStatements.createArguments(prepared, created: at))
            guard try written.first?.int(0) == 1 else { throw PhotosError(.internal, "the new session was not written") }
            cache.store(prepared)
            return decision.result
        }
        return try await database.write { connection in
            let facts = try await SessionFactsReader.read(needs, now: at, auth: auth, on: connection)
            let decision = try SessionMachine.start(sessionID: id, layout: layout, link: link, actor: actor, facts: facts)
            try await PreparedWrite(decision, sessionID: id, lastSeq: 0, previousHash: AuditLog.genesisHash).write(created: at, expected: nil, on: connection)
            return decision.result
        }
    }

    /// The session as it is now. Throws `not_found`.
    public func session(id: String) async throws -> SessionView {
        let at = auth.timestamp()
        let (auth, cache) = (self.auth, self.cache)
        return try await database.read { connection in
            let session = try await Self.load(id, cache: cache, on: connection)
            let facts = try await SessionFactsReader.read(SessionMachine.needs(state: session.state, action: nil), now: at, auth: auth, on: connection)
            return SessionMachine.view(id: id, version: session.version, state: session.state, facts: facts)
        }
    }

    /// Audit rows of one client session after `seq`. Throws `not_found` for an unknown session
    /// and for the reserved trails (`api`, `operator`): they are not a client's to read (they name
    /// users and operators); operators read them with `photos-admin audit` or SQL.
    public func events(sessionID: String, after: Int = 0, limit: Int = 100) async throws -> [AuditRow] {
        try await database.read { connection in
            if try await connection.queryOne("SELECT 1 FROM sessions WHERE id = ?", sessionID) == nil {
                throw PhotosError.notFound("no session \(sessionID.prefix(64))")
            }
            return try await AuditLog.rows(sessionID: sessionID, after: after, limit: limit, on: connection)
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
            let topScreen = connection.jsonText("s.state", path: ["top", "screen"])
            return try await connection.query(
                """
                SELECT s.id, s.version, u.username, \(topScreen), s.updated_at
                FROM sessions s LEFT JOIN users u ON u.id = s.user_id ORDER BY s.updated_at DESC, s.id LIMIT ?
                """, limit
            ).map { row in
                Summary(id: try row.string(0), version: try row.int(1), username: row.optionalString(2),
                        top: row.optionalString(3).flatMap(ScreenKind.init(rawValue:)), updatedAt: try row.string(4))
            }
        }
    }

    // MARK: Actions

    /// Applies one client action from a client at `address` (what the sign-in limits count).
    /// Throws for what changes nothing (`bad_request`, `not_found`, `version_conflict`, and
    /// `too_many_attempts` past the first refusal of a sign-in limit's window); returns a result
    /// with `error` set for refusals that are recorded (`action_not_available`,
    /// `invalid_credentials`, the first `too_many_attempts` of a window).
    ///
    /// A retry answered from its `Idempotency-Key` returns the first answer, but a sign-in's
    /// token only when the retry's password checks again (`reconfirmedToken`).
    public func apply(
        _ action: ClientAction, to sessionID: String, expectVersion: Int? = nil,
        idempotencyKey: String? = nil, actor: AuditActor = .client, address: String = AuthService.localAddress
    ) async throws -> ActionResult {
        var result = try await decideOrReplay(
            action, to: sessionID, expectVersion: expectVersion, idempotencyKey: idempotencyKey, actor: actor, address: address)
        if result.isReplay {
            result.isReplay = false
            if result.token != nil { result.token = try await reconfirmedToken(result.token, action: action, address: address) }
        }
        return result
    }

    /// A retried sign-in's token, or nil when the retry's password does not check: the key
    /// replays the session's navigation (a client that lost the answer must not sign in twice),
    /// but the token is a credential of its own and a key alone must not hand it out. The check
    /// is a sign-in attempt like any other (bcrypt, the sign-in limits: `too_many_attempts` past
    /// them); it writes nothing, so the retry still changes nothing.
    private func reconfirmedToken(_ token: String?, action: ClientAction, address: String) async throws -> String? {
        switch try await auth.check(username: action.username ?? "", password: action.password ?? "", address: address) {
        case .valid: return token
        case .invalid: return nil
        case .limited(let error, _): throw error
        }
    }

    private func decideOrReplay(
        _ action: ClientAction, to sessionID: String, expectVersion: Int?,
        idempotencyKey: String?, actor: AuditActor, address: String
    ) async throws -> ActionResult {
        if let idempotencyKey {
            guard (1...200).contains(idempotencyKey.utf8.count) else {
                throw PhotosError.badRequest("Idempotency-Key must be 1 to 200 bytes")
            }
        }
        if let idempotencyKey, action.name == .submit {
            // A retried sign-in is answered before anything else (its token only if the password
            // checks again: `apply`). Every other retry is answered by the action's own read.
            let now = auth.now()
            if let earlier = try await database.read({ connection in
                try await idempotency.lookup(key: idempotencyKey, sessionID: sessionID, fingerprint: action.fingerprint, now: now, on: connection)
            }) {
                return earlier
            }
        }
        var request = ActionApplication(
            action: action, sessionID: sessionID, expectVersion: expectVersion, idempotencyKey: idempotencyKey, actor: actor)
        // bcrypt is slow: credentials are checked before the write transaction, when the session
        // is on a screen that takes them. If it gets there in between (another request moved
        // it), the core says so and the check is made then.
        var checkNow = false
        if action.name == .submit {
            try action.validateParameters()
            checkNow = try await database.read { connection in try await Self.load(sessionID, on: connection).state.availableActions() }.contains(.submit)
        }
        // First optimistically: read (on a reader, no lock), decide, then one write that holds
        // only if the session did not move meanwhile. When it did (or a fact went stale), the
        // next rounds read and decide inside the write transaction itself, where nothing can
        // move under them (SQLite's one writer; PostgreSQL's row lock).
        var optimistic = true
        for _ in 0..<Self.rounds {
            if checkNow, request.credentials == nil { request.credentials = try await checkCredentials(action, address: address) }
            let prepared = request
            do {
                if optimistic { return try await applyOptimistically(prepared) }
                return try await database.write { connection in try await applyInTransaction(prepared, on: connection) }
            } catch is CredentialsNotChecked {
                checkNow = true
            } catch is StaleFacts {
                optimistic = false
            } catch is SessionMoved {
                optimistic = false
            }
        }
        throw PhotosError(.conflict, "the session kept changing while this action was decided; retry")
    }

    /// One read, then one write: the session row and the facts on a read snapshot, the decision
    /// outside any transaction, then the write — the session row only if still at the version
    /// and trail seq read, the audit rows, the effects, the idempotency answer. Throws
    /// `SessionMoved` or `StaleFacts` when what was read no longer holds (nothing written).
    private func applyOptimistically(_ request: ActionApplication) async throws -> ActionResult {
        if let store = database as? any SingleStatementStore { return try await applyInTwoStatements(request, on: store) }
        let (auth, cache, idempotency, known) = (self.auth, self.cache, self.idempotency, self.known)
        let fingerprint = request.action.fingerprint
        let now = auth.now()
        if let cached = cache.entry(request.sessionID), let result = try await applyOnKnownFactsInWriter(request, cached: cached, now: now) {
            return result
        }
        var signingIn: User?
        if case .valid(let user)? = request.credentials { signingIn = user }
        let signingInID = signingIn?.id
        let read = try await database.read { connection -> (LoadedSession, SessionFacts, ActionResult?) in
            let loaded = try await Self.load(request.sessionID, cache: cache, on: connection)
            if let key = request.idempotencyKey,
               let earlier = try await idempotency.lookup(key: key, sessionID: request.sessionID, fingerprint: fingerprint, now: now, on: connection) {
                return (loaded, SessionFacts(now: ""), earlier)
            }
            if let expectVersion = request.expectVersion, expectVersion != loaded.version {
                throw PhotosError(.versionConflict, "session is at version \(loaded.version), not \(expectVersion)")
            }
            let facts = try await SessionFactsReader.read(
                for: loaded.state, action: request.action, credentials: request.credentials, signingIn: signingInID, auth: auth, on: connection)
            return (loaded, facts, nil)
        }
        let (loaded, facts, earlier) = read
        if let earlier { return earlier }
        known.learn(facts, token: loaded.state.tokenId)
        let (prepared, expected) = try decided(request, on: loaded, facts: facts)
        let decision = prepared.decision
        try await database.write { connection in
            try await prepared.write(expected: expected, on: connection)
            if let key = request.idempotencyKey {
                try await idempotency.save(decision.result, key: key, sessionID: request.sessionID, fingerprint: fingerprint, now: now, on: connection)
            }
        }
        cache.store(prepared)
        known.learn(written: decision, sessionID: request.sessionID, storedKey: nil)
        return decision.result
    }

    /// `applyOptimistically` with no read, on a store whose writer runs one transaction at a
    /// time (SQLite): the action decided on the state this process holds and the facts it
    /// knows (as `applyOnKnownFacts` does for PostgreSQL), then written in the writer's
    /// transaction, where checking what was assumed costs no round trip: an answer stored under
    /// the request's key is returned instead; a photo assumed not bought that was bought
    /// (another process: `photos-admin purchase`), a token assumed live that was revoked, or a
    /// session that moved (another process, or a write this one lost track of) keeps nothing,
    /// and the action goes the usual way. Nil in those cases, and when something needed is not
    /// known here.
    private func applyOnKnownFactsInWriter(_ request: ActionApplication, cached: StateCache.Entry, now: Date) async throws -> ActionResult? {
        guard let (prepared, expected, assumed) = try decidedOnKnownFacts(request, cached: cached) else { return nil }
        let decision = prepared.decision
        let (idempotency, fingerprint) = (self.idempotency, request.action.fingerprint)
        // The write returns the answer stored earlier under the request's key, if there is one
        // (then nothing was written), or nil once the decision is written.
        let earlier: ActionResult?
        do {
            earlier = try await database.write { connection -> ActionResult? in
                if let key = request.idempotencyKey,
                   let earlier = try await idempotency.lookup(key: key, sessionID: request.sessionID, fingerprint: fingerprint, now: now, on: connection) {
                    return earlier
                }
                if let (user, photos) = assumed.notBought, !photos.isEmpty {
                    let list = photos.sorted()
                    let marks = Array(repeating: "?", count: list.count).joined(separator: ", ")
                    if try await connection.queryOne(
                        "SELECT 1 FROM purchases WHERE user_id = ? AND photo_id IN (\(marks)) LIMIT 1", arguments: [user] + list) != nil {
                        throw StaleFacts(reason: "a photo assumed not bought was bought")
                    }
                }
                if let (user, count) = assumed.purchaseCount,
                   try await connection.queryOne("SELECT count(*) FROM purchases WHERE user_id = ?", user)?.int(0) != count {
                    throw StaleFacts(reason: "the purchase list changed")
                }
                try await prepared.write(expected: expected, on: connection)
                if let key = request.idempotencyKey {
                    try await idempotency.save(decision.result, key: key, sessionID: request.sessionID, fingerprint: fingerprint, now: now, on: connection)
                }
                return nil
            }
        } catch is SessionMoved {
            known.count(held: false)
            return nil
        } catch is StaleFacts {
            known.count(held: false)
            return nil
        }
        if let earlier { return earlier }
        known.count(held: true)
        cache.store(prepared)
        known.learn(written: decision, sessionID: request.sessionID, storedKey: nil)
        return decision.result
    }

    /// `applyOptimistically` on a store that runs single statements (PostgreSQL): the read is one
    /// statement, one round trip (`ActionStatements.Read`), and so is the write
    /// (`ActionStatements.Write`, or `NavigationWrite`); no transaction is held open across them, no row locked.
    /// Throws `SessionMoved` or `StaleFacts` as the transaction's form does.
    private func applyInTwoStatements(_ request: ActionApplication, on store: any SingleStatementStore) async throws -> ActionResult {
        let fingerprint = request.action.fingerprint
        let now = auth.now()
        var signingIn: User?
        if case .valid(let user)? = request.credentials { signingIn = user }
        let storedKey = try request.idempotencyKey.map { try idempotency.storedKey($0, sessionID: request.sessionID) }
        let cached = cache.entry(request.sessionID)
        if let cached, let result = try await applyOnKnownFacts(request, cached: cached, storedKey: storedKey, now: now, on: store) {
            return result
        }
        let rows = try await store.run(ActionStatements.Read.self, arguments: ActionStatements.readArguments(
            sessionID: request.sessionID, cachedVersion: cached?.version, action: request.action, signingIn: signingIn?.id,
            now: ISO8601Timestamp.string(from: now), idempotencyKey: storedKey, since: idempotency.cutoff(now: now)))
        guard let snapshot = try ActionStatements.snapshot(rows, sessionID: request.sessionID, cached: cached, cache: cache) else {
            throw PhotosError.notFound("no session \(request.sessionID.prefix(64))")
        }
        known.learn(
            photos: snapshot.photos.values, purchases: snapshot.purchases, completeListsOf: snapshot.purchaseLists ? snapshot.userIDs : [],
            deadToken: snapshot.tokenLive == false ? snapshot.tokenID : nil)
        if let key = request.idempotencyKey, let stored = snapshot.idempotent {
            return try idempotency.answer(
                requestHash: stored.requestHash, response: stored.response, key: key, sessionID: request.sessionID, fingerprint: fingerprint)
        }
        let loaded = snapshot.loaded
        if let expectVersion = request.expectVersion, expectVersion != loaded.version {
            throw PhotosError(.versionConflict, "session is at version \(loaded.version), not \(expectVersion)")
        }
        let needs = SessionMachine.needs(state: loaded.state, action: request.action, signingIn: signingIn?.id)
        let newToken = needs.mayIssueToken ? auth.newTokenGrant() : nil
        let stamp = auth.timestamp()
        let facts: SessionFacts
        if let covered = snapshot.facts(for: needs, now: stamp, credentials: request.credentials, newToken: newToken) {
            facts = covered
        } else {
            // Something the one statement did not read (a fact added to the core without being
            // added to the statement): read it the general way. Correct, one round trip more.
            let auth = self.auth
            facts = try await database.read { connection in
                try await SessionFactsReader.read(needs, now: stamp, credentials: request.credentials, newToken: newToken, auth: auth, on: connection)
            }
        }
        let (prepared, expected) = try decided(request, on: loaded, facts: facts)
        let decision = prepared.decision
        let answer = try request.idempotencyKey.map {
            try idempotency.storedAnswer(decision.result, key: $0, sessionID: request.sessionID, fingerprint: fingerprint, now: now)
        }
        if decision.changed || !prepared.chained.isEmpty {
            do {
                try await write(prepared, expected: expected, answer: answer, since: idempotency.cutoff(now: now), on: store)
            } catch let error as any DatabaseFailure where error.isStaleFactsRefusal {
                throw StaleFacts(reason: error.failureSummary)
            } catch let error as any DatabaseFailure where error.isUniqueViolation {
                throw StaleFacts(reason: "a token id is taken")
            }
        } else if let answer {
            // Nothing of the session changes: only the answer is kept (a statement of its own).
            let idempotency = self.idempotency
            try await database.write { connection in try await idempotency.save(answer, sessionID: request.sessionID, on: connection) }
        }
        cache.store(prepared)
        known.learn(written: decision, sessionID: request.sessionID, storedKey: storedKey)
        return decision.result
    }

    /// The action decided on what this process knows — the session's state and trail head as
    /// it last wrote or read them (`StateCache`), photos and purchases it has seen
    /// (`KnownFacts`) — and written in one statement, one round trip, that holds only if what
    /// was assumed still is: the session at that version and trail head, the photos assumed
    /// not bought still not bought, the token as live as assumed, no answer stored under the
    /// request's key. Nil when something needed is not known here, or when the write found an
    /// assumption untrue (it then kept nothing): the caller reads, as for any action.
    private func applyOnKnownFacts(
        _ request: ActionApplication, cached: StateCache.Entry, storedKey: String?, now: Date, on store: any SingleStatementStore
    ) async throws -> ActionResult? {
        // A retry of an answer stored here is answered by the read.
        if let storedKey, known.answered(storedKey, sessionID: request.sessionID) { return nil }
        guard let (prepared, expected, assumed) = try decidedOnKnownFacts(request, cached: cached) else { return nil }
        let decision = prepared.decision
        let answer = try request.idempotencyKey.map {
            try idempotency.storedAnswer(decision.result, key: $0, sessionID: request.sessionID, fingerprint: request.action.fingerprint, now: now)
        }
        do {
            try await write(prepared, expected: expected, answer: answer, since: idempotency.cutoff(now: now), assumed: assumed, on: store)
        } catch is SessionMoved {
            known.count(held: false)
            return nil
        } catch let error as any DatabaseFailure where error.isStaleFactsRefusal || error.isUniqueViolation {
            known.count(held: false)
            return nil
        }
        known.count(held: true)
        cache.store(prepared)
        known.learn(written: decision, sessionID: request.sessionID, storedKey: storedKey)
        return decision.result
    }

    /// The decision of `request` on the state this process holds (`cached`) and the facts it
    /// knows (`KnownFacts`), made ready to write, with what the write must check; nil when the
    /// request checks credentials, the cache lacks the trail head or the version the client
    /// expects, a needed fact is not known here, or the decision would write nothing (it would
    /// be answered without seeing whether the session moved meanwhile: the read makes sure).
    private func decidedOnKnownFacts(
        _ request: ActionApplication, cached: StateCache.Entry
    ) throws -> (PreparedWrite, PreparedWrite.Expected, KnownFacts.Assumed)? {
        guard request.credentials == nil, let trail = cached.trail else { return nil }
        if let expectVersion = request.expectVersion, expectVersion != cached.version { return nil }
        let needs = SessionMachine.needs(state: cached.state, action: request.action, signingIn: nil)
        guard let (facts, assumed) = known.facts(for: needs, now: auth.timestamp()) else { return nil }
        let loaded = LoadedSession(version: cached.version, state: cached.state, trailSeq: trail.seq, trailHash: trail.hash)
        let (prepared, expected) = try decided(request, on: loaded, facts: facts)
        guard prepared.decision.changed || !prepared.decision.records.isEmpty else { return nil }
        return (prepared, expected, assumed)
    }

    /// The core's decision of `request` on `loaded` with `facts`, made ready to write, and what
    /// the write requires to be unchanged (the version and trail seq read, the token as live).
    private func decided(_ request: ActionApplication, on loaded: LoadedSession, facts: SessionFacts) throws -> (PreparedWrite, PreparedWrite.Expected) {
        let decision = try SessionMachine.decide(SessionMachine.Input(
            sessionID: request.sessionID, version: loaded.version, state: loaded.state, lastSeq: loaded.trailSeq,
            action: request.action, actor: request.actor, facts: facts))
        let prepared = PreparedWrite(decision, sessionID: request.sessionID, lastSeq: loaded.trailSeq, previousHash: loaded.trailHash)
        let expected = PreparedWrite.Expected(
            version: loaded.version, trailSeq: loaded.trailSeq, token: loaded.state.tokenId.map { ($0, facts.tokenLive) })
        return (prepared, expected)
    }

    /// Runs `ActionStatements.Write` (or `NavigationWrite`); throws `SessionMoved` when the session was not at `expected`.
    private func write(
        _ prepared: PreparedWrite, expected: PreparedWrite.Expected, answer: IdempotencyStore.StoredAnswer?, since: String,
        assumed: KnownFacts.Assumed = .init(), on store: any SingleStatementStore
    ) async throws {
        let (statement, arguments) = ActionStatements.write(
            prepared, expected: expected, answer: answer, since: since, assumed: assumed)
        let written = try await store.run(statement, arguments: arguments)
        guard try written.first?.int(0) == 1 else { throw SessionMoved() }
    }

    /// Checks submitted credentials (bcrypt, off the event loops; counted by the sign-in limits).
    /// Throws the limits' `too_many_attempts` when the refusal is only counted (not the first
    /// of its window): the session is then left as it was, with no audit row.
    private func checkCredentials(_ action: ClientAction, address: String) async throws -> CredentialCheck {
        let username = action.username ?? ""
        switch try await auth.check(username: username, password: action.password ?? "", address: address) {
        case .valid(let user):
            return .valid(user)
        case .invalid:
            return .invalid(existingUser: await auth.existingUsername(username))
        case .limited(let error, let audit):
            guard let audit else { throw error }
            return .limited(error, existingUser: await auth.existingUsername(username), limit: audit)
        }
    }

    /// Signs a live session in as `username` on the operator's authority. If the session waits
    /// on a `signIn` screen, its flow resumes exactly as after a successful `submit`.
    public func operatorSignIn(sessionID: String, username: String, actor: AuditActor) async throws -> ActionResult {
        guard let user = try await auth.user(named: username) else { throw PhotosError.notFound("no user named \(username)") }
        for _ in 0..<Self.rounds {
            do {
                return try await database.write { connection in
                    try await decideAndWrite(sessionID: sessionID, action: ClientAction(.submit, username: username), actor: actor, signingIn: user, on: connection) { input in
                        try SessionMachine.operatorSignIn(input, user: user)
                    }
                }
            } catch is StaleFacts {
                continue
            }
        }
        throw PhotosError(.conflict, "the session kept changing while it was signed in; retry")
    }

    /// Completes the `buy` screen of a live session on the operator's authority.
    public func operatorPurchase(sessionID: String, actor: AuditActor) async throws -> ActionResult {
        for _ in 0..<Self.rounds {
            do {
                return try await database.write { connection in
                    try await decideAndWrite(sessionID: sessionID, action: ClientAction(.buy), actor: actor, on: connection) { input in
                        guard let top = input.state.topScreen, top.screen == .buy else {
                            throw PhotosError(.actionNotAvailable, "session \(sessionID) is on the \(input.state.topScreen?.screen.rawValue ?? "no") screen, not buy")
                        }
                        return try SessionMachine.decide(input)
                    }
                }
            } catch is StaleFacts {
                continue
            }
        }
        throw PhotosError(.conflict, "the session kept changing while its purchase was completed; retry")
    }

    // MARK: The transaction

    /// One action on its way into the write transaction.
    struct ActionApplication: Sendable {
        var action: ClientAction
        var sessionID: String
        var expectVersion: Int?
        var idempotencyKey: String?
        var actor: AuditActor
        /// Set when the password was checked before the transaction.
        var credentials: CredentialCheck?
    }

    /// Applies one action inside the writer's transaction: idempotency, version, the action.
    func applyInTransaction(_ request: ActionApplication, on connection: any DatabaseConnection) async throws -> ActionResult {
        let fingerprint = request.action.fingerprint
        let now = auth.now()
        var signingIn: User?
        if case .valid(let user)? = request.credentials { signingIn = user }
        return try await decideAndWrite(
            sessionID: request.sessionID, action: request.action, actor: request.actor, credentials: request.credentials,
            signingIn: signingIn, on: connection,
            checks: { loaded in
                // The idempotency key after the session (PostgreSQL: its row is locked by now), so
                // a retry that reached another instance finds the first answer.
                if let key = request.idempotencyKey,
                   let earlier = try await idempotency.lookup(key: key, sessionID: request.sessionID, fingerprint: fingerprint, now: now, on: connection) {
                    return earlier
                }
                if let expectVersion = request.expectVersion, expectVersion != loaded.version {
                    throw PhotosError(.versionConflict, "session is at version \(loaded.version), not \(expectVersion)")
                }
                return nil
            },
            decide: { try SessionMachine.decide($0) },
            afterWrite: { result in
                if let key = request.idempotencyKey {
                    try await idempotency.save(result, key: key, sessionID: request.sessionID, fingerprint: fingerprint, now: now, on: connection)
                }
            })
    }

    /// Read, decide, write, in the caller's write transaction: the session (locked on
    /// PostgreSQL) and its trail's head, `checks` (an earlier answer ends it there), the facts,
    /// `decide`, the write, `afterWrite`.
    private func decideAndWrite(
        sessionID: String, action: ClientAction, actor: AuditActor, credentials: CredentialCheck? = nil, signingIn: User? = nil,
        on connection: any DatabaseConnection,
        checks: (LoadedSession) async throws -> ActionResult? = { _ in nil },
        decide: (SessionMachine.Input) throws -> SessionDecision,
        afterWrite: (ActionResult) async throws -> Void = { _ in }
    ) async throws -> ActionResult {
        let loaded = try await Self.load(sessionID, cache: cache, forUpdate: true, on: connection)
        if let earlier = try await checks(loaded) { return earlier }
        let facts = try await SessionFactsReader.read(
            for: loaded.state, action: action, credentials: credentials, signingIn: signingIn?.id, auth: auth, on: connection)
        let decision = try decide(SessionMachine.Input(
            sessionID: sessionID, version: loaded.version, state: loaded.state, lastSeq: loaded.trailSeq,
            action: action, actor: actor, facts: facts))
        let prepared = PreparedWrite(decision, sessionID: sessionID, lastSeq: loaded.trailSeq, previousHash: loaded.trailHash)
        // The row is locked (or the writer is SQLite's only one): it cannot have moved.
        try await prepared.write(expected: nil, on: connection)
        // Not cached here: the transaction may still roll back, and a cached state must be a
        // committed one (StateCache). The next read decodes it.
        try await afterWrite(decision.result)
        return decision.result
    }

    // MARK: Persistence

    /// A session as read from `sessions`: its version and state.
    struct LoadedSession {
        var version: Int
        var state: SessionState
        /// The session's audit trail's last seq and its hash.
        var trailSeq: Int
        var trailHash: String
    }

    /// Reads a session's version and state (one query); decodes the state unless `cache`
    /// holds it for exactly this text. `forUpdate` (in a write transaction) locks the session's
    /// row until the transaction ends on PostgreSQL, where several instances may act on one
    /// session; SQLite's single writer already runs one transaction at a time.
    static func load(_ sessionID: String, cache: StateCache? = nil, forUpdate: Bool = false, on connection: any DatabaseConnection) async throws -> LoadedSession {
        let sql = "SELECT version, state, trail_seq, trail_hash FROM sessions WHERE id = ?" + (forUpdate ? connection.rowLockClause : "")
        guard let row = try await connection.queryOne(sql, sessionID) else {
            throw PhotosError.notFound("no session \(sessionID.prefix(64))")
        }
        return try loaded(sessionID, version: row.int(0), text: row.string(1), trailSeq: row.int(2), trailHash: row.string(3), cache: cache)
    }

    /// A session row read: its state decoded, unless `cache` holds it for this text already.
    static func loaded(_ sessionID: String, version: Int, text: String, trailSeq: Int, trailHash: String, cache: StateCache?) throws -> LoadedSession {
        func loaded(_ state: SessionState) -> LoadedSession {
            LoadedSession(version: version, state: state, trailSeq: trailSeq, trailHash: trailHash)
        }
        let trail = StateCache.TrailHead(seq: trailSeq, hash: trailHash)
        if let state = cache?.state(sessionID, text: text, version: version, trail: trail) { return loaded(state) }
        do {
            let state = try JSONDecoder().decode(SessionState.self, from: Data(text.utf8))
            cache?.store(sessionID, version: version, text: text, state: state, trail: trail)
            return loaded(state)
        } catch {
            throw SessionStateError(sessionID: sessionID, problem: "unreadable state: \(error)")
        }
    }
}
