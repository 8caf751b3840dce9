import DatabaseAccess
import Foundation
import Logging
import PhotosCore
import PhotosModel
import PostgresNIO
import PostgresStore
import SchemaMigrations
import SQLiteStore

/// Opens the photos database: checks and applies migrations, then starts the writer and readers
/// (SQLite) or the connection pool (PostgreSQL).
public enum PhotosDatabase {
    /// Whether opening a SQLite database may create it.
    public enum Creation: Sendable {
        /// Create the file and, if missing, its directory (`photosd`: its default
        /// `data/photos.db` works with no set-up).
        case fileAndDirectory
        /// Create the file in a directory that exists (`photos-admin migrate`, `copy --to FILE`).
        case file
        /// The database must exist (every other `photos-admin` command): a mistyped path is
        /// an error, never an empty new database.
        case never
    }

    /// Opens the database `configuration.databasePath` names: a SQLite file, or a PostgreSQL
    /// database for a `postgres://` / `postgresql://` URL, migrating it unless `migrate` is false
    /// (then pending migrations are an error, and nothing is created). `readerCount` overrides the
    /// configuration's; `create` says whether a missing SQLite file may be created.
    ///
    /// Errors name a PostgreSQL database by its URL without the password.
    public static func open(
        _ configuration: PhotosConfiguration, readerCount: Int? = nil, migrate: Bool = true,
        create: Creation = .fileAndDirectory, logger: Logger = Logger(label: "photosd.database")
    ) async throws -> any DatabaseStore {
        guard PostgresLocation.isURL(configuration.databasePath) else {
            return try open(
                path: configuration.databasePath, durability: configuration.durability,
                readerCount: readerCount ?? configuration.readerCount, maxBatchSize: configuration.maxBatchSize,
                busyTimeoutMilliseconds: Int32(configuration.busyTimeoutMilliseconds), vfs: configuration.databaseVFS,
                migrate: migrate, create: create)
        }
        let storage = try await openPostgres(configuration, runsPool: true, statementTimeout: nil, logger: logger)
        do {
            try await migratePostgres(storage, migrate: migrate, logger: logger)
        } catch {
            await storage.close()
            throw error
        }
        return storage
    }

    /// A database for a long-running application (`photosd`): on SQLite `open(configuration)`;
    /// on PostgreSQL the store whose pool the application's `ServiceGroup` runs (`pool`, to add
    /// to its services), not yet migrated: `prepare` migrates it, once the pool runs (before
    /// the server starts). Its operations are bounded by `database.statementTimeoutSeconds`
    /// (the tools' are not: a report on a large trail may take its time).
    public struct ForApplication: Sendable {
        /// The store.
        public let database: any DatabaseStore
        /// PostgreSQL's connection pools (one per host of the URL), services for the application
        /// to run (empty on SQLite).
        public let pools: [PostgresClient]
        /// Applies pending migrations (PostgreSQL; SQLite's were applied by the open).
        public let prepare: @Sendable () async throws -> Void
    }

    /// Opens the database for a long-running application: see `ForApplication`.
    public static func openForApplication(_ configuration: PhotosConfiguration, logger: Logger) async throws -> ForApplication {
        guard PostgresLocation.isURL(configuration.databasePath) else {
            return ForApplication(database: try await open(configuration, logger: logger), pools: [], prepare: {})
        }
        let storage = try await openPostgres(
            configuration, runsPool: false, statementTimeout: .seconds(configuration.statementTimeoutSeconds), logger: logger)
        return ForApplication(database: storage, pools: storage.clients) {
            try await migratePostgres(storage, migrate: true, logger: logger)
            // What the audit log's promise needs of replication, said once at start.
            if let warning = try? await storage.replicationWarning() { logger.warning("\(warning)") }
        }
    }

    /// The PostgreSQL store; `statementTimeout` bounds each operation (nil for the tools).
    private static func openPostgres(
        _ configuration: PhotosConfiguration, runsPool: Bool, statementTimeout: Duration?, logger: Logger
    ) async throws -> PostgresStorage {
        try await PostgresStorage.open(
            try configuration.postgresLocation(),
            options: .init(
                synchronousCommit: configuration.durability == .full, maximumConnections: configuration.maxConnections,
                connectTimeout: .seconds(configuration.connectTimeoutSeconds), statementTimeout: statementTimeout),
            runsPool: runsPool, logger: logger)
    }

    /// Applies the pending migrations (`migrate`), or refuses a database that has some.
    private static func migratePostgres(_ storage: PostgresStorage, migrate: Bool, logger: Logger) async throws {
        let location = storage.location
        do {
            let migrator = PostgresMigrator(migrations: PhotosMigrations.postgres)
            if migrate {
                try await migrator.migrate(storage.client, logger: logger)
            } else if let first = try await migrator.status(storage.client, logger: logger).first(where: { $0.appliedAt == nil }) {
                throw PhotosError.badRequest("database \(location) needs migration \(first.name); run `photos-admin migrate`")
            }
        } catch {
            if error is MigrationError || error is PhotosError || error is PostgresStoreError { throw error }
            throw PostgresStoreError(describing: error, doing: "migrating \(location)")
        }
    }

    /// Opens the database at `path` (creating it as `create` allows), migrating it when `migrate`
    /// is true; `vfs` names the SQLite VFS (nil or empty: the system's).
    ///
    /// Throws `not_found` for a missing file that may not be created (`create == .never`, or
    /// `migrate == false`) or a missing directory (`.file`); `MigrationError` for a file that is
    /// not a database, an edited migration or a database newer than this binary; with
    /// `migrate == false`, also when migrations are pending.
    public static func open(
        path: String,
        durability: Connection.Synchronous = .full,
        readerCount: Int = 4,
        maxBatchSize: Int = 64,
        busyTimeoutMilliseconds: Int32 = 5_000,
        vfs: String? = nil,
        migrate: Bool = true,
        create: Creation = .fileAndDirectory
    ) throws -> SQLiteDatabase {
        try refusePostgresURL(path)
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw PhotosError.badRequest("\(path) is a directory, not a database file")
        }
        // An empty file (a `touch`, a failed copy) is no database either: only migrate makes one.
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? nil
        if size == 0, !migrate || create == .never {
            throw PhotosError.notFound("\(path) is an empty file, not a database; photos-admin migrate creates one there")
        }
        if !FileManager.default.fileExists(atPath: path) {
            let directory = (path as NSString).deletingLastPathComponent
            let directoryExists = directory.isEmpty || FileManager.default.fileExists(atPath: directory)
            switch migrate ? create : .never {
            case .never:
                // A mistyped path must not leave an empty database (or directories) behind.
                throw PhotosError.notFound("no database at \(path)")
            case .file where !directoryExists:
                throw PhotosError.notFound("no directory \(directory) for the database \(path); create it first")
            case .file:
                break
            case .fileAndDirectory:
                if !directoryExists {
                    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                }
            }
        }
        let vfs = vfs.flatMap { $0.isEmpty ? nil : $0 }
        let options = Connection.Options(busyTimeoutMilliseconds: busyTimeoutMilliseconds, synchronous: durability, vfs: vfs)
        do {
            let connection = try Connection(path: path, mode: .readWrite, options: options)
            defer { connection.close() }
            let migrator = PhotosMigrations.migrator
            if migrate {
                try migrator.migrate(connection)
            } else {
                let pending = try migrator.status(connection).filter { $0.appliedAt == nil }
                if let first = pending.first {
                    throw PhotosError.badRequest("database \(path) needs migration \(first.name); run `photos-admin migrate`")
                }
            }
        } catch let error as SQLiteError where error.isNotADatabase {
            throw MigrationError.notADatabase(path: path)
        }
        return try SQLiteDatabase(path: path, options: options, readerCount: readerCount, maxBatchSize: maxBatchSize)
    }

    /// Throws a clear error for a `postgres://` URL given where only a SQLite file will do (a
    /// file-level operation, `what`), so that it is never taken for a file name. Parsing it
    /// first gives a bad URL its own error; neither message shows the password.
    public static func refusePostgresURL(_ path: String, for what: String = "this") throws {
        guard PostgresLocation.isURL(path) else { return }
        let location = try PostgresLocation(url: path)
        throw PhotosError.badRequest("\(location): \(what) needs a SQLite file, not a PostgreSQL database")
    }
}
