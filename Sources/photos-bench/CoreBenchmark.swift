import ArgumentParser
import Foundation
import Navigation
import PhotosClientTesting
import PhotosModel

extension PhotosBench {
    /// The navigation core alone: no HTTP, no storage, no bcrypt — each action decided by
    /// `SessionMachine` over a world in memory (`InMemorySessions`, what `FakePhotosServer`
    /// serves) and its answer written as JSON. What a change to the core costs, without the
    /// ±10 % that the end-to-end runs spread between rounds.
    struct Core: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "core",
            abstract: "The navigation core alone (decide, apply, the answer's JSON) over a world in memory: µs per action.")

        @Option(help: "Sessions per round, each walking the stack journey (11 actions).") var sessions = 2_000
        @Option(help: "Rounds; the median is the figure.") var rounds = 7

        func validate() throws {
            guard sessions > 0, rounds > 0 else { throw ValidationError("--sessions and --rounds must be positive") }
        }

        func run() async throws {
            let photos = NewPhoto.demoCatalogue.enumerated().map { Photo(id: Int64($0.offset + 1), title: $0.element.title, url: "", priceCents: $0.element.priceCents) }
            var perAction: [Double] = []
            for round in 1...rounds {
                // A fresh world per round, so that every round buys the same photos anew.
                let world = try InMemorySessions(photos: photos, users: ["alice": "wonderland"], clock: Date())
                var actions = 0
                var bytes = 0
                let began = ContinuousClock.now
                for index in 0..<sessions {
                    let photo = Int64(index % photos.count + 1)
                    let created = try await world.createSession(layout: .stack, link: nil, actor: .client)
                    let id = created.session.id
                    bytes += created.jsonText.utf8.count
                    let journey: [ClientAction] = [
                        ClientAction(.selectPhoto, photoId: photo), ClientAction(.back),
                        ClientAction(.selectPhoto, photoId: photo), ClientAction(.buy),
                        ClientAction(.submit, username: "alice", password: "wonderland"), ClientAction(.showTerms),
                        ClientAction(.cancel), ClientAction(.buy), ClientAction(.back),
                        ClientAction(.signOut), ClientAction(.selectPhoto, photoId: photo),
                    ]
                    for action in journey {
                        let result = try await world.apply(action, to: id, expectVersion: nil, idempotencyKey: nil, actor: .client)
                        bytes += result.jsonText.utf8.count
                        actions += 1
                    }
                }
                let elapsed = ContinuousClock.now - began
                let micros = (Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) / 1e12) / Double(actions + sessions)
                perAction.append(micros)
                print(String(format: "round %d: %d sessions, %d actions, %.2f µs per action (answers %.0f bytes each)", round, sessions, actions, micros, Double(bytes) / Double(actions + sessions)))
            }
            perAction.sort()
            print(String(format: "median: %.2f µs per action (min %.2f, max %.2f)", perAction[perAction.count / 2], perAction.first ?? 0, perAction.last ?? 0))
        }
    }
}
