import DatabaseAccess
import Logging
import PostgresNIO
import SchemaMigrations

/// Applies numbered migrations to a PostgreSQL database, as `Migrator` does to a SQLite file:
/// each pending migration and its `schema_migrations` row in one transaction, nothing at all
/// when an applied migration was edited or the database is newer than the binary
/// (`MigrationCheck`, the rule both stores share).
///
/// Several `photosd` instances may start together: every transaction first takes a
/// transaction-scoped advisory lock, so one instance applies a migration and the others find
/// it applied when they get the lock.
public struct PostgresMigrator: Sendable {
    /// The known migrations, sorted by version.
    public let migrations: [Migration]

    /// The advisory lock's key ("photos" in ASCII): one per database.
    static let lockKey: Int64 = TransactionLock.Key.Fixed.migrations.rawValue

    /// Creates a migrator for `migrations` (sorted here).
    public init(migrations: [Migration]) {
        self.migrations = migrations.sorted { $0.version < $1.version }
    }

    /// Checks the database against the known migrations and applies the pending ones.
    /// Returns the migrations applied now (by this call).
    @discardableResult
    public func migrate(_ client: PostgresClient, logger: Logger) async throws -> [Migration] {
        try await client.withConnection { connection in
            _ = try await Self.transaction(connection, logger: logger) {
                try await connection.query(
                    """
                    CREATE TABLE IF NOT EXISTS schema_migrations (
                        version BIGINT PRIMARY KEY,
                        name TEXT NOT NULL,
                        checksum TEXT NOT NULL,
                        applied_at TEXT NOT NULL
                    )
                    """, logger: logger)
            }
            var applied: [Migration] = []
            for migration in migrations {
                let didApply = try await Self.transaction(connection, logger: logger) { () async throws -> Bool in
                    let done = try await validate(connection, logger: logger)
                    guard !done.contains(migration.version) else { return false }
                    for statement in SQLScript.statements(migration.sql) {
                        do {
                            try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                        } catch {
                            throw PostgresStoreError(describing: error, doing: "migration \(migration.name)")
                        }
                    }
                    // postgres-nio's own query value binds what is interpolated.
                    try await connection.query(
                        """
                        INSERT INTO schema_migrations (version, name, checksum, applied_at)
                        VALUES (\(migration.version), \(migration.name), \(migration.checksum), to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
                        """, logger: logger)
                    return true
                }
                if didApply { applied.append(migration) }
            }
            return applied
        }
    }

    /// The state of every migration, known or applied, changing nothing. Throws as `migrate`
    /// would for an edited migration or a newer database.
    public func status(_ client: PostgresClient, logger: Logger) async throws -> [MigrationStatus] {
        try await client.withConnection { connection in
            var appliedAt: [Int: String] = [:]
            let exists = try await connection.query("SELECT to_regclass('schema_migrations') IS NOT NULL", logger: logger)
            var hasTable = false
            for try await value in exists.decode(Bool.self) { hasTable = value }
            if hasTable {
                _ = try await validate(connection, logger: logger)
                for try await (version, at) in try await connection.query("SELECT version, applied_at FROM schema_migrations", logger: logger).decode((Int, String).self) {
                    appliedAt[version] = at
                }
            }
            return migrations.map { MigrationStatus(version: $0.version, name: $0.name, appliedAt: appliedAt[$0.version]) }
        }
    }

    private func validate(_ connection: PostgresConnection, logger: Logger) async throws -> Set<Int> {
        var applied: [AppliedMigration] = []
        let rows = try await connection.query("SELECT version, name, checksum FROM schema_migrations ORDER BY version", logger: logger)
        for try await (version, name, checksum) in rows.decode((Int, String, String).self) {
            applied.append(AppliedMigration(version: version, name: name, checksum: checksum))
        }
        return try MigrationCheck(migrations: migrations).appliedVersions(applied)
    }

    /// Runs `body` in a transaction holding the migration lock; rolls back if it throws.
    private static func transaction<T>(_ connection: PostgresConnection, logger: Logger, _ body: () async throws -> T) async throws -> T {
        try await connection.query("BEGIN", logger: logger)
        do {
            try await connection.query("SELECT pg_advisory_xact_lock(\(lockKey))", logger: logger)
            let result = try await body()
            try await connection.query("COMMIT", logger: logger)
            return result
        } catch {
            _ = try? await connection.query("ROLLBACK", logger: logger)
            throw error
        }
    }
}
