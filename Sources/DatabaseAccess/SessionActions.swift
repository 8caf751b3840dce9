import PhotosModel

/// The action contract: what every store offers the session coordinator, so that an action is
/// one loop whatever the store — read the session and the facts, decide (outside the store),
/// write the decision only if what it assumed still holds.
///
/// - `readForAction` returns the session's row and the facts a decision on it may need, or the
///   answer stored under the request's idempotency key, as one snapshot.
/// - `writeDecision` writes a decision all or nothing and says what happened as a value:
///   `written`; `moved` (the session is not at the version and trail head the decision was
///   made on); `stale` (a fact it assumed no longer holds); or `answered` (an answer is stored
///   under the request's key meanwhile). Whatever is not `written` kept nothing.
/// - `withSessionLocked` runs both inside one transaction that holds the session against every
///   other writer (SQLite: the one writer; PostgreSQL: the row locked), for an action that lost
///   the optimistic race.
///
/// Each store is free to implement them in its fastest form: SQLite reads on a reader and
/// writes inside its writer's transaction, where checking costs no round trip; PostgreSQL runs
/// each as one statement, one round trip.
public protocol SessionActions {
    /// The session's row and the facts `read` asks for, on one snapshot.
    func readForAction(_ read: ActionRead) async throws -> ActionSnapshot

    /// Writes `write` if what it assumed still holds; otherwise keeps nothing and says why.
    func writeDecision(_ write: ActionWrite) async throws -> ActionWriteOutcome
}

/// What to read for an action.
public struct ActionRead: Sendable {
    /// The session.
    public var sessionID: String
    /// The facts wanted.
    public var facts: FactsWanted
    /// True: also what the session row itself names (the columns kept beside its state, see
    /// `SessionRow`): its photos, its user, its token, and whole lists for a tab bar. Used when
    /// the state is not known yet; the caller checks the snapshot covers what the state needs.
    public var namedByRow: Bool
    /// The idempotency key as stored (`idempotency_keys.key`), if the request has one.
    public var answerKey: String?
    /// Answers stored at or before this time have expired.
    public var answersSince: String

    /// Creates a read.
    public init(sessionID: String, facts: FactsWanted, namedByRow: Bool = false, answerKey: String?, answersSince: String) {
        self.sessionID = sessionID
        self.facts = facts
        self.namedByRow = namedByRow
        self.answerKey = answerKey
        self.answersSince = answersSince
    }
}

/// What `readForAction` found.
public struct ActionSnapshot: Sendable {
    /// The session's row; nil when there is no such session (the facts are read all the same).
    public var session: SessionRowRead?
    /// The facts the read covered (with `namedByRow`, what the row named added): the photos,
    /// users and token asked about, whether they came with whole lists.
    public var covered: FactsWanted
    /// The photos among `covered.photoIDs` that exist.
    public var photos: [PhotoRecord]
    /// Per user in `covered.userIDs`: what they bought among `covered.photoIDs`, or (with
    /// `covered.purchaseLists`) everything they bought; newest purchase first.
    public var purchases: [Int64: [PhotoRecord]]
    /// The row of `covered.tokenID`, nil when there is none.
    public var token: TokenRecord?
    /// The answer stored under the read's key and not expired.
    public var answer: StoredAnswerRecord?

    /// Creates a snapshot.
    public init(
        session: SessionRowRead?, covered: FactsWanted, photos: [PhotoRecord], purchases: [Int64: [PhotoRecord]], token: TokenRecord?,
        answer: StoredAnswerRecord?
    ) {
        self.session = session
        self.covered = covered
        self.photos = photos
        self.purchases = purchases
        self.token = token
        self.answer = answer
    }
}

/// A session row as read for an action.
public struct SessionRowRead: Sendable {
    /// Its version.
    public var version: Int
    /// Its state's JSON.
    public var stateText: String
    /// Its trail's head: the last seq and its hash.
    public var trailSeq: Int
    public var trailHash: String
    /// When it was last written (what idle expiry counts from).
    public var updatedAt: String
    /// When it ended; nil while it lives.
    public var endedAt: String?

    /// Creates a row read.
    public init(version: Int, stateText: String, trailSeq: Int, trailHash: String, updatedAt: String, endedAt: String?) {
        self.version = version
        self.stateText = stateText
        self.trailSeq = trailSeq
        self.trailHash = trailHash
        self.updatedAt = updatedAt
        self.endedAt = endedAt
    }
}

/// A photo's row.
public struct PhotoRecord: Sendable, Equatable {
    public var id: Int64
    public var title: String
    public var url: String
    public var priceCents: Int

    /// Creates a photo record.
    public init(id: Int64, title: String, url: String, priceCents: Int) {
        self.id = id
        self.title = title
        self.url = url
        self.priceCents = priceCents
    }
}

/// A token's row as an action needs it: whether it lives is the caller's rule to apply.
public struct TokenRecord: Sendable, Equatable {
    public var id: Int64
    public var expiresAt: String
    public var revoked: Bool

    /// Creates a token record.
    public init(id: Int64, expiresAt: String, revoked: Bool) {
        self.id = id
        self.expiresAt = expiresAt
        self.revoked = revoked
    }
}

/// An answer kept for an idempotency key (`idempotency_keys`), as stored: its request's hash
/// and the response (sealed where it holds a token; the coordinator's to open).
public struct StoredAnswerRecord: Sendable, Equatable {
    public var requestHash: String
    public var response: String

    /// Creates an answer record.
    public init(requestHash: String, response: String) {
        self.requestHash = requestHash
        self.response = response
    }
}

/// A decision, ready to write.
public struct ActionWrite: Sendable {
    /// How the session row is written.
    public enum Kind: Sendable, Equatable {
        /// A new session: inserted (`moved` if the id is taken).
        case create
        /// An update, only if the row is still at this version and trail seq.
        case update(expectedVersion: Int, expectedTrailSeq: Int)
    }

    /// The session row as it is to be.
    public var row: SessionRow
    /// Insert or conditional update.
    public var kind: Kind
    /// The audit rows, chained, in seq order.
    public var audit: [AuditRowValues]
    /// The decision's time (purchases, revocations).
    public var at: String
    /// Purchases to make: refused (`stale`) when one exists already.
    public var purchases: [PurchaseRecord]
    /// Tokens to issue: refused (`stale`) when an id is taken.
    public var issuedTokens: [IssuedTokenRecord]
    /// Tokens to revoke.
    public var revokedTokenIDs: Set<Int64>
    /// The answer to keep under the request's idempotency key: refused (`answered`, or `stale`
    /// where the store cannot say which) when an answer newer than `answersSince` is stored.
    public var answer: AnswerRecord?
    /// Answers stored at or before this time have expired and are replaced.
    public var answersSince: String
    /// What the decision took as true without reading it in this snapshot.
    public var assumptions: Assumptions

    /// Creates a write.
    public init(
        row: SessionRow, kind: Kind, audit: [AuditRowValues], at: String, purchases: [PurchaseRecord] = [],
        issuedTokens: [IssuedTokenRecord] = [], revokedTokenIDs: Set<Int64> = [], answer: AnswerRecord? = nil, answersSince: String = "",
        assumptions: Assumptions = Assumptions()
    ) {
        self.row = row
        self.kind = kind
        self.audit = audit
        self.at = at
        self.purchases = purchases
        self.issuedTokens = issuedTokens
        self.revokedTokenIDs = revokedTokenIDs
        self.answer = answer
        self.answersSince = answersSince
        self.assumptions = assumptions
    }

    /// What a decision assumed; the write refuses (`stale`) when any of it is untrue.
    public struct Assumptions: Sendable, Equatable {
        /// This token is not revoked (it was live when decided; dead ones stay dead).
        public var tokenUnrevoked: Int64?
        /// `user` has bought none of `photos`.
        public var notBought: NotBought?
        /// `user` has exactly `count` purchases (a whole list taken as known).
        public var purchaseCount: PurchaseCount?

        /// Creates assumptions.
        public init(tokenUnrevoked: Int64? = nil, notBought: NotBought? = nil, purchaseCount: PurchaseCount? = nil) {
            self.tokenUnrevoked = tokenUnrevoked
            self.notBought = notBought
            self.purchaseCount = purchaseCount
        }
    }

    /// Photos a user has not bought.
    public struct NotBought: Sendable, Equatable {
        public var userID: Int64
        public var photoIDs: Set<Int64>
        public init(userID: Int64, photoIDs: Set<Int64>) {
            self.userID = userID
            self.photoIDs = photoIDs
        }
    }

    /// How many purchases a user has.
    public struct PurchaseCount: Sendable, Equatable {
        public var userID: Int64
        public var count: Int
        public init(userID: Int64, count: Int) {
            self.userID = userID
            self.count = count
        }
    }
}

/// What `writeDecision` did.
public enum ActionWriteOutcome: Sendable, Equatable {
    /// All of it is committed.
    case written
    /// The session is not at the version or trail head expected (or, creating, exists).
    case moved
    /// A fact the decision assumed no longer holds; `reason` says which, for the logs.
    case stale(reason: String)
    /// An answer is stored under the request's key: this one, to return instead.
    case answered(StoredAnswerRecord)

    /// True for `stale`, whatever its reason.
    public var isStale: Bool {
        if case .stale = self { return true }
        return false
    }
}

/// A purchase to insert.
public struct PurchaseRecord: Sendable, Equatable {
    public var userID: Int64
    public var photoID: Int64
    public var priceCents: Int
    public init(userID: Int64, photoID: Int64, priceCents: Int) {
        self.userID = userID
        self.photoID = photoID
        self.priceCents = priceCents
    }
}

/// A token to insert (its hash only: the token itself is never stored).
public struct IssuedTokenRecord: Sendable, Equatable {
    public var id: Int64
    public var tokenHash: String
    public var userID: Int64
    public var issuedAt: String
    public var expiresAt: String
    public init(id: Int64, tokenHash: String, userID: Int64, issuedAt: String, expiresAt: String) {
        self.id = id
        self.tokenHash = tokenHash
        self.userID = userID
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
    }
}

/// An answer to keep under an idempotency key (`idempotency_keys`), as stored.
public struct AnswerRecord: Sendable, Equatable {
    public var key: String
    public var requestHash: String
    public var response: String
    public var createdAt: String
    public init(key: String, requestHash: String, response: String, createdAt: String) {
        self.key = key
        self.requestHash = requestHash
        self.response = response
        self.createdAt = createdAt
    }
}
