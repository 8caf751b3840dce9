import ArgumentParser
import PhotosCore

extension PhotosAdmin {
    struct Migrate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create or upgrade the database schema.")

        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let configuration = try await global.configuration()
            let database = try PhotosDatabase.open(path: configuration.databasePath, readerCount: 1, vfs: configuration.databaseVFS, migrate: true)
            database.close()
            print("database \(configuration.databasePath) is at schema version \(PhotosMigrations.all.last?.version ?? 0)")
        }
    }
}
