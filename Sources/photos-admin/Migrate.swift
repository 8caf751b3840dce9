import ArgumentParser
import DatabaseAccess
import Logging
import PhotosCore
import PhotosModel
import PhotosStorage
import SchemaMigrations
import SQLiteStore

extension PhotosAdmin {
    struct Migrate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create or upgrade the database schema.",
            discussion: "--db may be a SQLite file or a postgres:// URL (the PostgreSQL dialect's migrations, applied once even when several run at once).")

        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let configuration = try await global.configuration()
            let database = try await PhotosDatabase.open(configuration, readerCount: 1, migrate: true, create: .file, logger: GlobalOptions.logger)
            await database.close()
            let newest = PhotosMigrations.for(database.dialect).last?.version ?? 0
            print("database \(database) is at schema version \(newest)")
        }
    }
}
