import Foundation
import SQLiteStore

/// What an operator does to a database as a whole: check it, back it up, read and verify its
/// audit trail. `photos-admin` calls these; it runs no SQL of its own.
public enum DatabaseMaintenance {
    /// The findings of `check`.
    public struct CheckReport: Sendable {
        /// `PRAGMA integrity_check`'s lines: `["ok"]` when sound.
        public var integrity: [String]
        /// Every migration this binary knows, applied or not.
        public var migrations: [MigrationStatus]
        /// The audit trail's verification; nil when no migration has been applied yet.
        public var audit: AuditLog.Verification?

        /// Migrations not applied yet.
        public var pendingMigrations: [MigrationStatus] { migrations.filter { $0.appliedAt == nil } }
        /// How many problems were found.
        public var problemCount: Int {
            (integrity == ["ok"] ? 0 : 1) + (pendingMigrations.isEmpty ? 0 : 1) + (audit?.isIntact == false ? 1 : 0)
        }
    }

    /// Checks the database at `path` read-only: SQLite's integrity, the migration state, and
    /// the audit trail (one snapshot for the whole audit check).
    public static func check(path: String, publicKey: AuditPublicKey?) throws -> CheckReport {
        try PhotosDatabase.refusePostgresURL(path)
        guard FileManager.default.fileExists(atPath: path) else { throw PhotosError.notFound("no database at \(path)") }
        let connection = try Connection(path: path, mode: .readOnly)
        defer { connection.close() }
        do {
            let integrity = try connection.query("PRAGMA integrity_check").map { $0.string(0) }
            let migrations = try PhotosMigrations.migrator.status(connection)
            var audit: AuditLog.Verification?
            if migrations.contains(where: { $0.appliedAt != nil }) {
                audit = try connection.transaction(.deferred) { try AuditLog.verify(on: connection, publicKey: publicKey) }
            }
            return CheckReport(integrity: integrity, migrations: migrations, audit: audit)
        } catch let error as SQLiteError where error.primaryResultCode == 26 /* SQLITE_NOTADB */ {
            throw MigrationError.notADatabase(path: path)
        }
    }

    /// Copies the database to a new file at `path` with SQLite's online backup, from one
    /// snapshot (safe while `photosd` writes).
    public static func backup(_ database: SQLiteDatabase, to path: String) async throws {
        try await database.read { connection in
            // Reading first opens the read transaction: every page comes from the same snapshot.
            _ = try connection.query("SELECT count(*) FROM sqlite_schema")
            try connection.backup(to: path)
        }
    }

    /// Rows of the `audit_trail` view (see `AuditLog.rows(sessionID:after:limit:on:)`).
    public static func auditRows(_ database: SQLiteDatabase, sessionID: String?, limit: Int) async throws -> [AuditRow] {
        try await database.read { try AuditLog.rows(sessionID: sessionID, limit: limit, on: $0) }
    }

    /// Rows after the row with id `afterID`, with their ids (for following the trail).
    public static func auditRows(_ database: SQLiteDatabase, afterID: Int64, sessionID: String?) async throws -> [(id: Int64, row: AuditRow)] {
        try await database.read { try AuditLog.rows(afterID: afterID, sessionID: sessionID, on: $0) }
    }

    /// The id of the newest audit row, 0 for none.
    public static func newestAuditRowID(_ database: SQLiteDatabase) async throws -> Int64 {
        try await database.read { try $0.queryOne("SELECT coalesce(max(id), 0) FROM audit_events")?.int64(0) ?? 0 }
    }
}
