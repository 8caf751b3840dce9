import ArgumentParser
import Logging
import PhotosCore
import PostgresNIO
import PostgresStore
import SQLiteStore

extension PhotosAdmin {
    struct Migrate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create or upgrade the database schema.",
            discussion: "--db may be a SQLite file or a postgres:// URL (the PostgreSQL dialect's migrations, applied once even when several run at once).")

        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let configuration = try await global.configuration()
            let path = configuration.databasePath
            if PostgresLocation.isURL(path) {
                let location = try PostgresLocation(url: path)
                let migrator = PostgresMigrator(migrations: PhotosMigrations.postgres)
                var quiet = Logger(label: "photos-admin")
                quiet.logLevel = .error
                let logger = quiet
                do {
                    try await PostgresClient.withClient(location, logger: logger) { client in
                        try await migrator.migrate(client, logger: logger)
                    }
                } catch let error as MigrationError {
                    throw error
                } catch let error as PostgresStoreError {
                    throw error
                } catch {
                    throw PostgresStoreError(describing: error, doing: "migrating \(location)")
                }
                print("database \(location) is at schema version \(PhotosMigrations.postgres.last?.version ?? 0)")
                return
            }
            let database = try PhotosDatabase.open(path: path, readerCount: 1, vfs: configuration.databaseVFS, migrate: true)
            database.close()
            print("database \(path) is at schema version \(PhotosMigrations.all.last?.version ?? 0)")
        }
    }
}
