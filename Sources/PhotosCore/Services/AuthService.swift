import AuditTrail
import DatabaseAccess
import Foundation
import HummingbirdBcrypt
import PhotosModel
import Synchronization

/// Users, passwords and bearer tokens: what the sample kept in `UserDefaults.token` and
/// `UserDefaults.isSignedIn`.
///
/// Passwords are stored as bcrypt hashes (computed off the event loops, a bounded number at a
/// time); tokens are 256 random bits shown once and stored only as their SHA-256.
public struct AuthService: Sendable {
    let database: any DatabaseStore
    let bcryptCost: Int
    let tokenLifetime: TimeInterval
    let offload: Offload
    /// Where the sign-in limits are counted: in memory on SQLite (one process serves the
    /// file), in the database on a store several instances share.
    let limiter: any SignInCounting
    /// Which limit refusals get an audit row (one per limit and key per window).
    let refusals: SignInRefusalTally
    /// The sign-in limits' settings.
    let limits: SignInLimits
    /// The cost of the decoy checked for an unknown username: the stored hashes'.
    let decoyCost: DecoyCost
    /// The one clock for token issue, expiry and revocation, the sign-in limits, and the times
    /// the session coordinator stamps on its steps. Tests move it by hand.
    public let now: @Sendable () -> Date

    /// Creates the service. `signInMaxAttempts` is the per (username, address) limit; see
    /// `SignInLimits` for the others.
    public init(
        database: any DatabaseStore, bcryptCost: Int = 12, tokenLifetimeSeconds: Int = 86_400,
        signInMaxAttempts: Int = 5, signInWindowSeconds: Int = 300,
        signInMaxAttemptsPerAddress: Int = 20, signInMaxAttemptsPerUsername: Int = 50,
        offload: Offload = Offload(), now: @escaping @Sendable () -> Date = Date.init
    ) {
        self.database = database
        self.bcryptCost = bcryptCost
        self.tokenLifetime = TimeInterval(tokenLifetimeSeconds)
        self.offload = offload
        self.now = now
        let limits = SignInLimits(
            perUsernameAndAddress: signInMaxAttempts, perAddress: signInMaxAttemptsPerAddress,
            perUsername: signInMaxAttemptsPerUsername, windowSeconds: signInWindowSeconds)
        self.limits = limits
        self.limiter = database.writersRunConcurrently
            ? SharedSignInLimiter(database: database, limits: limits, now: now) : SignInLimiter(limits: limits, now: now)
        self.refusals = SignInRefusalTally(windowSeconds: signInWindowSeconds, now: now)
        self.decoyCost = DecoyCost(query: DecoyCost.users, configured: bcryptCost, now: now)
    }

    /// How long a sign-in attempt counts against the limits (the sweep prunes older ones).
    public var signInWindow: TimeInterval { TimeInterval(limits.windowSeconds) }
    /// How long an address stays trusted after a sign-in from it (the sweep prunes older ones).
    public var trustedAddressWindow: TimeInterval { TimeInterval(limits.trustedAddressSeconds) }

    /// The clock's time as stored (ISO-8601 UTC with milliseconds).
    public func timestamp() -> String { ISO8601Timestamp.string(from: now()) }

    /// Usernames: see `Credentials.validate(username:)`.
    public static func validate(username: String) throws { try Credentials.validate(username: username) }
    /// New passwords: see `Credentials.validate(password:)`.
    public static func validate(password: String) throws { try Credentials.validate(password: password) }
    /// Passwords offered at sign-in: see `Credentials.validateForSignIn(password:)`.
    public static func validateForSignIn(password: String) throws { try Credentials.validateForSignIn(password: password) }

    /// Creates a user. Throws `conflict` if the username is taken.
    public func createUser(username: String, password: String, actor: AuditActor) async throws -> User {
        try Self.validate(username: username)
        try Self.validate(password: password)
        let cost = UInt8(clamping: bcryptCost)
        let hash = await offload.run { Bcrypt.hash(password, cost: cost) }
        let at = timestamp()
        let salt = NameCommitment.newSalt()
        return try await database.write { connection in
            // RETURNING rather than SQLite's last-insert rowid: the same statement on PostgreSQL.
            let id: Int64
            do {
                id = try await connection.queryOne(
                    "INSERT INTO users (username, password_hash, created_at, name_salt) VALUES (\(username), \(hash), \(at), \(salt)) RETURNING id")?.int64("id") ?? 0
            } catch let error as any DatabaseFailure where error.isUniqueViolation {
                throw PhotosError(.conflict, "user \(username) already exists")
            }
            let user = User(id: id, username: username, createdAt: at)
            // The name enters the chain only as a commitment (erasure must leave the chain whole).
            let detail: JSONObject = ["userId": .int(user.id), NameCommitment.detailField: .string(NameCommitment.of(name: username, salt: salt))]
            try await AuditChains.append(
                [AuditEntry(actor: actor, userID: user.id, step: .userCreated, detail: detail)],
                to: actor.outOfSessionID, at: at, on: connection)
            return user
        }
    }

    /// Lists users by id.
    public func listUsers(limit: Int = 1_000, afterID: Int64 = 0) async throws -> [User] {
        try await database.read { connection in
            try await connection.query("SELECT id, username, created_at FROM users WHERE id > \(afterID) ORDER BY id LIMIT \(limit)")
                .map { User(id: try $0.int64("id"), username: try $0.string("username"), createdAt: try $0.string("created_at")) }
        }
    }

    /// Finds a user by name.
    public func user(named username: String) async throws -> User? {
        try await database.read { connection in try await Self.user(named: username, on: connection) }
    }

    /// Finds a user by name inside a transaction.
    public static func user(named username: String, on connection: any DatabaseConnection) async throws -> User? {
        try await connection.queryOne("SELECT id, username, created_at FROM users WHERE username = \(username) AND erased_at IS NULL")
            .map { User(id: try $0.int64("id"), username: try $0.string("username"), createdAt: try $0.string("created_at")) }
    }

    /// The address a sign-in is counted under when it does not come over the network (tests,
    /// the CLI).
    public static let localAddress = "local"

    /// What a sign-in attempt came to.
    public enum SignInCheck: Sendable {
        /// The password matched.
        case valid(User)
        /// It did not (or no user has the name).
        case invalid
        /// The sign-in limits refused to check it. `audit` is what the refusal's audit row adds
        /// (which limit; refusals unrecorded before it), or nil when this refusal is only
        /// counted: one row per limit and key in each window.
        case limited(PhotosError, audit: JSONObject?)
    }

    /// Checks a password from a client at `address`, under the sign-in limits (bcrypt runs only
    /// when no limit refuses). Throws `bad_request` for a password no user can have, and storage
    /// errors.
    public func check(username: String, password: String, address: String) async throws -> SignInCheck {
        try Self.validateForSignIn(password: password)
        return try await check(username: username, password: password, address: address, countedBy: limiter)
    }

    /// `check`'s attempt under `counter` (the limiter chosen at start, its own kind of place).
    private func check<Counter: SignInCounting>(
        username: String, password: String, address: String, countedBy counter: Counter
    ) async throws -> SignInCheck {
        let place: Counter.Place
        do {
            place = try await counter.begin(username: username, address: address)
        } catch let refused as SignInRefused {
            return .limited(refused.error, audit: refusals.note(refused, username: username, address: address))
        }
        let user: User?
        do {
            user = try await checkPassword(username: username, password: password)
        } catch {
            await counter.finish(place, .abandoned)
            throw error
        }
        await counter.finish(place, user == nil ? .failed : .succeeded)
        return user.map(SignInCheck.valid) ?? .invalid
    }

    /// Checks a password. Throws `invalid_credentials` for an unknown user or a wrong password,
    /// alike and in about the same time, and `too_many_attempts` (without checking) past the
    /// sign-in limits.
    public func authenticate(username: String, password: String, address: String = localAddress) async throws -> User {
        switch try await check(username: username, password: password, address: address) {
        case .valid(let user): return user
        case .invalid: throw PhotosError.invalidCredentials
        case .limited(let error, _): throw error
        }
    }

    /// bcrypt against the user's hash, or against a decoy for an unknown user (same time).
    private func checkPassword(username: String, password: String) async throws -> User? {
        let found = try await database.read { connection -> (user: User, hash: String)? in
            guard let row = try await connection.queryOne("SELECT id, username, created_at, password_hash FROM users WHERE username = \(username) AND erased_at IS NULL") else { return nil }
            return (User(id: try row.int64("id"), username: try row.string("username"), createdAt: try row.string("created_at")), try row.string("password_hash"))
        }
        let cost = found == nil ? try await decoyCost.cost(on: database) : bcryptCost
        let matches = await offload.run { Bcrypt.verify(password, hash: found?.hash ?? DecoyHash.hash(cost: cost)) }
        guard let user = found?.user, matches else { return nil }
        return user
    }

    /// A new bearer token for a signed-in user, and when it expires.
    public struct IssuedToken: Sendable {
        /// The token in clear: shown once, never stored.
        public let token: String
        /// Its expiry.
        public let expiresAt: String
    }

    /// A new bearer token, chosen now (256 random bits, shown once) with a random row id, for a
    /// sign-in about to be decided or written.
    public func newTokenGrant() -> TokenGrant {
        let token = SecureToken.random(byteCount: 32)
        let issued = now()
        return TokenGrant(
            // Random rather than the next in a sequence, so that it is known before the write;
            // below 2^53 so that every JSON reader keeps it exact. A collision is a unique
            // violation: the write is refused and made again with a new grant.
            id: Int64.random(in: 1...((1 << 53) - 1)), token: token, tokenHash: SecureToken.sha256Hex(token),
            issuedAt: ISO8601Timestamp.string(from: issued),
            expiresAt: ISO8601Timestamp.string(from: issued.addingTimeInterval(tokenLifetime)))
    }

    /// Stores `grant` for `userID` inside the caller's transaction (only its hash).
    public static func store(_ grant: TokenGrant, userID: Int64, on connection: any DatabaseConnection) async throws {
        try await connection.execute(
            "INSERT INTO tokens (id, token_hash, user_id, issued_at, expires_at) VALUES (\(grant.id), \(grant.tokenHash), \(userID), \(grant.issuedAt), \(grant.expiresAt))")
    }

    /// Stores a new token for `userID` inside the caller's transaction and returns it with its
    /// row id.
    public func issueToken(for userID: Int64, on connection: any DatabaseConnection) async throws -> (id: Int64, token: IssuedToken) {
        let grant = newTokenGrant()
        try await Self.store(grant, userID: userID, on: connection)
        return (grant.id, IssuedToken(token: grant.token, expiresAt: grant.expiresAt))
    }

    /// Signs in outside any client session (token API) from a client at `address`: checks the
    /// password, issues a token, and audits `auth.signIn`, or `auth.signInFailed` (with reason
    /// `tooManyAttempts` when the limits refused the attempt: one row per limit and key in each
    /// window).
    public func signIn(username: String, password: String, address: String = localAddress, actor: AuditActor) async throws -> (User, IssuedToken) {
        let user: User
        switch try await check(username: username, password: password, address: address) {
        case .valid(let valid):
            user = valid
        case .invalid:
            try await auditRefusedSignIn(knownUserID: await existingUserID(username), sessionID: actor.outOfSessionID, actor: actor, limit: nil)
            throw PhotosError.invalidCredentials
        case .limited(let error, let audit):
            if let audit {
                try await auditRefusedSignIn(knownUserID: await existingUserID(username), sessionID: actor.outOfSessionID, actor: actor, limit: audit)
            }
            throw error
        }
        return try await issueToken(for: user, actor: actor)
    }

    /// Issues a token for `user` **without a password**, on an operator's authority
    /// (`photos-admin sign-in USER`), audited as `auth.signIn`.
    public func signInWithoutPassword(_ user: User, actor: AuditActor) async throws -> (User, IssuedToken) {
        try await issueToken(for: user, actor: actor)
    }

    private func issueToken(for user: User, actor: AuditActor) async throws -> (User, IssuedToken) {
        let at = timestamp()
        let issued = try await database.write { connection in
            // Erased while bcrypt ran: no token for a person who is gone (see `TransactionLock.Key.user`).
            guard try await connection.userIsLive(user.id) else { throw PhotosError.invalidCredentials }
            let issued = try await issueToken(for: user.id, on: connection).token
            try await AuditChains.append(
                [AuditEntry(actor: actor, userID: user.id, step: .authSignIn)],
                to: actor.outOfSessionID, at: at, on: connection)
            return issued
        }
        return (user, issued)
    }

    /// Records an `auth.signInFailed` step in `sessionID`'s trail (`api` or `operator`); with
    /// `limit`, an attempt refused by the sign-in limits (`reason: "tooManyAttempts"`).
    func auditRefusedSignIn(knownUserID: Int64?, sessionID: String, actor: AuditActor, limit: JSONObject?) async throws {
        let entry = AuditEntry(
            actor: actor, step: .authSignInFailed,
            detail: Credentials.refusedSignInDetail(knownUserID: knownUserID, reason: limit == nil ? nil : "tooManyAttempts", limit: limit ?? [:]))
        let at = timestamp()
        _ = try await database.write { connection in
            try await AuditChains.append([entry], to: sessionID, at: at, on: connection)
        }
    }

    /// The id of the user with exactly that name, else nil (also when the lookup fails: this
    /// only decides what a refused sign-in's audit row may say).
    public func existingUserID(_ username: String) async -> Int64? {
        guard (try? Self.validate(username: username)) != nil else { return nil }
        return try? await user(named: username)?.id
    }

    /// The user a bearer token belongs to. Throws `unauthorized` for an unknown, expired or
    /// revoked token.
    public func validate(token: String) async throws -> User {
        try await database.read { connection in try await validate(token: token, on: connection) }
    }

    /// `validate(token:)` inside a transaction.
    public func validate(token: String, on connection: any DatabaseConnection) async throws -> User {
        guard let row = try await connection.queryOne(
            """
            SELECT u.id, u.username, u.created_at, t.expires_at, t.revoked_at
            FROM tokens t JOIN users u ON u.id = t.user_id WHERE t.token_hash = \(SecureToken.sha256Hex(token)) AND u.erased_at IS NULL
            """)
        else { throw PhotosError.unauthorized("unknown token") }
        if try row.optionalString("revoked_at") != nil { throw PhotosError.unauthorized("token revoked") }
        if !isUnexpired(try row.string("expires_at")) { throw PhotosError.unauthorized("token expired") }
        return User(id: try row.int64("id"), username: try row.string("username"), createdAt: try row.string("created_at"))
    }

    /// Revokes the token with row id `tokenID` if it is live (a session signing out).
    public func revoke(tokenID: Int64, on connection: any DatabaseConnection) async throws {
        try await connection.execute("UPDATE tokens SET revoked_at = \(timestamp()) WHERE id = \(tokenID) AND revoked_at IS NULL")
    }

    /// The expiry rule, in one place: a token expiring at `expiresAt` is still good now.
    private func isUnexpired(_ expiresAt: String) -> Bool {
        Self.isLive(expiresAt: expiresAt, revoked: false, at: timestamp())
    }

    /// The token rule, in one place: a token is live at `at` (a stored timestamp) when it is
    /// not revoked and expires after it. Every check of a token — the token API's, a session's
    /// before each action — applies this one.
    public static func isLive(expiresAt: String, revoked: Bool, at: String) -> Bool {
        !revoked && expiresAt > at
    }

    /// Revokes one token. Throws `unauthorized` if it is unknown or already revoked.
    public func signOut(token: String, actor: AuditActor) async throws -> User {
        let at = timestamp()
        return try await database.write { connection in
            let user = try await validate(token: token, on: connection)
            try await connection.execute("UPDATE tokens SET revoked_at = \(at) WHERE token_hash = \(SecureToken.sha256Hex(token))")
            try await AuditChains.append(
                [AuditEntry(actor: actor, userID: user.id, step: .authSignOut, detail: ["tokens": 1])],
                to: actor.outOfSessionID, at: at, on: connection)
            return user
        }
    }

    /// Revokes every live token of a user; returns how many.
    public func signOut(username: String, actor: AuditActor) async throws -> Int {
        let at = timestamp()
        return try await database.write { connection in
            guard let user = try await Self.user(named: username, on: connection) else {
                throw PhotosError.notFound("no user named \(username)")
            }
            let count = try await connection.execute("UPDATE tokens SET revoked_at = \(at) WHERE user_id = \(user.id) AND revoked_at IS NULL")
            try await AuditChains.append(
                [AuditEntry(actor: actor, userID: user.id, step: .authSignOut, detail: ["tokens": .int(Int64(count))])],
                to: actor.outOfSessionID, at: at, on: connection)
            return count
        }
    }
}
