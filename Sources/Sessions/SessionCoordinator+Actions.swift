import AuditTrail
import DatabaseAccess
import Foundation
import Navigation
import PhotosCore
import PhotosModel

/// An action, as one loop: each round takes the session and the facts (what this process
/// knows, or one read), lets the core decide, and makes one write, which keeps the decision only
/// if what it was decided on still holds. The first round may decide on what this process knows
/// (the write checks what that assumed); when its write is refused, the next reads; when that
/// one's is refused too, the rest run under the store's lock, where nothing moves under them.
/// A round that finds the session waiting for credentials it has not checked returns for them
/// (bcrypt is slow: never inside a transaction). Past `rounds`, `conflict`.
extension SessionCoordinator {
    /// Rounds before giving up with `conflict`.
    static let rounds = 4

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
        if let idempotencyKey {
            guard (1...200).contains(idempotencyKey.utf8.count) else { throw PhotosError.badRequest("Idempotency-Key must be 1 to 200 bytes") }
        }
        if action.name == .submit { try action.validateParameters() }
        let request = ActionRequest(action: action, sessionID: sessionID, expectVersion: expectVersion, idempotencyKey: idempotencyKey, actor: actor)
        var result = traced
            ? try await SessionTracing.action(action.name, store: database.systemName) { try await run(request, address: address) }
            : try await run(request, address: address)
        if result.isReplay {
            result.isReplay = false
            if result.token != nil { result.token = try await reconfirmedToken(result.token, action: action, address: address) }
        }
        return result
    }

    /// Signs a live session in as `username` on the operator's authority. If the session waits
    /// on a `signIn` screen, its flow resumes exactly as after a successful `submit`.
    public func operatorSignIn(sessionID: String, username: String, actor: AuditActor) async throws -> ActionResult {
        guard let user = try await auth.user(named: username) else { throw PhotosError.notFound("no user named \(username)") }
        return try await run(
            ActionRequest(action: ClientAction(.submit, username: username), sessionID: sessionID, actor: actor, decider: .operatorSignIn(user)),
            address: AuthService.localAddress)
    }

    /// Completes the `buy` screen of a live session on the operator's authority.
    public func operatorPurchase(sessionID: String, actor: AuditActor) async throws -> ActionResult {
        try await run(
            ActionRequest(action: ClientAction(.buy), sessionID: sessionID, actor: actor, decider: .operatorPurchase), address: AuthService.localAddress)
    }

    /// Signs a live session out on the operator's authority (its token revoked; a step with
    /// `reason`). A session already signed out is left as it is.
    public func operatorSignOut(sessionID: String, reason: String, actor: AuditActor) async throws -> ActionResult {
        try await run(operatorSignOutRequest(sessionID: sessionID, reason: reason, actor: actor), address: AuthService.localAddress)
    }

    /// `operatorSignOut`, as what it came to: a session that ended or went meanwhile is an
    /// outcome (`expired`, `ended`, `missing`), not an error.
    func operatorSignOutOutcome(sessionID: String, reason: String, actor: AuditActor) async throws -> Outcome {
        try await loop(operatorSignOutRequest(sessionID: sessionID, reason: reason, actor: actor), address: AuthService.localAddress)
    }

    private func operatorSignOutRequest(sessionID: String, reason: String, actor: AuditActor) -> ActionRequest {
        ActionRequest(action: ClientAction(.signOut), sessionID: sessionID, actor: actor, decider: .operatorSignOut(reason: reason))
    }

    // MARK: The loop

    /// The loop, for an answer: an expiry or an ended session is the client's `session_expired`,
    /// a missing one `not_found`.
    func run(_ request: ActionRequest, address: String) async throws -> ActionResult {
        switch try await loop(request, address: address) {
        case .applied(let result):
            return result
        case .expired(let at), .ended(let at):
            throw Self.ended(at: at)
        case .missing:
            throw PhotosError.notFound("no session \(request.sessionID.prefix(64))")
        }
    }

    /// What an action came to, once its write committed (or nothing had to be written).
    enum Outcome: Sendable, Equatable {
        /// Applied, refused with a recorded step, or answered from a stored answer.
        case applied(ActionResult)
        /// The session was idle past the expiry and is ended now (by this action).
        case expired(at: String)
        /// The session had ended before (at `at`): nothing was written.
        case ended(at: String)
        /// There is no such session (never was, or archived): nothing was written.
        case missing
    }

    /// The loop: rounds until one ends in an outcome.
    func loop(_ request: ActionRequest, address: String) async throws -> Outcome {
        var request = request
        var way = Way.onKnownFacts
        for _ in 0..<Self.rounds {
            let round: Round
            if way == .locked {
                let locked = request
                let system = traced ? database.systemName : nil
                round = try await database.withSessionLocked(request.sessionID) { actions in
                    try await self.round(locked, on: system.map { TracedSessionActions(actions, system: $0) } ?? actions, trustKnown: false)
                }
            } else {
                let store: any SessionActions = traced ? TracedSessionActions(database, system: database.systemName) : database
                round = try await self.round(request, on: store, trustKnown: way == .onKnownFacts)
            }
            switch round {
            case .done(let result, let written):
                // Committed by now (the lock's transaction has ended): safe to keep in memory,
                // and to tell whoever listens.
                if let written {
                    cache.store(written.prepared)
                    known.learn(written: written.prepared.decision, sessionID: request.sessionID, storedKey: written.storedKey)
                    commits.publish(.init(sessionID: request.sessionID, kind: .applied, auditRows: written.prepared.chained.count))
                }
                return .applied(result)
            case .expired(let at, let prepared):
                cache.store(prepared)
                commits.publish(.init(sessionID: request.sessionID, kind: .expired, auditRows: prepared.chained.count))
                return .expired(at: at)
            case .ended(let at):
                return .ended(at: at)
            case .missing:
                return .missing
            case .needsCredentials:
                request.credentials = try await checkCredentials(request.action, address: address)
            case .refused:
                way = way == .onKnownFacts ? .read : .locked
                // Erased while bcrypt ran (the write refused the token): the name no longer
                // exists, and the next round refuses the sign-in as for any unknown name.
                if case .valid(let user)? = request.credentials, try await auth.user(named: user.username)?.id != user.id {
                    request.credentials = .invalid(existingUser: nil)
                }
            }
        }
        throw PhotosError(.conflict, "the session kept changing while this action was decided; retry")
    }

    /// How a round reads.
    enum Way {
        /// On what this process knows, when it knows enough; else one read.
        case onKnownFacts
        /// One read.
        case read
        /// The read and the write in one transaction holding the session.
        case locked
    }

    /// How a round ended.
    enum Round: Sendable {
        /// The answer; with the decision written, when it was (for the caches).
        case done(ActionResult, written: Written?)
        /// The session was idle past the expiry: its `session.expired` step was written.
        case expired(at: String, written: PreparedWrite)
        /// The session had ended before; nothing was written.
        case ended(at: String)
        /// No such session; nothing was written.
        case missing
        /// The session takes credentials that are not checked yet.
        case needsCredentials
        /// The write kept nothing: the session moved, or an assumed fact went stale.
        case refused(ActionWriteOutcome)
    }

    /// A decision written, and the key its answer was kept under.
    struct Written: Sendable {
        let prepared: PreparedWrite
        let storedKey: String?
    }

    /// One round of `request` on `store`: the session and facts, the decision, the write.
    func round(_ request: ActionRequest, on store: any SessionActions, trustKnown: Bool) async throws -> Round {
        let now = auth.now()
        let stamp = ISO8601Timestamp.string(from: now)
        let since = request.idempotencyKey == nil ? "" : idempotency.cutoff(now: now)
        let storedKey = try request.idempotencyKey.map { try idempotency.storedKey($0, sessionID: request.sessionID) }
        let cached = cache.entry(request.sessionID)

        // The session and the facts: what this process knows, or one read. The core is asked
        // once, on the state the round decides on (`Needs`: what to read, whether the
        // credentials are checked first, whether the experiments apply).
        var basis: Basis
        if trustKnown, let cached, let known = onKnownFacts(request, cached: cached, storedKey: storedKey, now: stamp) {
            basis = known
            if request.awaitsCredentials(basis.needs) { return .needsCredentials }
        } else {
            let snapshot = try await store.readForAction(ActionRead(
                sessionID: request.sessionID, facts: request.hints, namedByRow: true, answerKey: storedKey, answersSince: since))
            if let stored = snapshot.answer, let key = request.idempotencyKey {
                return .done(try idempotency.answer(stored, key: key, sessionID: request.sessionID, fingerprint: request.action.fingerprint), written: nil)
            }
            let loaded: LoadedSession
            switch try found(snapshot, sessionID: request.sessionID) {
            case .live(let live): loaded = live
            case .ended(let at): return .ended(at: at)
            case .missing: return .missing
            }
            if let idleSince = idleSince(loaded, now: now) {
                // Idle past the expiry: the session ends instead (the client is answered 410).
                guard let written = try await writeExpiry(of: request.sessionID, loaded: loaded, idleSince: idleSince, on: store, stamp: stamp) else {
                    return .refused(.moved)
                }
                return .expired(at: stamp, written: written)
            }
            if let expectVersion = request.expectVersion, expectVersion != loaded.version {
                throw PhotosError(.versionConflict, "session is at version \(loaded.version), not \(expectVersion)")
            }
            let needs = request.needs(on: loaded.state)
            if request.awaitsCredentials(needs) { return .needsCredentials }
            guard let facts = try await facts(
                for: needs, of: request.sessionID, on: loaded, from: snapshot, store: store, now: stamp,
                credentials: request.credentials, newToken: needs.mayIssueToken ? auth.newTokenGrant() : nil)
            else { return .refused(.moved) }
            basis = Basis(loaded: loaded, needs: needs, facts: facts, assumed: .init(), onKnownFacts: false)
        }
        // An action that may start a purchase flow takes the points the experiments govern.
        if basis.needs.experiments {
            basis.facts.experiments = try await experiments.current()
        }

        // The decision: pure.
        let loaded = basis.loaded
        let decision = try request.decide(SessionMachine.Input(
            sessionID: request.sessionID, version: loaded.version, state: loaded.state, lastSeq: loaded.trailSeq,
            action: request.action, actor: request.actor, facts: basis.facts))
        let prepared = PreparedWrite(decision, sessionID: request.sessionID, lastSeq: loaded.trailSeq, previousHash: loaded.trailHash)

        // The write: only if the session is as read and what was assumed still holds.
        var assumed = basis.assumed
        if let token = loaded.state.tokenId, basis.facts.tokenLive { assumed.tokenUnrevoked = token }
        let answer = try request.idempotencyKey.map {
            try idempotency.storedAnswer(decision.result, key: $0, sessionID: request.sessionID, fingerprint: request.action.fingerprint, now: now)
        }
        let outcome = try await store.writeDecision(prepared.write(
            .update(expectedVersion: loaded.version, expectedTrailSeq: loaded.trailSeq), at: stamp, answer: answer, answersSince: since,
            assumptions: assumed))
        switch outcome {
        case .written:
            if basis.onKnownFacts { known.count(held: true) }
            return .done(decision.result, written: Written(prepared: prepared, storedKey: answer == nil ? nil : storedKey))
        case .answered(let stored):
            guard let key = request.idempotencyKey else { throw PhotosError(.internal, "an answer came back for a request without a key") }
            return .done(try idempotency.answer(stored, key: key, sessionID: request.sessionID, fingerprint: request.action.fingerprint), written: nil)
        case .moved, .stale:
            if basis.onKnownFacts { known.count(held: false) }
            return .refused(outcome)
        }
    }

    /// What a decision is made on.
    struct Basis {
        var loaded: LoadedSession
        /// What the core said the decision needs, on `loaded`'s state.
        var needs: SessionFacts.Needs
        var facts: SessionFacts
        /// What the facts took as true without reading it (known facts), for the write to check.
        var assumed: ActionWrite.Assumptions
        var onKnownFacts: Bool
    }

    /// The session as this process holds it (`cached`) and the facts it knows, when that is
    /// enough to decide `request`: no credentials to check or token to issue, the trail head
    /// known, the version the client expects, no answer this process stored under the key (the
    /// read returns it), every fact known (`KnownFacts`).
    private func onKnownFacts(_ request: ActionRequest, cached: StateCache.Entry, storedKey: String?, now: String) -> Basis? {
        guard request.credentials == nil, let trail = cached.trail, case .client = request.decider else { return nil }
        if let expectVersion = request.expectVersion, expectVersion != cached.version { return nil }
        if let storedKey, known.answered(storedKey, sessionID: request.sessionID) { return nil }
        let needs = request.needs(on: cached.state)
        guard let (facts, assumed) = known.facts(for: needs, now: now) else { return nil }
        let loaded = LoadedSession(version: cached.version, state: cached.state, trailSeq: trail.seq, trailHash: trail.hash, updatedAt: cached.updatedAt)
        // Idle past the expiry, or not known since when: the read decides (and ends it).
        guard idleExpiry == 0 || (cached.updatedAt != nil && idleSince(loaded, now: ISO8601Timestamp.parse(now) ?? Date()) == nil) else { return nil }
        return Basis(loaded: loaded, needs: needs, facts: facts, assumed: assumed, onKnownFacts: true)
    }

    // MARK: Credentials

    /// Checks submitted credentials (bcrypt, off the event loops; counted by the sign-in limits).
    /// Throws the limits' `too_many_attempts` when the refusal is only counted (not the first
    /// of its window): the session is then left as it was, with no audit row.
    private func checkCredentials(_ action: ClientAction, address: String) async throws -> CredentialCheck {
        let username = action.username ?? ""
        switch try await auth.check(username: username, password: action.password ?? "", address: address) {
        case .valid(let user):
            return .valid(user)
        case .invalid:
            return .invalid(existingUser: await auth.existingUserID(username))
        case .limited(let error, let audit):
            guard let audit else { throw error }
            return .limited(error, existingUser: await auth.existingUserID(username), limit: audit)
        }
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
}

/// One action on its way through the loop.
struct ActionRequest: Sendable {
    var action: ClientAction
    var sessionID: String
    var expectVersion: Int? = nil
    var idempotencyKey: String? = nil
    var actor: AuditActor
    /// Who decides: the client's action, or an operator's.
    var decider: Decider = .client
    /// Set once the submitted password was checked.
    var credentials: CredentialCheck? = nil

    enum Decider: Sendable {
        /// `SessionMachine.decide`.
        case client
        /// `SessionMachine.operatorSignIn` as this user.
        case operatorSignIn(User)
        /// `SessionMachine.operatorPurchase`.
        case operatorPurchase
        /// `SessionMachine.operatorSignOut`, giving this reason.
        case operatorSignOut(reason: String)
    }

    /// The user this action may sign in.
    var signingIn: Int64? {
        if case .operatorSignIn(let user) = decider { return user.id }
        if case .valid(let user)? = credentials { return user.id }
        return nil
    }

    /// What the first read asks for besides what the session row names: the action's photo
    /// and link, the user signing in.
    var hints: FactsWanted {
        FactsWanted(
            photoIDs: Set([action.photoId, action.link?.photoID].compactMap { $0 }), userIDs: Set([signingIn].compactMap { $0 }),
            purchaseLists: action.link == .purchases)
    }

    /// What deciding this action on `state` needs: the core's one question of a round.
    func needs(on state: SessionState) -> SessionFacts.Needs {
        SessionMachine.needs(state: state, action: action, signingIn: signingIn)
    }

    /// True when `needs` has the credentials checked first and this request's are not yet
    /// (an operator's sign-in checks none).
    func awaitsCredentials(_ needs: SessionFacts.Needs) -> Bool {
        guard case .client = decider, credentials == nil else { return false }
        return needs.credentials
    }

    /// The core's decision.
    func decide(_ input: SessionMachine.Input) throws -> SessionDecision {
        switch decider {
        case .client:
            return try SessionMachine.decide(input)
        case .operatorSignIn(let user):
            return try SessionMachine.operatorSignIn(input, user: user)
        case .operatorPurchase:
            return try SessionMachine.operatorPurchase(input)
        case .operatorSignOut(let reason):
            return try SessionMachine.operatorSignOut(input, reason: reason)
        }
    }
}
