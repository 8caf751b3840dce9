/// A lock a write transaction holds until it ends, for what the database's own row locks do
/// not cover (a trail's head, the checkpoint writer, a sign-in limit's counters).
///
/// A store whose write transactions run one at a time (SQLite's single writer) needs none and
/// takes none; a store with concurrent writers (PostgreSQL: several connections and instances)
/// takes a transaction-scoped advisory lock.
public struct TransactionLock: Sendable, Hashable {
    /// What is locked: a fixed number, or a name (hashed to a number by the store).
    public enum Key: Sendable, Hashable {
        /// A fixed key, for a lock the whole database shares.
        case number(Int64)
        /// A key named by text (e.g. `"audit trail " + sessionID`); bound as a value, never
        /// spliced into SQL.
        case name(String)
    }

    /// What is locked.
    public var key: Key
    /// Shared locks may be held by several transactions at once; an exclusive one waits for
    /// them all and holds new ones back.
    public var shared: Bool

    /// An exclusive lock on `key`.
    public static func exclusive(_ key: Key) -> TransactionLock { TransactionLock(key: key, shared: false) }
    /// A shared lock on `key`.
    public static func shared(_ key: Key) -> TransactionLock { TransactionLock(key: key, shared: true) }
}

/// Every lock key photosd takes, in one place. On PostgreSQL they share the database's one
/// advisory-lock space with each other (a named key is hashed into it), so a number used for two
/// purposes would make unrelated writers wait for each other; a raw value here cannot repeat
/// (the compiler refuses it).
extension TransactionLock.Key {
    /// The fixed keys, each an ASCII word as a number.
    public enum Fixed: Int64, CaseIterable, Sendable {
        /// "audit": every transaction that appends audit rows holds it shared; numbering rows
        /// into the transparency log holds it exclusively (`AuditChains`).
        case auditAppend = 0x61_75_64_69_74
        /// "tree": integrating new rows into the log's Merkle tree (`AuditLogTree`).
        case logIntegrate = 0x74_72_65_65
        /// "ckpt": writing a checkpoint (`AuditCheckpoints.write`).
        case checkpointWrite = 0x63_6B_70_74
        /// "photos": applying migrations, one instance at a time (`PostgresMigrator`).
        case migrations = 0x70_68_6F_74_6F_73
    }

    /// A fixed key.
    public static func fixed(_ key: Fixed) -> Self { .number(key.rawValue) }

    /// One user's existence: an erasure holds it exclusively, and every write that signs the user
    /// in (a token) holds it shared and then reads the user again, so an erasure and a sign-in
    /// decided before it (bcrypt runs outside any transaction) never interleave.
    public static func user(_ id: Int64) -> Self { .name("user \(id)") }

    /// One session's audit trail: its head, while a row is appended to it.
    public static func auditTrail(_ sessionID: String) -> Self { .name("audit trail " + sessionID) }

    /// The sign-in limits' counters of one client address.
    public static func signInAddress(_ place: String) -> Self { .name("sign-in address " + place) }

    /// The sign-in limits' counters of one username.
    public static func signInUsername(_ user: String) -> Self { .name("sign-in username " + user) }
}

extension DatabaseConnection {
    /// Whether user `id` exists and is not erased, read in the caller's write transaction after
    /// taking the user's lock shared (`TransactionLock.Key.user`): what every write that signs the
    /// user in checks, so that an erasure committed while bcrypt ran is seen (or waited for).
    public func userIsLive(_ id: Int64) async throws -> Bool {
        try await hold([.shared(.user(id))])
        return try await queryOne("SELECT 1 FROM users WHERE id = \(id) AND erased_at IS NULL") != nil
    }
}
