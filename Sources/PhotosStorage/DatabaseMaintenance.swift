import AuditTrail
import DatabaseAccess
import Foundation
import Logging
import PhotosCore
import PhotosModel
import PostgresStore
import SchemaMigrations
import SQLiteStore

/// What an operator does to a database as a whole: check it, back it up, read and verify its
/// audit trail. `photos-admin` calls these; it runs no SQL of its own.
public enum DatabaseMaintenance {
    /// The findings of `check`.
    public struct CheckReport: Sendable {
        /// `PRAGMA integrity_check`'s lines: `["ok"]` when sound; empty when not checked here
        /// (PostgreSQL: the server's own tools, such as amcheck, do that).
        public var integrity: [String]
        /// Every migration this binary knows, applied or not.
        public var migrations: [MigrationStatus]
        /// The audit trail's verification; nil when no migration has been applied yet.
        public var audit: AuditChains.Verification?

        /// Migrations not applied yet.
        public var pendingMigrations: [MigrationStatus] { migrations.filter { $0.appliedAt == nil } }
        /// How many problems were found.
        public var problemCount: Int {
            (integrity == ["ok"] || integrity.isEmpty ? 0 : 1) + (pendingMigrations.isEmpty ? 0 : 1) + (audit?.isIntact == false ? 1 : 0)
        }
    }

    /// Checks the database at `path` read-only: SQLite's integrity, the migration state, and
    /// the audit trail (one snapshot for the whole audit check).
    public static func check(path: String, publicKey: AuditPublicKey?) async throws -> CheckReport {
        try PhotosDatabase.refusePostgresURL(path)
        guard FileManager.default.fileExists(atPath: path) else { throw PhotosError.notFound("no database at \(path)") }
        do {
            let connection = try Connection(path: path, mode: .readOnly)
            defer { connection.close() }
            let integrity = try connection.query("PRAGMA integrity_check").map { try $0.string("integrity_check") }
            let migrations = try PhotosMigrations.migrator.status(connection)
            var audit: AuditChains.Verification?
            // The trail is read in the schema this binary knows: only once nothing is pending
            // (an older database is named by its pending migrations, never by an SQL error).
            if migrations.contains(where: { $0.appliedAt != nil }), !migrations.contains(where: { $0.appliedAt == nil }) {
                audit = try await connection.transaction(.deferred) { try await AuditChains.verify(on: connection, publicKey: publicKey) }
            }
            return CheckReport(integrity: integrity, migrations: migrations, audit: audit)
        } catch let error as SQLiteError where error.isNotADatabase {
            throw MigrationError.notADatabase(path: path)
        }
    }

    /// Checks the database `configuration` names: a SQLite file as `check(path:publicKey:)` does;
    /// a PostgreSQL database for its migration state and audit trail (one snapshot).
    public static func check(_ configuration: PhotosConfiguration, publicKey: AuditPublicKey?, logger: Logger) async throws -> CheckReport {
        guard PostgresLocation.isURL(configuration.databasePath) else {
            return try await check(path: configuration.databasePath, publicKey: publicKey)
        }
        let storage = try await PostgresStorage.open(try configuration.postgresLocation(), options: .init(maximumConnections: 1), logger: logger)
        do {
            let migrations = try await PostgresMigrator(migrations: PhotosMigrations.postgres).status(storage.client, logger: logger)
            var audit: AuditChains.Verification?
            if migrations.contains(where: { $0.appliedAt != nil }), !migrations.contains(where: { $0.appliedAt == nil }) {
                audit = try await storage.read { try await AuditChains.verify(on: $0, publicKey: publicKey) }
            }
            await storage.close()
            return CheckReport(integrity: [], migrations: migrations, audit: audit)
        } catch {
            await storage.close()
            throw error
        }
    }

    /// Copies the SQLite file at `source` to a new file at `path` from one snapshot (safe while
    /// `photosd` writes), whatever its schema: an older database is backed up before `migrate`
    /// (which cannot be undone) without being opened as this version's.
    public static func backup(file source: String, to path: String) throws {
        try PhotosDatabase.refusePostgresURL(source)
        guard FileManager.default.fileExists(atPath: source) else { throw PhotosError.notFound("no database at \(source)") }
        try checkNewFile(path, for: "backup")
        do {
            let connection = try Connection(path: source, mode: .readOnly)
            defer { connection.close() }
            try connection.transaction(.deferred) {
                // Reading first opens the read transaction: every page comes from one snapshot.
                _ = try connection.query("SELECT count(*) FROM sqlite_schema")
                try connection.backup(to: path)
            }
        } catch let error as SQLiteError where error.isNotADatabase {
            throw MigrationError.notADatabase(path: source)
        }
    }

    /// Copies the database to a new file at `path` from one snapshot (safe while `photosd`
    /// writes): SQLite's online backup. A store that cannot (PostgreSQL) is refused in words.
    public static func backup(_ database: any DatabaseStore, to path: String) async throws {
        guard let store = database as? any FileBackupStore else {
            throw PhotosError.badRequest(
                "backup copies a SQLite file; for \(database) use pg_dump, or photos-admin copy --to FILE for a SQLite copy")
        }
        try checkNewFile(path, for: "backup")
        try await store.backup(to: path)
    }

    /// Refuses, naming the path, a file that exists, a directory that does not, or one this
    /// process cannot write into: SQLite would say only "unable to open database file".
    public static func checkNewFile(_ path: String, for what: String) throws {
        let files = FileManager.default
        var isDirectory: ObjCBool = false
        if files.fileExists(atPath: path, isDirectory: &isDirectory) {
            throw PhotosError(.conflict, isDirectory.boolValue
                ? "\(path) is a directory; give the \(what) a file name in it" : "\(path) already exists; choose a new path for the \(what)")
        }
        let directory = (path as NSString).deletingLastPathComponent
        let parent = directory.isEmpty ? "." : directory
        guard files.fileExists(atPath: parent, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw PhotosError.notFound("no directory \(parent) for the \(what) \(path); create it first")
        }
        guard files.isWritableFile(atPath: parent) else {
            throw PhotosError.badRequest("cannot write into \(parent) (permission denied) for the \(what) \(path)")
        }
    }

    /// Rows of the `audit_trail` view (see `AuditChains.rows(sessionID:after:limit:on:)`).
    public static func auditRows(_ database: any DatabaseStore, sessionID: String?, limit: Int) async throws -> [AuditRow] {
        try await database.read { try await AuditChains.rows(sessionID: sessionID, limit: limit, on: $0) }
    }

    /// One page of `photos-admin audit`: at most `limit` rows of the `audit_trail` view, oldest
    /// first, after the cursor `after` — a seq with `sessionID`, else a row id — or with `tail`
    /// the newest `limit`; and the cursor of the next page, nil when this one is the last.
    public static func auditPage(
        _ database: any DatabaseStore, sessionID: String?, after: Int64, tail: Bool, limit: Int
    ) async throws -> (rows: [AuditRow], nextAfter: Int64?) {
        if let sessionID {
            let rows = try await database.read { connection -> [AuditRow] in
                var start = after
                if tail {
                    let last = try await connection.queryOne("SELECT max(seq) AS last FROM audit_events WHERE session_id = \(sessionID)")?.optionalInt64("last") ?? 0
                    start = max(0, last - Int64(limit))
                }
                return try await AuditChains.rows(sessionID: sessionID, after: Int(start), limit: limit + 1, on: connection)
            }
            let page = Array(rows.prefix(limit))
            return (page, rows.count > limit ? page.last.map { Int64($0.seq) } : nil)
        }
        let rows = try await AuditChains.readSettled(database) { connection, settled in
            let start = tail ? max(0, settled - Int64(limit)) : after
            return try await AuditChains.rows(afterID: start, sessionID: nil, limit: limit + 1, on: connection).filter { $0.id <= settled }
        }
        let page = Array(rows.prefix(limit))
        return (page.map(\.row), rows.count > limit ? page.last?.id : nil)
    }

    /// Settled rows after the row with id `afterID`, with their ids (for following the trail):
    /// none with an id past `AuditChains.settledNewestID`, so a row that commits late (PostgreSQL
    /// gives ids before commit) is never skipped by a follower that moved past a newer one.
    public static func auditRows(_ database: any DatabaseStore, afterID: Int64, sessionID: String?) async throws -> [(id: Int64, row: AuditRow)] {
        try await AuditChains.readSettled(database) { connection, settled in
            try await AuditChains.rows(afterID: afterID, sessionID: sessionID, on: connection).filter { $0.id <= settled }
        }
    }

    /// The id of the newest settled audit row, 0 for none.
    public static func newestAuditRowID(_ database: any DatabaseStore) async throws -> Int64 {
        try await AuditChains.readSettled(database) { _, settled in settled }
    }
}
