import DatabaseAccess
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Navigation
import PhotosCore
import PhotosTestSupport
import SQLiteStore
import Testing
import PhotosModel
import Sessions

/// The analytics views and `photos-admin report funnel`, on a database built through the real
/// session coordinator with scripted journeys over three days (a fixed clock), checked against
/// counts derived from the script alone.
@Suite("Analytics: purchase funnel", .serialized)
struct AnalyticsTests {
    enum Stage: Hashable { case started, viewedPhoto, startedBuy, askedToSignIn, purchased }

    /// One scripted journey: what it does, and what it should count for, on its day.
    struct Journey {
        var name: String
        var stages: Set<Stage>
        var exits: [String]
        var run: (SessionCoordinator, String) async throws -> Void
    }

    static let password = "correct horse"

    static func act(_ coordinator: SessionCoordinator, _ id: String, _ action: ClientAction) async throws {
        let result = try await coordinator.apply(action, to: id)
        #expect(result.error == nil || result.error?.code == .invalidCredentials, "\(action.name): \(String(describing: result.error))")
    }

    /// The journeys of the script. `user` is a fresh user per journey that signs in.
    static func journeys(user: String) -> [Journey] {
        let submit = ClientAction(.submit, username: user, password: password)
        return [
            Journey(name: "start only", stages: [.started], exits: []) { _, _ in },
            Journey(name: "browse", stages: [.started, .viewedPhoto], exits: []) { c, id in
                try await act(c, id, ClientAction(.selectPhoto, photoId: 1))
                try await act(c, id, ClientAction(.back))
                try await act(c, id, ClientAction(.selectPhoto, photoId: 2))
            },
            Journey(name: "buy, asked to sign in, cancel", stages: [.started, .viewedPhoto, .startedBuy, .askedToSignIn], exits: ["cancelled"]) { c, id in
                try await act(c, id, ClientAction(.selectPhoto, photoId: 1))
                try await act(c, id, ClientAction(.buy))
                try await act(c, id, ClientAction(.cancel))
            },
            Journey(name: "buy, asked to sign in, back", stages: [.started, .viewedPhoto, .startedBuy, .askedToSignIn], exits: ["back"]) { c, id in
                try await act(c, id, ClientAction(.selectPhoto, photoId: 2))
                try await act(c, id, ClientAction(.buy))
                try await act(c, id, ClientAction(.back))
            },
            Journey(name: "vertical buy dismissed", stages: [.started, .startedBuy, .askedToSignIn], exits: ["dismissed"]) { c, id in
                try await act(c, id, ClientAction(.buyPhoto, photoId: 2))
                try await act(c, id, ClientAction(.dismiss))
            },
            Journey(name: "purchase after sign-in in the flow", stages: [.started, .viewedPhoto, .startedBuy, .askedToSignIn, .purchased], exits: ["completed"]) { c, id in
                try await act(c, id, ClientAction(.selectPhoto, photoId: 3))
                try await act(c, id, ClientAction(.buy))
                try await act(c, id, submit)
                try await act(c, id, ClientAction(.showTerms))
                try await act(c, id, ClientAction(.cancel))
                try await act(c, id, ClientAction(.buy))
            },
            Journey(name: "signed in first (the app's own sheet), two buys, one owned", stages: [.started, .viewedPhoto, .startedBuy, .purchased], exits: ["completed", "completed"]) { c, id in
                try await act(c, id, ClientAction(.signIn))
                try await act(c, id, submit)
                try await act(c, id, ClientAction(.selectPhoto, photoId: 1))
                try await act(c, id, ClientAction(.buy))
                try await act(c, id, ClientAction(.buy))
                try await act(c, id, ClientAction(.buy))
                try await act(c, id, ClientAction(.buy))
            },
            Journey(name: "wrong password, then cancel", stages: [.started, .startedBuy, .askedToSignIn], exits: ["cancelled"]) { c, id in
                try await act(c, id, ClientAction(.buyPhoto, photoId: 1))
                try await act(c, id, ClientAction(.submit, username: user, password: "wrong horse"))
                try await act(c, id, ClientAction(.cancel))
            },
        ]
    }

    @Test("every number of purchase_funnel, buy_exits and the report equals the script's own count; JSON is the views' rows; the SVG is XML that renders")
    func funnel() async throws {
        let test = try TestDatabase()
        defer { test.close() }
        let clock = TestClock()  // 2027-01-15T08:00:00Z
        let auth = test.auth(now: clock.now)
        let coordinator = try test.sessions(auth: auth)
        _ = try await test.catalog.importPhotos((1...3).map { NewPhoto(title: "Photo \($0)", priceCents: 100 * $0) }, actor: testOperator)

        var expected: [String: [Stage: Set<String>]] = [:]  // day → stage → sessions
        var expectedExits: [String: [String: Int]] = [:]      // day → reason → flows
        let plan = [[0, 1, 2, 3, 4, 5, 6, 7, 5, 2], [1, 1, 5, 6, 4], [0, 3, 7, 5, 5, 5]]  // journeys per day
        var users = 0
        for journeysToday in plan {
            for index in journeysToday {
                users += 1
                let user = "user-\(users)"
                _ = try await auth.createUser(username: user, password: Self.password, actor: testOperator)
                let journey = Self.journeys(user: user)[index]
                let id = try await coordinator.createSession().session.id
                try await journey.run(coordinator, id)
                let day = String(ISO8601Timestamp.string(from: clock.now()).prefix(10))
                for stage in journey.stages { expected[day, default: [:]][stage, default: []].insert(id) }
                for reason in journey.exits { expectedExits[day, default: [:]][reason, default: 0] += 1 }
                clock.advance(seconds: 60)
            }
            clock.advance(seconds: 86_400)
        }
        // A session that starts on one day and buys on the next counts on each day for what it did.
        let late = "user-late"
        _ = try await auth.createUser(username: late, password: Self.password, actor: testOperator)
        let spanning = try await coordinator.createSession().session.id
        try await Self.act(coordinator, spanning, ClientAction(.selectPhoto, photoId: 2))
        let firstDay = String(ISO8601Timestamp.string(from: clock.now()).prefix(10))
        expected[firstDay, default: [:]][.started, default: []].insert(spanning)
        expected[firstDay, default: [:]][.viewedPhoto, default: []].insert(spanning)
        clock.advance(seconds: 86_400)
        try await Self.act(coordinator, spanning, ClientAction(.buy))
        try await Self.act(coordinator, spanning, ClientAction(.submit, username: late, password: Self.password))
        try await Self.act(coordinator, spanning, ClientAction(.buy))
        let secondDay = String(ISO8601Timestamp.string(from: clock.now()).prefix(10))
        for stage in [Stage.startedBuy, .askedToSignIn, .purchased] { expected[secondDay, default: [:]][stage, default: []].insert(spanning) }
        expectedExits[secondDay, default: [:]]["completed", default: 0] += 1
        // Operator and API steps never count.
        _ = try await test.purchases.buy(username: "user-1", photoID: 3, actor: testOperator)
        _ = try await auth.signIn(username: "user-1", password: Self.password, actor: .client)

        // The marks come in the background (photosd) or before a report (photos-admin): here,
        // by hand, twice (the second finds nothing new), and in small chunks the same as at once.
        #expect(try await FunnelMarks.catchUp(test.database, chunk: 7) > 50)
        #expect(try await FunnelMarks.catchUp(test.database) == 0)
        let chunked = try await test.database.read { try await $0.query("SELECT day || stage || session_id FROM funnel_marks ORDER BY 1").map { try $0.string(0) } }
        try await test.database.write { try await $0.executeScript("DELETE FROM funnel_marks; UPDATE funnel_marks_progress SET marked_until_id = 0;") }
        try await FunnelMarks.catchUp(test.database)
        #expect(try await test.database.read { try await $0.query("SELECT day || stage || session_id FROM funnel_marks ORDER BY 1").map { try $0.string(0) } } == chunked)

        // The views, row by row.
        let funnel = try await test.database.read { connection in
            try await connection.query("SELECT day, sessions, viewed_photo, started_buy, asked_to_sign_in, purchased FROM purchase_funnel ORDER BY day")
                .map { [try $0.string(0), String(try $0.int(1)), String(try $0.int(2)), String(try $0.int(3)), String(try $0.int(4)), String(try $0.int(5))] }
        }
        let stages: [Stage] = [.started, .viewedPhoto, .startedBuy, .askedToSignIn, .purchased]
        let expectedFunnel = expected.keys.sorted().map { day in [day] + stages.map { String(expected[day]?[$0]?.count ?? 0) } }
        #expect(funnel == expectedFunnel)
        #expect(funnel.count == 5)
        let exits = try await test.database.read { connection in
            try await connection.query("SELECT day, reason, flows FROM buy_exits ORDER BY day, reason").map { "\(try $0.string(0)) \(try $0.string(1)) \(try $0.int(2))" }
        }
        let expectedExitRows = expectedExits.keys.sorted().flatMap { day in expectedExits[day]!.keys.sorted().map { "\(day) \($0) \(expectedExits[day]![$0]!)" } }
        #expect(exits == expectedExitRows)

        // The report over those days: its days are the view's rows, its totals their sums.
        let until = clock.now()
        let report = try await test.database.read { try await FunnelReport.load(days: 5, until: until, on: $0) }
        #expect(report.days.map { [$0.day] + $0.steps.map(String.init) } == expectedFunnel)
        for (index, stage) in stages.enumerated() {
            #expect(report.total.steps[index] == expected.values.reduce(0) { $0 + ($1[stage]?.count ?? 0) })
        }
        #expect(report.exits.map { "\($0.day) \($0.reason) \($0.flows)" } == expectedExitRows)
        let threeDays = try await test.database.read { try await FunnelReport.load(days: 2, until: until, on: $0) }
        #expect(threeDays.days.map(\.day) == Array(expectedFunnel.suffix(2).map { $0[0] }))

        // photos-admin report funnel: JSON rows = the view's rows; the text; the SVG.
        let dayText = String(ISO8601Timestamp.string(from: until).prefix(10))
        let directory = test.directory.path
        let json = try await runProcess(BuiltProducts.binDirectory + "/photos-admin",
                                  ["report", "funnel", "--db", test.path, "--days", "5", "--until", dayText, "--format", "json"], in: directory)
        #expect(json.status == 0, "\(json.output)")
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        let jsonDays = (object?["days"] as? [[String: Any]] ?? []).map { row in
            [row["day"] as? String ?? ""] + ["sessions", "viewedPhoto", "startedBuy", "askedToSignIn", "purchased"].map { String(row[$0] as? Int ?? -1) }
        }
        #expect(jsonDays == funnel)
        let jsonExits = (object?["exits"] as? [[String: Any]] ?? []).map { "\($0["day"] as? String ?? "") \($0["reason"] as? String ?? "") \($0["flows"] as? Int ?? -1)" }
        #expect(jsonExits == exits)

        let text = try await runProcess(BuiltProducts.binDirectory + "/photos-admin",
                                  ["report", "funnel", "--db", test.path, "--days", "5", "--until", dayText, "--svg", "funnel.svg"], in: directory)
        #expect(text.status == 0, "\(text.output)")
        let totals = report.total.steps
        for (label, count) in zip(FunnelChart.labels, totals) {
            #expect(text.stdout.contains(label) && text.stdout.contains(String(count)), "\(label) \(count) in:\n\(text.stdout)")
        }
        #expect(text.stdout.contains("#"), "plain bars when not a terminal")
        #expect(!text.stdout.contains("█"))
        if let conversion = report.conversions[0] { #expect(text.stdout.contains(String(format: "%.1f%%", conversion))) }
        #expect(text.stdout.contains("cancelled: \(report.exitsByReason.first { $0.reason == "cancelled" }?.flows ?? -1)"))

        let svgPath = test.directory.file("funnel.svg")
        let svg = try String(contentsOfFile: svgPath, encoding: .utf8)
        let parser = XMLParser(data: Data(svg.utf8))
        #expect(parser.parse(), "the SVG is not well-formed XML: \(String(describing: parser.parserError))")
        #expect(svg.contains("<title>Purchase funnel"))
        for count in totals { #expect(svg.contains(">\(count)"), "\(count) not in the chart") }
        for label in FunnelChart.labels { #expect(svg.contains(label)) }
        let png = test.directory.file("funnel.png")
        let render = try await runProcess("/usr/bin/rsvg-convert", ["-o", png, svgPath], in: directory)
        #expect(render.status == 0, "rsvg-convert (scripts/install-dependencies installs librsvg2-bin): \(render.output)")
        let bytes = FileManager.default.contents(atPath: png) ?? Data()
        #expect(bytes.count > 1_000 && bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]), "not a PNG")
    }
}
