import AuditTrail
import DatabaseAccess
import Foundation
import Navigation
import PhotosCore
import PhotosModel
import PhotosStorage
import SchemaMigrations
import PhotosTestSupport
import Sessions
import SQLiteStore
import Testing

@Suite("Randomized sessions")
struct RandomizedSessionTests {
    static let seed: UInt64 = ProcessInfo.processInfo.environment["PHOTOSD_RANDOM_SEED"].flatMap { UInt64($0) } ?? 20_261_121
    static let sessionCount = ProcessInfo.processInfo.environment["PHOTOSD_RANDOM_SESSIONS"].flatMap { Int($0) } ?? 1_000
    /// On PostgreSQL every statement is a round trip to the server (about 1.2 ms per action
    /// here, against SQLite's 0.1 ms), so the CI form walks fewer sessions there — enough that
    /// the flows meet all eight combinations of the variation points (160 once met only seven:
    /// the session ids, and so the variants unsigned sessions take, differ from run to run).
    static let postgresSessionCount = ProcessInfo.processInfo.environment["PHOTOSD_RANDOM_SESSIONS_POSTGRES"].flatMap { Int($0) } ?? 320
    static let actionsPerSession = 16

    @Test("thousands of sessions × random valid and invalid actions keep every invariant", arguments: TestStore.navigation)
    func randomWalk(store: TestStore) async throws {
        let h = try await SessionHarness.make(store)
        defer { h.close() }
        for name in ["bob", "carol"] {
            try await h.addUser(name, password: "password-\(name)")
        }
        // Every variation point split in two: the purchase flows meet every combination of
        // their values (docs/design.md, "Flow experiments"), today's behaviour among them.
        try await h.addExperiment("random-presentation", .buyPresentation, "push:50,modal:50")
        try await h.addExperiment("random-sign-in", .signInWhen, "atBuy:50,atPurchase:50")
        try await h.addExperiment("random-terms", .termsRequired, "no:50,yes:50")
        let workers = 8
        let sessionCount = store == .postgres ? Self.postgresSessionCount : Self.sessionCount
        let perWorker = sessionCount / workers
        let totals = try await withThrowingTaskGroup(of: (accepted: Int, rejected: Int, combinations: Set<String>).self) { group in
            for worker in 0..<workers {
                group.addTask {
                    var random = SeededGenerator(state: Self.seed &+ UInt64(worker))
                    var accepted = 0, rejected = 0
                    var combinations: Set<String> = []
                    for _ in 0..<perWorker {
                        let (a, r, c) = try await Self.walk(h, random: &random)
                        accepted += a
                        rejected += r
                        combinations.formUnion(c)
                    }
                    return (accepted, rejected, combinations)
                }
            }
            var sum = (accepted: 0, rejected: 0, combinations: Set<String>())
            for try await part in group { sum.accepted += part.accepted; sum.rejected += part.rejected; sum.combinations.formUnion(part.combinations) }
            return sum
        }
        #expect(totals.combinations.count == 8, "flows took \(totals.combinations.sorted()), seed \(Self.seed)")
        // Both kinds happened in quantity, so the invariants were exercised.
        #expect(totals.accepted > sessionCount * 4, "seed \(Self.seed)")
        #expect(totals.rejected > sessionCount, "seed \(Self.seed)")

        // A purchase row exists if and only if a purchase.completed step does.
        let purchases = try await h.purchaseList()
        #expect(!purchases.isEmpty)
        guard let test = h.database else { return }
        let completed = try await test.database.read { connection -> [String] in
            let photoID = connection.jsonText("detail", path: ["photoId"])
            return try await connection.query(
                "SELECT username || ':' || \(photoID) FROM audit_trail WHERE step = 'purchase.completed' ORDER BY 1").map { try $0.string(0) }
        }
        #expect(purchases == completed, "seed \(Self.seed)")
        let verification = try await test.database.read { try await AuditChains.verify(on: $0) }
        #expect(verification.isIntact)

        // The columns kept beside each state (migration 0010) say what the state says, as every
        // writer wrote them and as the migration computes them from the JSON alone.
        let written = try await Self.sessionColumns(test.database)
        #expect(written.count > sessionCount / 2, "seed \(Self.seed)")
        for (id, columns) in written { #expect(columns.stored == columns.expected, "session \(id), seed \(Self.seed)") }
        let migration = try #require(PhotosMigrations.for(test.database.dialect).first { $0.version == 10 })
        try await test.database.write { connection in
            let drop = ["DROP INDEX sessions_by_created;", "DROP INDEX sessions_by_user;"]
                + ["layout", "top_screen", "token_id", "photo_ids"].map { "ALTER TABLE sessions DROP COLUMN \($0);" }
            try await connection.executeScript(drop.joined(separator: "\n"))
            try await connection.executeScript(migration.sql)
        }
        let migrated = try await Self.sessionColumns(test.database)
        for (id, columns) in migrated { #expect(columns.stored == columns.expected, "migrated session \(id), seed \(Self.seed)") }
    }

    /// Each session's columns beside its state, and what its state says they should be.
    static func sessionColumns(_ database: any DatabaseStore) async throws -> [String: (stored: [String], expected: [String])] {
        try await database.read { connection in
            var columns: [String: (stored: [String], expected: [String])] = [:]
            try await connection.forEachRow("SELECT id, state, layout, top_screen, token_id, photo_ids FROM sessions") { row in
                let state = try JSONDecoder().decode(SessionState.self, from: Data(try row.string(1).utf8))
                let stored = [row.optionalString(2) ?? "NULL", row.optionalString(3) ?? "NULL", row.optionalInt64(4).map(String.init) ?? "NULL",
                              row.optionalString(5) ?? "NULL"]
                let expected = [state.sessionLayout.rawValue, state.top?.screen.rawValue ?? "NULL", state.tokenId.map(String.init) ?? "NULL",
                                "{" + state.namedPhotoIDs.sorted().map(String.init).joined(separator: ",") + "}"]
                columns[try row.string(0)] = (stored, expected)
            }
            return columns
        }
    }

    static let passwords = ["alice": SessionHarness.password, "bob": "password-bob", "carol": "password-carol"]

    /// A random link: every form, photo 4 (which does not exist) included.
    static func randomLink(_ random: inout SeededGenerator) -> DeepLink {
        let photoId = Int64.random(in: 1...4, using: &random)
        return [DeepLink.photos, .photo(photoId), .buy(photoId), .purchases][Int.random(in: 0..<4, using: &random)]
    }

    /// The values of the three variation points a purchase flow took, as its `coordinator.start`
    /// row names them (`modal/atPurchase/yes`), for a flow started signed out from a photo.
    static func combination(_ events: [AuditRow]) -> String? {
        for row in events where row.step == "coordinator.start" {
            guard let object = try? JSONSerialization.jsonObject(with: Data(row.detail.utf8)) as? [String: Any] else { continue }
            let values = VariationPoint.allCases.compactMap { object[$0.rawValue] as? String }
            if values.count == 3 { return values.joined(separator: "/") }
        }
        return nil
    }

    /// One session's random walk, in either layout, sometimes started at a link; returns the
    /// accepted and rejected action counts and the combinations of variation points its flows took.
    static func walk(_ h: SessionHarness, random: inout SeededGenerator) async throws -> (Int, Int, Set<String>) {
        let layout = SessionLayout.allCases[Int.random(in: 0..<2, using: &random)]
        let startLink = Int.random(in: 0..<4, using: &random) == 0 ? randomLink(&random) : nil
        var view: SessionView
        do {
            view = try await h.coordinator.createSession(layout: layout, link: startLink).session
        } catch let error as PhotosError {
            // A link the layout does not have (400), or to photo 4 (404): nothing created.
            #expect(error.code == .badRequest ? startLink == .purchases && layout == .stack : startLink.map { [.photo(4), .buy(4)].contains($0) } == true)
            return (0, 0, [])
        }
        #expect(view.layout == layout)
        let id = view.id
        try await h.checkInvariants(id)
        var accepted = 0, rejected = 0
        var combinations: Set<String> = []
        for _ in 0..<actionsPerSession {
            if Int.random(in: 0..<100, using: &random) == 0 {
                // Revoke someone's tokens from outside: their sessions sign out at the next action.
                let name = passwords.keys.sorted()[Int.random(in: 0..<3, using: &random)]
                try await h.signOutEverywhere(name)
            }
            let available = view.top?.actions ?? []
            let name: ActionName = Bool.random(using: &random) && !available.isEmpty
                ? available[Int.random(in: 0..<available.count, using: &random)]
                : ActionName.allCases[Int.random(in: 0..<ActionName.allCases.count, using: &random)]
            let username = passwords.keys.sorted()[Int.random(in: 0..<3, using: &random)]
            let rightPassword = Int.random(in: 0..<4, using: &random) > 0
            let action = ClientAction(
                name, photoId: Int64.random(in: 1...4, using: &random), username: username,
                password: rightPassword ? passwords[username] : "wrong-password",
                tab: TabName.allCases[Int.random(in: 0..<2, using: &random)], link: randomLink(&random))
            do {
                let result = try await h.coordinator.apply(action, to: id)
                expectHandWrittenJSON(result)
                if result.error?.code == .actionNotAvailable {
                    rejected += 1
                    #expect(name != .openLink, "openLink is accepted on every screen")
                    #expect(result.session.version >= view.version)
                    #expect(!available.contains(name) || result.session.user != view.user)
                } else {
                    accepted += 1
                    #expect(result.session.version == view.version + 1)
                    #expect(["action", "auth.signOut", "link.open"].contains(result.events.first?.step ?? ""))
                }
                view = result.session
                if let taken = combination(result.events) { combinations.insert(taken) }
            } catch let error as PhotosError where error.code == .tooManyAttempts {
                // A sign-in the limits refused, past the first refusal of the limit's window (that
                // one is recorded in the session): answered 429, nothing written.
                #expect(name == .submit)
                #expect(error.retryAfter != nil)
                #expect(try await h.coordinator.session(id: id).version == view.version)
            } catch let error as PhotosError where error.code == .notFound || error.code == .badRequest {
                // Refused before anything is written: photo 4 does not exist; a photo the user
                // does not own is not on their purchases list; /purchases needs the tabs layout.
                switch (error.code, name) {
                case (.badRequest, _): #expect(name == .openLink && action.link == .purchases && layout == .stack)
                case (_, .openLink): #expect([.photo(4), .buy(4)].contains(action.link))
                default: #expect(action.photoId == 4 || view.top?.screen == .purchases)
                }
                #expect(try await h.coordinator.session(id: id).version == view.version)
            }
            try await h.checkInvariants(id)
        }
        return (accepted, rejected, combinations)
    }
}
