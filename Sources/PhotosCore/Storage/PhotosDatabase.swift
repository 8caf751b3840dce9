import Foundation
import PostgresStore
import SQLiteStore

/// Opens the photos database: checks and applies migrations, then starts the writer and readers.
public enum PhotosDatabase {
    /// Opens (creating if needed) the database at `path`, migrating it when `migrate` is true;
    /// `vfs` names the SQLite VFS (nil or empty: the system's).
    ///
    /// Throws `MigrationError` for a file that is not a database, an edited migration or a
    /// database newer than this binary; with `migrate == false`, also when migrations are pending.
    public static func open(
        path: String,
        durability: Connection.Synchronous = .full,
        readerCount: Int = 4,
        maxBatchSize: Int = 64,
        busyTimeoutMilliseconds: Int32 = 5_000,
        vfs: String? = nil,
        migrate: Bool = true
    ) throws -> SQLiteDatabase {
        try refusePostgresURL(path)
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty, !FileManager.default.fileExists(atPath: directory) {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
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
        } catch let error as SQLiteError where error.primaryResultCode == 26 /* SQLITE_NOTADB */ {
            throw MigrationError.notADatabase(path: path)
        }
        return try SQLiteDatabase(path: path, options: options, readerCount: readerCount, maxBatchSize: maxBatchSize)
    }

    /// Throws a clear error for a `postgres://` URL, so that it is never taken for a file name
    /// (the PostgreSQL store is not wired into photosd yet). Parsing it first gives a bad URL
    /// its own error; neither message shows the password.
    public static func refusePostgresURL(_ path: String) throws {
        guard PostgresLocation.isURL(path) else { return }
        let location = try PostgresLocation(url: path)
        throw PhotosError.badRequest(
            "\(location): serving from PostgreSQL is not available in this version yet (photos-admin migrate can prepare its schema); use a SQLite file")
    }
}
