import PhotosModel

/// Everything outside the session that deciding an action needs, read before deciding: the
/// navigation core asks no database anything.
///
/// `SessionMachine.needs` says what to read; a reader (the `Sessions` module, or an in-memory
/// one in tests) fills it in.
public struct SessionFacts: Sendable, Equatable {
    /// The action's time, as stored (ISO-8601 UTC with milliseconds): every step is stamped with it.
    public var now: String
    /// The photos the action or the session names that exist; a named photo missing here does
    /// not exist.
    public var photos: [Int64: Photo]
    /// Per user id: which of the named photos that user owns (for a tabs session: every one).
    public var owned: [Int64: Set<Int64>]
    /// Per user id, for a tabs session: the photos the user bought, newest purchase first.
    public var purchased: [Int64: [Photo]]
    /// False when the token the session signed in with has been revoked or has expired.
    public var tokenLive: Bool
    /// The result of checking the submitted credentials beforehand (bcrypt is slow), if any.
    public var credentials: CredentialCheck?
    /// The token a sign-in in this action would issue.
    public var newToken: TokenGrant?
    /// Per variation point, the experiment that governs it: the running one, else the one
    /// stopped last (whose kept variant or control new flows take). Read only for actions that
    /// may start a purchase flow (`Needs.experiments`).
    public var experiments: [VariationPoint: Experiment] = [:]

    /// Creates facts.
    public init(
        now: String, photos: [Int64: Photo] = [:], owned: [Int64: Set<Int64>] = [:], purchased: [Int64: [Photo]] = [:],
        tokenLive: Bool = true, credentials: CredentialCheck? = nil, newToken: TokenGrant? = nil
    ) {
        self.now = now
        self.photos = photos
        self.owned = owned
        self.purchased = purchased
        self.tokenLive = tokenLive
        self.credentials = credentials
        self.newToken = newToken
    }

    /// What one decision needs, asked once per attempt: what to read, and what must happen
    /// before the decision — the submitted credentials checked (`credentials`; then asked
    /// again with the user they name, `mayIssueToken`), the experiments read (`experiments`).
    public struct Needs: Sendable, Equatable {
        /// What to read: the photos named by the action or the session, the users whose
        /// purchases matter (the session's, and one signing in), whole purchase lists for a tabs
        /// session, the session's token — the shape the store reads (`ActionRead.facts`).
        public var read: FactsWanted
        /// True when the action may sign someone in (a token is chosen beforehand).
        public var mayIssueToken: Bool
        /// True when the action may start a purchase flow, which takes the variation points
        /// the experiments govern.
        public var experiments: Bool = false
        /// True when the action is a `submit` the top screen takes: its credentials are
        /// checked (bcrypt, the sign-in limits) before it is decided, and the verdict passed in
        /// `SessionFacts.credentials` (`SessionMachine.needsCredentials`).
        public var credentials: Bool = false

        // What `read` names, as the core reads it.
        public var photoIDs: Set<Int64> { read.photoIDs }
        public var userIDs: Set<Int64> { read.userIDs }
        public var purchaseLists: Bool { read.purchaseLists }
        public var tokenID: Int64? { read.tokenID }
    }
}

/// What checking submitted credentials found (done before deciding: bcrypt is slow).
public enum CredentialCheck: Sendable, Equatable {
    /// The password matched.
    case valid(User)
    /// It did not; `existingUser` is the id of the user with the submitted name (nil for an
    /// unknown name, which is never recorded: it may be a password typed into the wrong field).
    case invalid(existingUser: Int64?)
    /// The sign-in limits refused to check it (`too_many_attempts`); `limit` is what the
    /// limits say of it in the audit row (which limit, how many refusals went unrecorded).
    case limited(PhotosError, existingUser: Int64?, limit: JSONObject)
}

/// What a decision asks the world to do, besides saving the session and its audit rows. The
/// write applies them all or none, with the session.
public enum SessionEffect: Sendable, Equatable {
    /// Record a purchase at this price (at most one per user and photo: the write refuses a
    /// second, and the action is decided again).
    case purchase(userID: Int64, photoID: Int64, priceCents: Int)
    /// Store this token for the user.
    case issueToken(TokenGrant, userID: Int64)
    /// Revoke the token with this id, if it is live.
    case revokeToken(id: Int64)
}
