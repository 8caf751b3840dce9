/// What a commit survives, as both stores understand it (`database.durability`).
public enum Durability: String, Sendable, Codable, CaseIterable {
    /// A commit survives power loss: SQLite fsyncs on every commit; PostgreSQL waits for its WAL
    /// to reach disk (`synchronous_commit = on`).
    case full
    /// A commit survives a crash of the process, maybe not power loss: SQLite's WAL without
    /// fsync on commit; PostgreSQL's `synchronous_commit = off`.
    case normal
}
