import ArgumentParser
import PhotosCore
import PhotosModel
import PhotosStorage

extension PhotosAdmin {
    struct Backup: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Copy the database to a new file with SQLite's online backup (safe while photosd runs).")

        @OptionGroup var global: GlobalOptions
        @Argument(help: "Where to write the copy (must not exist).") var path: String

        func run() async throws {
            try await global.withServices(migrate: false) { context in
                try await DatabaseMaintenance.backup(context.database, to: path)
            }
            print("backed up \(global.db ?? "the database") to \(path)")
        }
    }
}
