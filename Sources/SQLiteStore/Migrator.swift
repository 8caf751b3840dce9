import DatabaseAccess
import CSQLite
import Foundation
import SchemaMigrations

/// Applies numbered migrations in order, each with its bookkeeping row in one transaction, and
/// refuses to touch a database whose applied migrations differ from the binary's.
public struct Migrator: Sendable {
    /// The known migrations, sorted by version.
    public let migrations: [Migration]

    /// Creates a migrator for `migrations` (sorted here).
    public init(migrations: [Migration]) {
        self.migrations = migrations.sorted { $0.version < $1.version }
    }

    private static let createBookkeeping: SQL = """
        CREATE TABLE IF NOT EXISTS schema_migrations (
            version INTEGER PRIMARY KEY,
            name TEXT NOT NULL,
            checksum TEXT NOT NULL,
            applied_at TEXT NOT NULL
        )
        """

    /// Checks the database against the known migrations and applies the pending ones.
    /// Returns the migrations applied now.
    @discardableResult
    public func migrate(_ connection: Connection) throws -> [Migration] {
        try wrapNotADatabase(connection.path) {
            _ = try connection.transaction(.immediate) { try connection.execute(Self.createBookkeeping) }
            var applied: [Migration] = []
            for migration in migrations {
                // Re-check inside each transaction: another process may be migrating too.
                let didApply = try connection.transaction(.immediate) { () throws -> Bool in
                    let done = try validate(connection)
                    guard !done.contains(migration.version) else { return false }
                    try connection.executeScript(migration.sql)
                    try connection.execute(
                        // The same ISO-8601 UTC form with milliseconds as every other table.
                        """
                        INSERT INTO schema_migrations (version, name, checksum, applied_at)
                        VALUES (\(migration.version), \(migration.name), \(migration.checksum), strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
                        """)
                    return true
                }
                if didApply { applied.append(migration) }
            }
            return applied
        }
    }

    /// Checks the applied migrations against the binary's without changing anything.
    /// Returns the state of every migration, known or applied.
    public func status(_ connection: Connection) throws -> [MigrationStatus] {
        try wrapNotADatabase(connection.path) {
            let hasTable = try connection.queryOne(
                "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'schema_migrations'") != nil
            var appliedAt: [Int: String] = [:]
            if hasTable {
                _ = try validate(connection)
                for row in try connection.query("SELECT version, applied_at FROM schema_migrations") {
                    appliedAt[try row.int("version")] = try row.string("applied_at")
                }
            }
            return migrations.map { MigrationStatus(version: $0.version, name: $0.name, appliedAt: appliedAt[$0.version]) }
        }
    }

    /// Throws if an applied migration is unknown (database newer) or was edited; returns the
    /// applied versions.
    private func validate(_ connection: Connection) throws -> Set<Int> {
        let applied = try connection.query("SELECT version, name, checksum FROM schema_migrations ORDER BY version").map {
            AppliedMigration(version: try $0.int("version"), name: try $0.string("name"), checksum: try $0.string("checksum"))
        }
        return try MigrationCheck(migrations: migrations).appliedVersions(applied)
    }

    private func wrapNotADatabase<T>(_ path: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as SQLiteError where error.primaryResultCode == SQLITE_NOTADB {
            throw MigrationError.notADatabase(path: path)
        }
    }
}
