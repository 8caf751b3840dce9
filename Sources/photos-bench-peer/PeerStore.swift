import CSQLite
import Dispatch
import Foundation

/// What the peer's routes ask of its database.
protocol PeerStoring: Sendable {
    /// A new session `id`: its row at version 0 with an empty state, in one transaction.
    func createSession(id: String) async throws
    /// One action on session `id`, in one transaction: its version moved on, its state written,
    /// the action appended as an event. The new version; nil for an unknown session.
    func apply(sessionID id: String, action: String) async throws -> Int64?
}

/// The peer's database: one SQLite connection in WAL mode with `synchronous = FULL` (photosd's
/// durability `full`: every commit is on the disk before it is answered), used by one serial
/// queue, one transaction per request — what a service without photosd's group commit does.
///
/// `@unchecked Sendable`: the connection and its statements are touched only on `queue`, one
/// block at a time (every method hops onto it), and never after `deinit`.
final class PeerStore: PeerStoring, @unchecked Sendable {
    private let queue = DispatchQueue(label: "photos-bench-peer.writer")
    private let connection: OpaquePointer
    private var statements: [String: OpaquePointer] = [:]

    /// Opens (creating) the database at `path`.
    init(path: String) throws {
        var handle: OpaquePointer?
        guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK, let handle else {
            throw PeerError("cannot open \(path)")
        }
        connection = handle
        for sql in [
            "PRAGMA journal_mode = WAL", "PRAGMA synchronous = FULL",
            "CREATE TABLE IF NOT EXISTS sessions (id TEXT PRIMARY KEY, version INTEGER NOT NULL, state TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL)",
            "CREATE TABLE IF NOT EXISTS events (id INTEGER PRIMARY KEY, session_id TEXT NOT NULL, seq INTEGER NOT NULL, at TEXT NOT NULL, detail TEXT NOT NULL, UNIQUE (session_id, seq))",
        ] {
            try execute(sql)
        }
    }

    deinit {
        for statement in statements.values { sqlite3_finalize(statement) }
        sqlite3_close_v2(connection)
    }

    func createSession(id: String) async throws {
        try await onQueue {
            let now = PeerClock.now()
            try self.transaction {
                try self.run("INSERT INTO sessions (id, version, state, created_at, updated_at) VALUES (?, 0, '{}', ?, ?)", [id, now, now])
            }
        }
    }

    func apply(sessionID id: String, action: String) async throws -> Int64? {
        try await onQueue {
            let now = PeerClock.now()
            return try self.transaction { () -> Int64? in
                guard let version = try self.version(of: id) else { return nil }
                try self.run("UPDATE sessions SET version = ?, state = ?, updated_at = ? WHERE id = ?", [version + 1, action, now, id])
                try self.run("INSERT INTO events (session_id, seq, at, detail) VALUES (?, ?, ?, ?)", [id, version + 1, now, action])
                return version + 1
            }
        }
    }

    private func onQueue<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try work() }) }
        }
    }

    private func transaction<T>(_ body: () throws -> T) throws -> T {
        try run("BEGIN IMMEDIATE", [])
        do {
            let result = try body()
            try run("COMMIT", [])
            return result
        } catch {
            _ = try? run("ROLLBACK", [])
            throw error
        }
    }

    private func version(of id: String) throws -> Int64? {
        let statement = try prepared("SELECT version FROM sessions WHERE id = ?")
        defer { sqlite3_reset(statement) }
        try bind([id], to: statement)
        switch sqlite3_step(statement) {
        case SQLITE_ROW: return sqlite3_column_int64(statement, 0)
        case SQLITE_DONE: return nil
        default: throw PeerError(String(cString: sqlite3_errmsg(connection)))
        }
    }

    private func run(_ sql: String, _ values: [any Sendable]) throws {
        let statement = try prepared(sql)
        defer { sqlite3_reset(statement) }
        try bind(values, to: statement)
        guard sqlite3_step(statement) == SQLITE_DONE else { throw PeerError(String(cString: sqlite3_errmsg(connection))) }
    }

    private func execute(_ sql: String) throws {
        guard sqlite3_exec(connection, sql, nil, nil, nil) == SQLITE_OK else { throw PeerError(String(cString: sqlite3_errmsg(connection))) }
    }

    private func prepared(_ sql: String) throws -> OpaquePointer {
        if let statement = statements[sql] { return statement }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(connection, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw PeerError(String(cString: sqlite3_errmsg(connection)))
        }
        statements[sql] = statement
        return statement
    }

    private func bind(_ values: [any Sendable], to statement: OpaquePointer) throws {
        sqlite3_clear_bindings(statement)
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            switch value {
            case let number as Int64: sqlite3_bind_int64(statement, index, number)
            case let text as String: sqlite3_bind_text(statement, index, text, -1, Self.transient)
            default: throw PeerError("cannot bind \(type(of: value))")
            }
        }
    }

    /// SQLite copies a text bound with this destructor.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
}

/// The time stamps the peer writes (as photosd's: ISO 8601 with milliseconds).
enum PeerClock {
    static func now() -> String {
        Date().formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true).timeZone(separator: .omitted))
    }
}

/// A failure of the peer's database.
struct PeerError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
