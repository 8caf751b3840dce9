import AuditTrail
import DatabaseAccess
import Foundation
import Navigation
import PhotosCore
import PhotosModel
import PhotosTestSupport
import Sessions
import Testing

/// `photos-admin report funnel --experiment`: the counts from the trail, and the statistics.
@Suite("Experiment report")
struct ExperimentReportTests {
    @Test("the interval is Newcombe's hybrid score interval: his worked example (56/70 against 48/80) gives 0.0524 to 0.3339")
    func newcombeExample() {
        let difference = ExperimentReport.difference(purchased: 56, of: 70, againstPurchased: 48, of: 80)
        #expect(abs(difference.estimate - 0.2) < 1e-12)
        #expect(abs(difference.lower - 0.0524) < 0.00005, "\(difference.lower)")
        #expect(abs(difference.upper - 0.3339) < 0.00005, "\(difference.upper)")
        #expect(abs(difference.pValue - 0.00805) < 0.00001, "\(difference.pValue)")
        // No difference: the interval straddles 0 and p is 1.
        let same = ExperimentReport.difference(purchased: 10, of: 100, againstPurchased: 10, of: 100)
        #expect(same.lower < 0 && same.upper > 0 && abs(same.pValue - 1) < 1e-9)
    }

    @Test("each variant's sessions and steps after the exposure, as the trail says; the view recomputes them", arguments: TestStore.all)
    func countsFromTheTrail(store: TestStore) async throws {
        let h = try await SessionHarness.make(store)
        defer { h.close() }
        try await h.addExperiment("sheet", .buyPresentation, "push:50,modal:50")
        let sessionCount = 24
        for index in 0..<sessionCount { try await h.addUser("shopper\(index)", password: "password-\(index)") }
        // What each session does after its flow starts: 0 cancels; 1 signs in and leaves; 2
        // signs in and buys.
        var expected: [String: [Int]] = [:]
        for index in 0..<sessionCount {
            let id = try await h.newSession()
            try await h.act(id, .selectPhoto, photoId: 1)
            let started = try await h.act(id, .buy)
            let exposure = try #require(ExperimentFlowTests.exposures(started.events).first)
            let variant = String(exposure.split(separator: " ")[2])
            var counts = expected[variant] ?? [0, 0, 0, 0, 0]
            counts[0] += 1
            counts[2] += 1  // asked to sign in: signed out, the flow starts with sign-in
            switch index % 3 {
            case 0:
                try await h.act(id, .cancel)
            case 1:
                let submitted = try await h.coordinator.apply(ClientAction(.submit, username: "shopper\(index)", password: "password-\(index)"), to: id)
                #expect(submitted.outcome == .signedIn)
                counts[1] += 1  // buy replaced sign-in
                counts[3] += 1
            default:
                _ = try await h.coordinator.apply(ClientAction(.submit, username: "shopper\(index)", password: "password-\(index)"), to: id)
                let bought = try await h.act(id, .buy)
                #expect(bought.outcome == .purchased)
                counts[1] += 1
                counts[3] += 1
                counts[4] += 1
            }
            expected[variant] = counts
        }
        // A session exposed before the experiment's steps counts them only after its exposure:
        // one that signed in first, then started a flow, has signedIn 0.
        let early = try await h.newSession()
        try await h.signIn(early)
        try await h.act(early, .selectPhoto, photoId: 2)
        let earlyStart = try await h.act(early, .buy)
        let earlyVariant = String(try #require(ExperimentFlowTests.exposures(earlyStart.events).first).split(separator: " ")[2])
        expected[earlyVariant, default: [0, 0, 0, 0, 0]][0] += 1
        expected[earlyVariant, default: [0, 0, 0, 0, 0]][1] += 1

        let report = try await h.test.database.read { try await ExperimentReport.load(experiment: "sheet", on: $0) }
        #expect(report.control == "push")
        #expect(report.variants.map(\.variant) == ["push", "modal"])
        for variant in report.variants {
            #expect(variant.steps == expected[variant.variant] ?? [0, 0, 0, 0, 0], "\(variant.variant)")
            #expect(variant.conversion == Double(variant.purchased) / Double(variant.exposed))
        }
        #expect(report.variants.allSatisfy { $0.exposed > 0 }, "24 sessions split 50/50 reach both variants: \(expected)")
        let modal = try #require(report.variants.last?.difference)
        let control = report.variants[0]
        #expect(modal == ExperimentReport.difference(
            purchased: report.variants[1].purchased, of: report.variants[1].exposed, againstPurchased: control.purchased, of: control.exposed))

        // The view: one row per exposure, whose variants are the report's.
        let viewRows = try await h.test.database.read { connection in
            try await connection.query("SELECT variant, count(DISTINCT session_id) FROM experiment_exposures WHERE experiment = \("sheet") GROUP BY variant ORDER BY variant")
                .map { "\(try $0.string(0)):\(try $0.int(1))" }
        }
        #expect(viewRows == report.variants.sorted { $0.variant < $1.variant }.map { "\($0.variant):\($0.exposed)" })

        // Unknown experiment.
        await #expect(throws: PhotosError.self) { try await h.test.database.read { try await ExperimentReport.load(experiment: "nope", on: $0) } }
        let verification = try await h.test.database.read { try await AuditChains.verify(on: $0) }
        #expect(verification.isIntact)
    }
}
