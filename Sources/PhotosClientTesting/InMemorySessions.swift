import Foundation
import Navigation
import PhotosModel

/// The navigation core alone, over a world kept in memory: photos, users with their passwords,
/// purchases, tokens, and every session's state and audit rows. It reads the facts the core asks
/// for, lets it decide, and applies the decision as the `Sessions` module does over a database —
/// no SQL, no storage module anywhere. One action at a time (it is an actor).
///
/// `FakePhotosServer` serves it over HTTP's shapes to an app's tests; the navigation tests run
/// their flows on it beside the real stores (`SessionHarness`), which keeps the two answering
/// alike.
package actor InMemorySessions {
    private var photos: [Int64: Photo]
    private var users: [String: (user: User, password: String)] = [:]
    /// (user id, photo id), oldest first.
    private var purchases: [(userID: Int64, photoID: Int64)] = []
    private var tokens: [Int64: (hash: String, userID: Int64, expiresAt: String, revoked: Bool)] = [:]
    private var sessions: [String: (version: Int, state: SessionState, rows: [AuditRow])] = [:]
    private var clock: Date
    /// The experiments, oldest first (`ExperimentService.governing`'s rule: the last on a point governs).
    private var experiments: [Experiment] = []

    /// A world with `photos`, no users, whose clock starts at `clock` and moves a millisecond per
    /// read (the tests' fixed start by default: their answers do not depend on the day).
    package init(photos: [Photo], clock: Date = Date(timeIntervalSince1970: 1_795_000_000)) {
        self.photos = Dictionary(uniqueKeysWithValues: photos.map { ($0.id, $0) })
        self.clock = clock
    }

    /// A world with `photos` and `users` (username → password, given ids in name order).
    package init(photos: [Photo], users: [String: String], clock: Date) throws {
        self.photos = Dictionary(uniqueKeysWithValues: photos.map { ($0.id, $0) })
        self.clock = clock
        var added: [String: (user: User, password: String)] = [:]
        for (username, password) in users.sorted(by: { $0.key < $1.key }) {
            added[username] = try Self.newUser(username, password: password, in: added, at: ISO8601Timestamp.string(from: clock))
        }
        self.users = added
    }

    /// The catalogue, by id.
    package var catalogue: [Photo] { photos.values.sorted { $0.id < $1.id } }

    // MARK: The world outside sessions

    package func addUser(_ username: String, password: String) throws {
        users[username] = try Self.newUser(username, password: password, in: users, at: now())
    }

    /// A user to add to `users` (ids 1, 2, …), or the refusal photosd would give.
    private static func newUser(
        _ username: String, password: String, in users: [String: (user: User, password: String)], at: String
    ) throws -> (user: User, password: String) {
        try Credentials.validate(username: username)
        try Credentials.validate(password: password)
        guard users[username] == nil else { throw PhotosError(.conflict, "user \(username) already exists") }
        return (User(id: Int64(users.count + 1), username: username, createdAt: at), password)
    }

    /// `photos-admin experiments add` (no checks: the service's are tested on the stores).
    package func addExperiment(_ experiment: Experiment) {
        experiments.append(experiment)
    }

    /// `photos-admin experiments stop NAME [--keep VARIANT]`.
    package func stopExperiment(_ name: String, keep: String?) {
        guard let index = experiments.firstIndex(where: { $0.name == name }) else { return }
        experiments[index].running = false
        experiments[index].kept = keep
    }

    /// Revokes every live token of `username` (`photos-admin sign-out USER`).
    package func signOutEverywhere(_ username: String) {
        guard let user = users[username]?.user else { return }
        for (id, token) in tokens where token.userID == user.id { tokens[id]?.revoked = true }
    }

    /// A purchase made outside any session (`photos-admin purchase USER PHOTO_ID`).
    package func buyOutside(_ username: String, photoID: Int64) throws {
        guard let user = users[username]?.user, photos[photoID] != nil else { throw PhotosError.notFound("no such user or photo") }
        if !purchases.contains(where: { $0 == (user.id, photoID) }) { purchases.append((user.id, photoID)) }
    }

    /// The user a bearer token belongs to; `unauthorized` as `AuthService.validate(token:)`.
    package func tokenUser(_ token: String) throws -> String {
        let hash = SecureToken.sha256Hex(token)
        guard let found = tokens.values.first(where: { $0.hash == hash }) else { throw PhotosError.unauthorized("unknown token") }
        if found.revoked { throw PhotosError.unauthorized("token revoked") }
        return users.values.first { $0.user.id == found.userID }?.user.username ?? ""
    }

    package func savedState(_ id: String) throws -> SessionState {
        guard let session = sessions[id] else { throw PhotosError.notFound("no session \(id)") }
        return session.state
    }

    /// `username:photoId` per purchase, sorted.
    package func purchaseList() -> [String] {
        purchases.map { purchase in
            "\(users.values.first { $0.user.id == purchase.userID }?.user.username ?? "?"):\(purchase.photoID)"
        }.sorted()
    }

    package var sessionCount: Int { sessions.count }

    // MARK: SessionDriver

    package func createSession(layout: SessionLayout, link: DeepLink?, actor: AuditActor) throws -> ActionResult {
        let id = SecureToken.random(byteCount: 18)
        let facts = read(SessionMachine.needs(state: nil, action: nil, link: link))
        let decision = try SessionMachine.start(sessionID: id, layout: layout, link: link, actor: actor, facts: facts)
        try write(decision, to: id, rows: [])
        return decision.result
    }

    package func session(id: String) throws -> SessionView {
        guard let session = sessions[id] else { throw PhotosError.notFound("no session \(id)") }
        return SessionMachine.view(id: id, version: session.version, state: session.state, facts: read(SessionMachine.needs(state: session.state, action: nil)))
    }

    package func events(sessionID: String, after: Int, limit: Int) throws -> [AuditRow] {
        guard let session = sessions[sessionID] else { throw PhotosError.notFound("no session \(sessionID)") }
        return Array(session.rows.filter { $0.seq > after }.prefix(limit))
    }

    package func apply(_ action: ClientAction, to sessionID: String, expectVersion: Int?, idempotencyKey: String?, actor: AuditActor) throws -> ActionResult {
        guard let session = sessions[sessionID] else { throw PhotosError.notFound("no session \(sessionID)") }
        if let expectVersion, expectVersion != session.version {
            throw PhotosError(.versionConflict, "session is at version \(session.version), not \(expectVersion)")
        }
        var credentials: CredentialCheck?
        if action.name == .submit {
            try action.validateParameters()
            if SessionMachine.needs(state: session.state, action: action).credentials { credentials = check(action) }
        }
        var signingIn: User?
        if case .valid(let user)? = credentials { signingIn = user }
        return try decideAndWrite(sessionID, action: action, actor: actor, credentials: credentials, signingIn: signingIn) { try SessionMachine.decide($0) }
    }

    package func operatorSignIn(sessionID: String, username: String, actor: AuditActor) throws -> ActionResult {
        guard let user = users[username]?.user else { throw PhotosError.notFound("no user named \(username)") }
        return try decideAndWrite(sessionID, action: ClientAction(.submit, username: username), actor: actor, signingIn: user) {
            try SessionMachine.operatorSignIn($0, user: user)
        }
    }

    package func operatorPurchase(sessionID: String, actor: AuditActor) throws -> ActionResult {
        try decideAndWrite(sessionID, action: ClientAction(.buy), actor: actor) { input in
            guard input.state.topScreen?.screen == .buy else { throw PhotosError(.actionNotAvailable, "not on buy") }
            return try SessionMachine.decide(input)
        }
    }

    // MARK: Read, decide, write

    private func decideAndWrite(
        _ sessionID: String, action: ClientAction, actor: AuditActor, credentials: CredentialCheck? = nil, signingIn: User? = nil,
        decide: (SessionMachine.Input) throws -> SessionDecision
    ) throws -> ActionResult {
        guard let session = sessions[sessionID] else { throw PhotosError.notFound("no session \(sessionID)") }
        let needs = SessionMachine.needs(state: session.state, action: action, signingIn: signingIn?.id)
        let facts = read(needs, credentials: credentials)
        let decision = try decide(SessionMachine.Input(
            sessionID: sessionID, version: session.version, state: session.state, lastSeq: session.rows.count,
            action: action, actor: actor, facts: facts))
        try write(decision, to: sessionID, rows: session.rows)
        return decision.result
    }

    private func now() -> String {
        clock.addTimeInterval(0.001)
        return ISO8601Timestamp.string(from: clock)
    }

    private func check(_ action: ClientAction) -> CredentialCheck {
        let username = action.username ?? ""
        guard let entry = users[username] else { return .invalid(existingUser: nil) }
        return entry.password == action.password ? .valid(entry.user) : .invalid(existingUser: entry.user.id)
    }

    private func read(_ needs: SessionFacts.Needs, credentials: CredentialCheck? = nil) -> SessionFacts {
        let at = now()
        var facts = SessionFacts(now: at, credentials: credentials)
        for id in needs.photoIDs { facts.photos[id] = photos[id] }
        for userID in needs.userIDs {
            let bought = purchases.filter { $0.userID == userID }.map(\.photoID)
            if needs.purchaseLists {
                facts.purchased[userID] = bought.reversed().compactMap { photos[$0] }
                facts.owned[userID] = Set(bought)
            } else {
                facts.owned[userID] = Set(bought).intersection(needs.photoIDs)
            }
        }
        if let tokenID = needs.tokenID {
            facts.tokenLive = tokens[tokenID].map { !$0.revoked && $0.expiresAt > at } ?? false
        }
        if needs.experiments {
            for experiment in experiments { facts.experiments[experiment.point] = experiment }
        }
        if needs.mayIssueToken {
            let token = SecureToken.random(byteCount: 32)
            facts.newToken = TokenGrant(
                id: Int64(tokens.count + 1), token: token, tokenHash: SecureToken.sha256Hex(token),
                issuedAt: at, expiresAt: ISO8601Timestamp.string(from: clock.addingTimeInterval(86_400)))
        }
        return facts
    }

    /// Applies a decision: its effects (a second purchase of one photo by one user, or a token
    /// id taken, would be a bug here: one action at a time), the session and its rows.
    private func write(_ decision: SessionDecision, to sessionID: String, rows: [AuditRow]) throws {
        for effect in decision.effects {
            switch effect {
            case .purchase(let userID, let photoID, _):
                guard !purchases.contains(where: { $0 == (userID, photoID) }) else { throw PhotosError(.conflict, "bought twice") }
                purchases.append((userID, photoID))
            case .issueToken(let grant, let userID):
                guard tokens[grant.id] == nil else { throw PhotosError(.conflict, "token id taken") }
                tokens[grant.id] = (grant.tokenHash, userID, grant.expiresAt, false)
            case .revokeToken(let id):
                tokens[id]?.revoked = true
            }
        }
        // As the `audit_trail` view does: the name comes from the users, not from the row.
        let names = Dictionary(users.values.map { ($0.user.id, $0.user.username) }, uniquingKeysWith: { first, _ in first })
        sessions[sessionID] = (decision.version, decision.state, rows + decision.records.map { $0.row(username: $0.userID.flatMap { names[$0] }) })
    }
}
