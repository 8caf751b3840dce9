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

    /// Creates a status.
    public init(version: Int, name: String, appliedAt: String?) {
        self.version = version
        self.name = name
        self.appliedAt = appliedAt
    }
}

/// A migration as recorded in a database's `schema_migrations`.
public struct AppliedMigration: Sendable, Equatable {
    public let version: Int
    public let name: String
    public let checksum: String

    /// Creates a record.
    public init(version: Int, name: String, checksum: String) {
        self.version = version
        self.name = name
        self.checksum = checksum
    }
}

/// The rule both stores' migrators apply before touching a database: every applied migration
/// must be one this binary knows (else the database is newer than the code) with the same
/// checksum (else a migration was edited after it was applied).
public struct MigrationCheck: Sendable {
    /// The binary's migrations.
    public let migrations: [Migration]

    /// Creates the check for `migrations`.
    public init(migrations: [Migration]) { self.migrations = migrations }

    /// Throws `MigrationError.databaseNewer` or `.editedMigration`; returns the applied versions.
    public func appliedVersions(_ applied: [AppliedMigration]) throws -> Set<Int> {
        let known = Dictionary(uniqueKeysWithValues: migrations.map { ($0.version, $0) })
        let newest = migrations.map(\.version).max() ?? 0
        var versions = Set<Int>()
        for record in applied.sorted(by: { $0.version < $1.version }) {
            guard let migration = known[record.version] else {
                throw MigrationError.databaseNewer(databaseVersion: record.version, binaryVersion: newest)
            }
            if migration.checksum != record.checksum {
                throw MigrationError.editedMigration(name: migration.name, applied: record.checksum, current: migration.checksum)
            }
            versions.insert(record.version)
        }
        return versions
    }
}
