import ArgumentParser
import PhotosCore

extension PhotosAdmin {
    struct Purchase: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Complete a purchase for a user.")

        @OptionGroup var global: GlobalOptions
        @Argument(help: "The username.") var username: String
        @Argument(help: "The photo id.") var photoID: Int64

        func run() async throws {
            let outcome = try await global.withServices { context in
                try await context.purchases.buy(username: username, photoID: photoID, actor: context.actor)
            }
            switch outcome {
            case .purchased(let purchase):
                print("purchased photo \(photoID) for \(username) at \(Price.format(cents: purchase.priceCents))")
            case .alreadyOwned:
                print("\(username) already owns photo \(photoID); nothing recorded")
            }
        }
    }
}
