import ArgumentParser
import Navigation
import PhotosCore
import PhotosModel
import Sessions

extension PhotosAdmin {
    struct Purchase: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Complete a purchase: USER PHOTO_ID, or the buy screen of a live session (--session ID).")

        @OptionGroup var global: GlobalOptions
        @Argument(help: "The username.") var username: String?
        @Argument(help: "The photo id.") var photoID: Int64?
        @Option(help: "Complete the buy screen of this live session.") var session: String?

        func validate() throws {
            if session != nil {
                guard username == nil && photoID == nil else { throw ValidationError("give either USER PHOTO_ID or --session ID, not both") }
            } else {
                guard username != nil, photoID != nil else { throw ValidationError("give USER PHOTO_ID, or --session ID") }
            }
        }

        func run() async throws {
            if let session {
                let result = try await global.withServices { context in
                    try await context.sessions.operatorPurchase(sessionID: session, actor: context.actor)
                }
                let photo = result.events.compactMap { $0.step == "action" ? nil : $0 }.first { $0.step == "purchase.completed" }
                print(result.outcome == .purchased
                    ? "purchase completed in session \(session)\(photo.map { " (\($0.detail))" } ?? "")"
                    : "the user of session \(session) already owned the photo; nothing recorded")
                return
            }
            guard let username, let photoID else { return }
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
