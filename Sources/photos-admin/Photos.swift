import ArgumentParser
import Foundation
import PhotosCore
import PhotosModel

extension PhotosAdmin {
    struct Photos: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add, import and list photos.",
            subcommands: [Add.self, Import.self, List.self])

        func run() async throws { throw Self.missingSubcommand() }
    }
}

extension PhotosAdmin.Photos {
    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add one photo.")

        @OptionGroup var global: GlobalOptions
        @Option(help: "Title.") var title: String
        // Unconditional: `--price -1` reaches the price rule (and its error), not "Missing value".
        @Option(parsing: .unconditional, help: "Price in currency units, e.g. 2.50.") var price: String
        @Option(help: "Image URL (default: derived from the title).") var url: String?

        func run() async throws {
            let cents = try Price.cents(from: price)
            let photo = try await global.withServices { context in
                try await context.catalog.add(NewPhoto(title: title, url: url, priceCents: cents), actor: context.actor)
            }
            print("added photo \(photo.id): \(photo.title) (\(Price.format(cents: photo.priceCents)))")
        }
    }

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Import photos from a CSV (header title,url,price) or JSON file, all or nothing.")

        @OptionGroup var global: GlobalOptions
        @Argument(help: "A .csv or .json file.") var file: String

        func run() async throws {
            let onTerminal = isatty(STDERR_FILENO) == 1
            var progress: (@Sendable (Int) -> Void)?
            if onTerminal {
                progress = { done in Output.progress("\rimported \(Output.count(done, "photo"))") }
            }
            let count = try await global.withServices { context in
                try await PhotoImporter.importFile(file, into: context.database, actor: context.actor, progress: progress)
            }
            if onTerminal && count >= 10_000 { Output.progress("\n") }
            print("imported \(Output.count(count, "photo"))")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List photos by id, a page at a time.",
            discussion: "When there are more, the table is followed by a line on stderr naming the next page's --after; JSON carries it as nextAfter (null on the last page).")

        @OptionGroup var global: GlobalOptions
        @OptionGroup var output: OutputOptions
        @Option(parsing: .unconditional, help: "At most this many.") var limit = 100
        @Option(parsing: .unconditional, help: "Only photos with a larger id (the previous page's nextAfter).") var after: Int64 = 0

        func validate() throws {
            guard (1...100_000).contains(limit) else { throw ValidationError("--limit must be between 1 and 100000") }
            guard after >= 0 else { throw ValidationError("--after must be 0 or more") }
        }

        func run() async throws {
            let fetched = try await global.withServices { try await $0.catalog.list(limit: limit + 1, afterID: after) }
            try Page(name: "photos", fetched: fetched, limit: limit, id: \.id).print(
                output.format, command: "photos list", header: ["ID", "PRICE", "TITLE", "URL"]
            ) { [String($0.id), Price.format(cents: $0.priceCents), $0.title, $0.url] }
        }
    }
}
