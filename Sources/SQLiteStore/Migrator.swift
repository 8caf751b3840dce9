import CSQLite
import Crypto
import Foundation

/// One numbered schema change, e.g. `0001_initial.sql`.
public struct Migration: Sendable, Equatable {
    /// The number in the file name; migrations run in this order.
    public let version: Int
    /// The file name, e.g. `0001_initial.sql`.
    public let name: String
    /// The SQL script.
    public let sql: String

    /// Creates a migration.
    public init(version: Int, name: String, sql: String) {
        self.version = version
        self.name = name
        self.sql = sql
    }

    /// SHA-256 of the script, hex: what an applied migration is checked against.
    public var checksum: String {
        SHA256.hash(data: Data(sql.utf8)).map { String(format: "%02x", $0) }.joined()
    }
}

/// Why migrating refused to go on.
public enum MigrationError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The file is not a SQLite database.
    case notADatabase(path: String)
    /// A migration was edited after it had been applied to this database.
    case editedMigration(name: String, applied: String, current: String)
    /// The database has migrations this binary does not know: it is newer than the code.
    case databaseNewer(databaseVersion: Int, binaryVersion: Int)

    public var description: String {
        switch self {
        case .notADatabase(let path):
            "\(path) is not a SQLite database"
        case .editedMigration(let name, let applied, let current):
            "migration \(name) was changed after it was applied (checksum \(applied.prefix(12)) in the database, \(current.prefix(12)) in this binary); restore the original file"
        case .databaseNewer(let databaseVersion, let binaryVersion):
            "database schema version \(databaseVersion) is newer than this binary (knows up to \(binaryVersion)); use a newer photosd"
        }
    }
}

/// The state of one migration in one database.
public struct MigrationStatus: Sendable, Equatable {
    /// The migration's version.
    public let version: Int
    /// The migration's file name.
    public let name: String
    /// When it was applied, or nil if it is pending.
    public let appliedAt: String?
}

/// Applies numbered migrations in order, each with its bookkeeping row in one transaction, and
/// refuses to touch a database whose applied migrations differ from the binary's.
public struct Migrator: Sendable {
    /// The known migrations, sorted by version.
    public let migrations: [Migration]

    /// Creates a migrator for `migrations` (sorted here).
    public init(migrations: [Migration]) {
        self.migrations = migrations.sorted { $0.version < $1.version }
    }

    private static let createBookkeeping = """
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
                        "INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES (?, ?, ?, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))",
                        migration.version, migration.name, migration.checksum)
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
                    appliedAt[row.int(0)] = row.string(1)
                }
            }
            return migrations.map { MigrationStatus(version: $0.version, name: $0.name, appliedAt: appliedAt[$0.version]) }
        }
    }

    /// Throws if an applied migration is unknown (database newer) or was edited; returns the
    /// applied versions.
    private func validate(_ connection: Connection) throws -> Set<Int> {
        let known = Dictionary(uniqueKeysWithValues: migrations.map { ($0.version, $0) })
        let newest = migrations.last?.version ?? 0
        var versions = Set<Int>()
        for row in try connection.query("SELECT version, name, checksum FROM schema_migrations ORDER BY version") {
            let version = row.int(0)
            guard let migration = known[version] else {
                throw MigrationError.databaseNewer(databaseVersion: version, binaryVersion: newest)
            }
            if migration.checksum != row.string(2) {
                throw MigrationError.editedMigration(name: migration.name, applied: row.string(2), current: migration.checksum)
            }
            versions.insert(version)
        }
        return versions
    }

    private func wrapNotADatabase<T>(_ path: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as SQLiteError where error.primaryResultCode == SQLITE_NOTADB {
            throw MigrationError.notADatabase(path: path)
        }
    }
}
