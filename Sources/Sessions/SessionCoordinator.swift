import AuditTrail
import DatabaseAccess
import Foundation
import Navigation
import PhotosCore
import PhotosModel

/// Runs the coordinator tree of every client session on the server: the thin layer between the
/// navigation core (`SessionMachine`, pure) and the store's action contract (`SessionActions`).
///
/// An action is one loop (`SessionCoordinator+Actions`): the session and the facts — what this
/// process knows (`StateCache`, `KnownFacts`) or one read — then the core's decision, then one
/// write that keeps it only if what it was decided on still holds; when the session moved or a
/// fact went stale meanwhile, once more under the store's lock. The state is plain JSON in
/// `sessions.state`, so a restarted process resumes every session exactly where it was.
public struct SessionCoordinator: Sendable {
    let database: any DatabaseStore
    let auth: AuthService
    let idempotency: IdempotencyStore
    let cache: StateCache
    let known: KnownFacts
    let secrets: SessionSecrets
    /// The experiments that govern new purchase flows, read at most once a second.
    let experiments: ExperimentRules
    /// A session idle this long ends at its next request (or the sweep's); 0 = never.
    let idleExpiry: TimeInterval
    /// `sessions.idleExpirySeconds` as configured (0 = never).
    public var idleExpirySeconds: Int { Int(idleExpiry) }
    /// Whether actions make spans (`tracing.otlpEndpoint` set). Checked once per action: with
    /// tracing off an action builds no span, not even a no-op one (they cost 8 % of the action
    /// path's throughput, measured).
    let traced: Bool
    /// Where each committed write is published (the change feed, metrics and console listen).
    public let commits: AuditCommits

    /// Creates the coordinator over `database`, signing users in through `auth` (whose clock
    /// also stamps every step) and answering retries from `idempotency`; sessions idle for
    /// `idleExpirySeconds` end (0: never, the default here; photosd's configuration says 30 days).
    /// The experiments are read at most once per `experimentsMaxAge` (tests read them every time).
    public init(
        database: any DatabaseStore, auth: AuthService, idempotency: IdempotencyStore, idleExpirySeconds: Int = 0, traced: Bool = false,
        experimentsMaxAge: Duration = .seconds(1), commits: AuditCommits = AuditCommits()
    ) {
        self.database = database
        self.commits = commits
        self.traced = traced
        self.auth = auth
        self.idempotency = idempotency
        self.idleExpiry = TimeInterval(max(0, idleExpirySeconds))
        self.cache = StateCache()
        self.known = KnownFacts()
        self.secrets = SessionSecrets()
        self.experiments = ExperimentRules(database: database, maxAge: experimentsMaxAge)
    }

    // MARK: Sessions

    /// Starts a new session: `[photos]` with the coordinator tree `app` (stack layout), or a
    /// tab bar with one coordinator and stack per tab (tabs layout); with `link`, already at
    /// that place, built as if tapped. Throws `bad_request` for a link the layout does not have
    /// and `not_found` for a photo that does not exist, creating nothing. The answer carries the
    /// session's secret (`sessionSecret`), the credential `authorize` asks of every client
    /// request on it; only its SHA-256 is stored.
    public func createSession(layout: SessionLayout = .stack, link: DeepLink? = nil, actor: AuditActor = .client) async throws -> ActionResult {
        try link?.check(for: layout)
        let id = SessionID.make()
        let at = auth.timestamp()
        let needs = SessionMachine.needs(state: nil, action: nil, link: link)
        var facts = SessionFacts(now: at)
        // Only a link names something to read (a photo); with none, the write is all there is.
        if !needs.photoIDs.isEmpty || !needs.userIDs.isEmpty || needs.tokenID != nil {
            let snapshot = try await database.readForAction(ActionRead(
                sessionID: id, facts: needs.read, answerKey: nil, answersSince: at))
            guard let read = snapshot.facts(for: needs, now: at) else { throw SessionStateError(sessionID: id, problem: "the read left out a fact it was asked for") }
            facts = read
        }
        if needs.experiments { facts.experiments = try await experiments.current() }
        let decision = try SessionMachine.start(sessionID: id, layout: layout, link: link, actor: actor, facts: facts)
        let prepared = PreparedWrite(decision, sessionID: id, lastSeq: 0, previousHash: AuditChains.genesisHash)
        let secret = SessionSecrets.make()
        var write = prepared.write(.create, at: at)
        write.row.secretHash = SessionSecrets.hash(secret)
        guard try await database.writeDecision(write) == .written else {
            throw PhotosError(.internal, "the new session was not written")
        }
        cache.store(prepared)
        secrets.remember(id, hash: write.row.secretHash)
        commits.publish(.init(sessionID: id, kind: .created, auditRows: prepared.chained.count))
        var result = decision.result
        result.sessionSecret = secret
        return result
    }

    /// Checks a client's credential for `sessionID`: `secret` must be the one its creation
    /// returned. Throws `unauthorized` for no secret, another one, a session created before
    /// sessions had secrets, or no such session (the same answer as a wrong secret, so that the
    /// answers tell no one which ids exist). Operators (photos-admin,
    /// the console) act through their own sign-in and never call this.
    public func authorize(sessionID: String, secret: String?) async throws {
        guard let secret, !secret.isEmpty else {
            throw PhotosError.unauthorized("requests on a session need Authorization: Session <sessionSecret>, as returned when it was created")
        }
        // The reserved trails' names are public: saying they are not served tells nothing.
        if AuditTrails.isReserved(sessionID) { throw PhotosError.notFound("no session \(sessionID): the reserved trails are not served") }
        let digest: [UInt8]?
        if let known = secrets.digest(of: sessionID) {
            digest = known
        } else {
            // An unknown id is answered as a wrong secret: without this session's secret, no
            // answer may tell which ids exist.
            guard let read = try await database.read({ try await SessionDirectory.secretHash(ofSession: sessionID, on: $0) }) else {
                throw PhotosError.unauthorized("the session secret is not this session's")
            }
            guard let stored = read else {
                throw PhotosError.unauthorized("this session was created before sessions had secrets: start a new session")
            }
            digest = secrets.remember(sessionID, hash: stored)
        }
        guard let digest, SessionSecrets.matches(secret, digest: digest) else {
            throw PhotosError.unauthorized("the session secret is not this session's")
        }
    }

    /// What a lookup of a session finds.
    public enum SessionLookup: Sendable, Equatable {
        /// The session as it is now.
        case live(SessionView)
        /// It ended at this time (idle past the expiry); its row keeps no state, its trail stays.
        case ended(at: String)
        /// No session has this id.
        case missing

        /// The live session; `not_found` or `session_expired` (the client's answers) otherwise.
        public func view(id: String) throws -> SessionView {
            switch self {
            case .live(let view): view
            case .ended(let at): throw SessionCoordinator.ended(at: at)
            case .missing: throw PhotosError.notFound("no session \(id.prefix(64))")
            }
        }
    }

    /// The session as it is now: live, ended, or missing. A session this read finds idle past the
    /// expiry is ended by it.
    public func lookup(id: String) async throws -> SessionLookup {
        let now = auth.now()
        let stamp = ISO8601Timestamp.string(from: now)
        let snapshot = try await database.readForAction(ActionRead(
            sessionID: id, facts: FactsWanted(), namedByRow: true, answerKey: nil, answersSince: stamp))
        let loaded: LoadedSession
        switch try found(snapshot, sessionID: id) {
        case .live(let live): loaded = live
        case .ended(let at): return .ended(at: at)
        case .missing: return .missing
        }
        if idleSince(loaded, now: now) != nil {
            _ = try await expireIfIdle(sessionID: id)
            return try await lookup(id: id)
        }
        let needs = SessionMachine.needs(state: loaded.state, action: nil)
        guard let facts = try await facts(for: needs, of: id, on: loaded, from: snapshot, store: database, now: stamp) else {
            // Moved between the two reads: the newest is as good an answer.
            return try await lookup(id: id)
        }
        return .live(SessionMachine.view(id: id, version: loaded.version, state: loaded.state, facts: facts))
    }

    /// The session as it is now. Throws `not_found`, and `session_expired` for a session that
    /// has ended — or that this read finds idle past the expiry, which ends it.
    public func session(id: String) async throws -> SessionView {
        try await lookup(id: id).view(id: id)
    }

    /// Audit rows of one client session after `seq`. Throws `not_found` for an unknown session
    /// and for the reserved trails (`api`, `operator`): they are not a client's to read (they name
    /// users and operators); operators read them with `photos-admin audit` or SQL.
    public func events(sessionID: String, after: Int = 0, limit: Int = 100) async throws -> [AuditRow] {
        try await database.read { connection in
            try await SessionDirectory.trail(ofSession: sessionID, after: after, limit: limit, on: connection)
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
            try await SessionDirectory.lines(limit: limit, on: connection).map { line in
                Summary(
                    id: line.id, version: line.version, username: line.username, top: line.topScreen.flatMap(ScreenKind.init(rawValue:)),
                    updatedAt: line.updatedAt)
            }
        }
    }

    // MARK: Reading a session

    /// A session as read: its version, state, and trail head.
    struct LoadedSession {
        var version: Int
        var state: SessionState
        /// The session's audit trail's last seq and its hash.
        var trailSeq: Int
        var trailHash: String
        /// When its row was last written, when known (idle expiry counts from it).
        var updatedAt: String?
    }

    /// What a read found of a session's row.
    enum Found {
        case live(LoadedSession)
        case ended(at: String)
        case missing
    }

    /// The session `snapshot` read, its state decoded (or taken from the cache when it holds
    /// exactly this text); or that it ended, or is not there.
    func found(_ snapshot: ActionSnapshot, sessionID: String) throws -> Found {
        guard let row = snapshot.session else { return .missing }
        if let endedAt = row.endedAt { return .ended(at: endedAt) }
        return .live(try Self.loaded(
            sessionID, version: row.version, text: row.stateText, trailSeq: row.trailSeq, trailHash: row.trailHash, updatedAt: row.updatedAt,
            cache: cache))
    }

    /// What every request on an ended session is answered (`410`).
    static func ended(at: String) -> PhotosError {
        PhotosError(.sessionExpired, "this session ended at \(at) after being idle; start a new one")
    }

    /// Since when `loaded` has been idle, when that is past the idle expiry (nil: it lives on).
    func idleSince(_ loaded: LoadedSession, now: Date) -> String? {
        guard idleExpiry > 0, let text = loaded.updatedAt, let updated = ISO8601Timestamp.parse(text),
              now.timeIntervalSince(updated) >= idleExpiry else { return nil }
        return text
    }

    /// The facts `needs` names: from `snapshot` when it read them all, else read by name (the
    /// row's columns did not name them: written by an older photosd, or by hand). Nil when the
    /// session moved between the two reads.
    func facts(
        for needs: SessionFacts.Needs, of sessionID: String, on loaded: LoadedSession, from snapshot: ActionSnapshot, store: any SessionActions,
        now: String, credentials: CredentialCheck? = nil, newToken: TokenGrant? = nil
    ) async throws -> SessionFacts? {
        known.learn(snapshot)
        if let facts = snapshot.facts(for: needs, now: now, credentials: credentials, newToken: newToken) { return facts }
        let exact = try await store.readForAction(ActionRead(
            sessionID: sessionID, facts: needs.read, answerKey: nil, answersSince: now))
        guard let row = exact.session, row.version == loaded.version, row.trailSeq == loaded.trailSeq else { return nil }
        known.learn(exact)
        return exact.facts(for: needs, now: now, credentials: credentials, newToken: newToken)
    }

    /// A session row's state decoded, unless `cache` holds it for exactly this text.
    static func loaded(
        _ sessionID: String, version: Int, text: String, trailSeq: Int, trailHash: String, updatedAt: String?, cache: StateCache?
    ) throws -> LoadedSession {
        func loaded(_ state: SessionState) -> LoadedSession {
            LoadedSession(version: version, state: state, trailSeq: trailSeq, trailHash: trailHash, updatedAt: updatedAt)
        }
        let trail = StateCache.TrailHead(seq: trailSeq, hash: trailHash)
        if let state = cache?.state(sessionID, text: text, version: version, trail: trail, updatedAt: updatedAt) { return loaded(state) }
        do {
            let state = try JSONDecoder().decode(SessionState.self, from: Data(text.utf8))
            cache?.store(sessionID, version: version, text: text, state: state, trail: trail, updatedAt: updatedAt)
            return loaded(state)
        } catch {
            throw SessionStateError(sessionID: sessionID, problem: "unreadable state: \(error)")
        }
    }
}
