import Foundation
import PhotosClient
import Testing

/// Random valid action sequences (with some refused ones): after every step, the commands the
/// driver emitted, applied to the tests' own plain model, reproduce the server's `navigation`
/// exactly; every answer decodes into the generated types (none undocumented).
@Suite("PhotosClient: commands reproduce the server's navigation")
struct CommandPropertyTests {
    /// SplitMix64: a seeded, repeatable generator.
    struct Seeded: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static let links = ["/photos", "/photos/1", "/photos/2/buy", "/photos/5", "/photos/4/buy", "/purchases"]

    /// An action for the top screen: one it offers (mostly), or one it does not.
    static func pick(_ session: Session, _ random: inout Seeded) -> Action {
        let offered = session.actions
        if offered.isEmpty || Int.random(in: 0..<12, using: &random) == 0 {
            let any: [Action] = [.buy, .back, .cancel, .showTerms, .dismiss, .signOut, .selectTab(.purchases), .openLink(links.randomElement(using: &random)!)]
            return any.randomElement(using: &random)!
        }
        let owned = session.navigation.root.first?.photos?.map(\.id) ?? []
        switch offered.randomElement(using: &random)! {
        case .selectPhoto:
            let onPurchases = session.topName == .purchases
            return .selectPhoto(onPurchases ? (owned.randomElement(using: &random) ?? 1) : Int.random(in: 1...5, using: &random))
        case .buyPhoto: return .buyPhoto(Int.random(in: 1...5, using: &random))
        case .signIn: return .signIn
        case .signOut: return .signOut
        case .buy: return .buy
        case .back: return .back
        case .submit:
            let right = Int.random(in: 0..<5, using: &random) > 0
            return .submit(username: LiveServer.username, password: right ? LiveServer.password : "wrong")
        case .cancel: return .cancel
        case .showTerms: return .showTerms
        case .dismiss: return .dismiss
        case .selectTab: return .selectTab(Bool.random(using: &random) ? .photos : .purchases)
        case .openLink: return .openLink(links.randomElement(using: &random)!)
        case .unknown(let name):
            Issue.record("Session.actions offered an unknown action, \(name)")
            return .back
        }
    }

    @Test("random sequences on stack and tabs sessions", arguments: [1, 2, 3, 4] as [UInt64])
    func randomSequences(seed: UInt64) async throws {
        let server = try await LiveServer()
        defer { server.stop() }
        try await Self.randomSequences(on: server, seed: seed)
    }

    /// Each of the eight combinations of the variation points' values, fixed for every flow:
    /// the same client code follows the server exactly under each — no app release needed.
    @Test("random sequences under each combination of the flow experiments' variation points", arguments: 0..<8)
    func randomSequencesUnderExperiments(combination: Int) async throws {
        func fixed(_ values: [String], _ bit: Int) -> String {
            "\(values[0]):\(combination >> bit & 1 == 0 ? 1 : 0),\(values[1]):\(combination >> bit & 1)"
        }
        let server = try await LiveServer(experiments: [
            ("buy.presentation", fixed(["push", "modal"], 0)), ("signIn.when", fixed(["atBuy", "atPurchase"], 1)),
            ("terms.required", fixed(["no", "yes"], 2)),
        ])
        defer { server.stop() }
        try await Self.randomSequences(on: server, seed: 100 + UInt64(combination))
    }

    static func randomSequences(on server: LiveServer, seed: UInt64) async throws {
        var random = Seeded(state: seed)
        var applied = 0
        var refused = 0
        for run in 0..<3 {
            let layout: Layout = (seed + UInt64(run)) % 2 == 0 ? .tabs : .stack
            let link = Bool.random(using: &random) ? Self.links.filter { layout == .tabs || $0 != "/purchases" }.randomElement(using: &random) : nil
            let journey = try await Journey(server.driver(retry: .never), layout: layout, link: link)
            #expect(journey.model.stacks == StackModel.screens(journey.session))
            for _ in 0..<40 {
                let action = Self.pick(journey.session, &random)
                do {
                    try await journey.send(action)
                    applied += 1
                } catch let error as NavigationError {
                    refused += 1
                    switch error {
                    case .actionNotAvailable, .invalidCredentials, .tooManyAttempts, .notFound, .badRequest: break
                    default: Issue.record("seed \(seed): \(action) → \(error)")
                    }
                    // A refusal changes no screen: the model still equals the server.
                    let current = try await server.driver().attach(sessionID: journey.session.id, secret: journey.secret)
                    #expect(journey.model.stacks == StackModel.screens(current), "seed \(seed): after refused \(action)")
                }
            }
        }
        #expect(applied > 60, "seed \(seed): only \(applied) actions applied (\(refused) refused)")
    }
}
