import ArgumentParser
import PhotosCore
import PhotosModel
import PostgresStore
import PhotosStorage

extension PhotosAdmin {
    struct Backup: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Copy the database to a new file with SQLite's online backup (safe while photosd runs).")

        @OptionGroup var global: GlobalOptions
        @Argument(help: "Where to write the copy (must not exist).") var path: String

        func run() async throws {
            let configuration = try await global.configuration()
            if PostgresLocation.isURL(configuration.databasePath) {
                // Refused in words (pg_dump, or copy --to).
                try await global.withServices(migrate: false) { context in
                    try await DatabaseMaintenance.backup(context.database, to: path)
                }
            } else {
                // The file as it is, of any earlier schema: "back up first" works before migrate.
                try DatabaseMaintenance.backup(file: configuration.databasePath, to: path)
            }
            print("backed up \(global.db ?? "the database") to \(path)")
        }
    }
}
