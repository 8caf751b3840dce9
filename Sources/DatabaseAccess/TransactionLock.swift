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

extension TransactionLock.Key {
    /// One user's existence: an erasure holds it exclusively, and every write that signs the user
    /// in (a token) holds it shared and then reads the user again, so an erasure and a sign-in
    /// decided before it (bcrypt runs outside any transaction) never interleave.
    public static func user(_ id: Int64) -> Self { .name("user \(id)") }
}

extension DatabaseConnection {
    /// Whether user `id` exists and is not erased, read in the caller's write transaction after
    /// taking the user's lock shared (`TransactionLock.Key.user`): what every write that signs the
    /// user in checks, so that an erasure committed while bcrypt ran is seen (or waited for).
    public func userIsLive(_ id: Int64) async throws -> Bool {
        try await hold([.shared(.user(id))])
        return try await queryOne("SELECT 1 FROM users WHERE id = ? AND erased_at IS NULL", id) != nil
    }
}
