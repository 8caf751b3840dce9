/// A row of `sessions` as written: the one definition of its columns, which every writer of a
/// session row (both stores, creation and update) takes from here.
///
/// Beside the state's JSON it keeps what an operator filters sessions by and what a store's
/// read for an action needs of the state without parsing it (migration 0010): the layout, the
/// top screen, the token, the photos the state names.
public struct SessionRow: Sendable, Equatable {
    public var id: String
    public var version: Int
    /// The state's JSON.
    public var state: String
    public var userID: Int64?
    /// Set when the row is created (creation only).
    public var createdAt: String
    public var updatedAt: String
    /// The trail's head after the write.
    public var trailSeq: Int
    public var trailHash: String
    /// `stack` or `tabs`.
    public var layout: String
    /// The top screen's name, nil before the session starts.
    public var topScreen: String?
    /// The session's token (row id in `tokens`), nil when signed out.
    public var tokenID: Int64?
    /// Every photo the state names.
    public var photoIDs: Set<Int64>
    /// When the session ended (idle past `sessions.idleExpirySeconds`); nil while it lives.
    public var endedAt: String?
    /// SHA-256 (hex) of the session's secret, the credential of every request on it (creation
    /// only: it never changes; migration 0014).
    public var secretHash: String?

    /// Creates a row.
    public init(
        id: String, version: Int, state: String, userID: Int64?, createdAt: String, updatedAt: String, trailSeq: Int, trailHash: String,
        layout: String, topScreen: String?, tokenID: Int64?, photoIDs: Set<Int64>, endedAt: String? = nil, secretHash: String? = nil
    ) {
        self.id = id
        self.version = version
        self.state = state
        self.userID = userID
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.trailSeq = trailSeq
        self.trailHash = trailHash
        self.layout = layout
        self.topScreen = topScreen
        self.tokenID = tokenID
        self.photoIDs = photoIDs
        self.endedAt = endedAt
        self.secretHash = secretHash
    }

    /// One column written: its name, whether it holds an integer (else text), its value.
    public struct Column: Sendable {
        public let name: String
        public let isInteger: Bool
        public let value: any DatabaseBindable

        init(_ name: String, integer: Bool, _ value: any DatabaseBindable) {
            self.name = name
            self.isInteger = integer
            self.value = value
        }
    }

    /// The columns an update sets, with their values: the one list of them.
    public var updatedColumns: [Column] {
        [
            Column("version", integer: true, version), Column("state", integer: false, state),
            Column("user_id", integer: true, userID), Column("updated_at", integer: false, updatedAt),
            Column("trail_seq", integer: true, trailSeq), Column("trail_hash", integer: false, trailHash),
            Column("layout", integer: false, layout), Column("top_screen", integer: false, topScreen),
            Column("token_id", integer: true, tokenID), Column("photo_ids", integer: false, IDList.text(photoIDs)),
            Column("ended_at", integer: false, endedAt),
        ]
    }

    /// The columns an insert sets: the id, the creation time, the secret's hash, and the update's.
    public var insertedColumns: [Column] {
        [Column("id", integer: false, id), Column("created_at", integer: false, createdAt), Column("secret_hash", integer: false, secretHash)]
            + updatedColumns
    }

    /// A row with no meaning, for the names and kinds of its columns (a statement's text).
    public static let shape = SessionRow(
        id: "", version: 0, state: "", userID: nil, createdAt: "", updatedAt: "", trailSeq: 0, trailHash: "", layout: "", topScreen: nil,
        tokenID: nil, photoIDs: [])
}

/// A set of row ids as the text both stores keep and PostgreSQL casts to `bigint[]`: `{3,7}`.
public enum IDList {
    /// `{3,7}` for the ids 7 and 3 (ascending).
    public static func text(_ ids: Set<Int64>) -> String {
        "{" + ids.sorted().map(String.init).joined(separator: ",") + "}"
    }

    /// The ids of a text written by `text`; nil for any other text.
    public static func ids(_ text: String) -> Set<Int64>? {
        guard text.first == "{", text.last == "}" else { return nil }
        let inner = text.dropFirst().dropLast()
        if inner.isEmpty { return [] }
        var ids = Set<Int64>()
        for part in inner.split(separator: ",", omittingEmptySubsequences: false) {
            guard let id = Int64(part) else { return nil }
            ids.insert(id)
        }
        return ids
    }
}

/// A row of `audit_events` as written: the one definition of its columns, used by every insert
/// of audit rows (the services' `AuditChains.insert`, and each store's action write).
public struct AuditRowValues: Sendable, Equatable {
    public var sessionID: String
    public var seq: Int
    public var at: String
    public var actor: String
    public var userID: Int64?
    public var username: String?
    public var coordinator: String?
    public var step: String
    public var screen: String?
    public var detail: String
    public var previousHash: String
    public var hash: String

    /// Creates a row.
    public init(
        sessionID: String, seq: Int, at: String, actor: String, userID: Int64?, username: String?, coordinator: String?, step: String,
        screen: String?, detail: String, previousHash: String, hash: String
    ) {
        self.sessionID = sessionID
        self.seq = seq
        self.at = at
        self.actor = actor
        self.userID = userID
        self.username = username
        self.coordinator = coordinator
        self.step = step
        self.screen = screen
        self.detail = detail
        self.previousHash = previousHash
        self.hash = hash
    }

    /// The columns written, in the order of `values`.
    public static let columns = [
        "session_id", "seq", "at", "actor", "user_id", "username", "coordinator", "step", "screen", "detail", "prev_hash", "hash",
    ]

    /// The columns that hold integers (the others hold text).
    public static let integerColumns: Set<String> = ["seq", "user_id"]

    /// The values, in the order of `columns`.
    public var values: [any DatabaseBindable] {
        [sessionID, seq, at, actor, userID, username, coordinator, step, screen, detail, previousHash, hash]
    }
}
