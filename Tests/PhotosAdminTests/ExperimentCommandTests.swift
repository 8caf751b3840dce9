import Foundation
import PhotosTestSupport
import Testing

/// `photos-admin experiments add|list|stop` and `report funnel --experiment`, as real processes.
@Suite("photos-admin experiments")
struct ExperimentCommandTests {
    func freshDatabase() async throws -> (TemporaryDirectory, [String]) {
        let directory = try TemporaryDirectory()
        let db = ["--db", directory.file("photos.db")]
        let migrate = try await AdminProcess.admin(["migrate"] + db, in: directory.path)
        #expect(migrate.status == 0, "\(migrate.stderr)")
        return (directory, db)
    }

    @Test("add, list, stop with --keep, JSON; each change a step of the operator trail; refusals in one line, nothing written")
    func lifecycle() async throws {
        let (directory, db) = try await freshDatabase()
        defer { directory.remove() }
        func admin(_ arguments: [String]) async throws -> ProcessResult { try await AdminProcess.admin(arguments + db, in: directory.path) }

        let added = try await admin(["experiments", "add", "sheet", "--point", "buy.presentation", "--variants", "push:50,modal:50"])
        #expect(added.status == 0, "\(added.stderr)")
        #expect(added.stdout == "started experiment sheet on buy.presentation: push:50,modal:50 (control push)\n")

        // Refusals: one line on stderr, a non-zero exit, nothing added.
        let refusals: [([String], Int32, String)] = [
            (["experiments", "add", "sheet2", "--point", "buy.presentation", "--variants", "push:1,modal:1"], 1, "experiment sheet runs on buy.presentation; stop it first"),
            (["experiments", "add", "sheet", "--point", "terms.required", "--variants", "no:1,yes:1"], 1, "experiment sheet already exists"),
            (["experiments", "add", "x", "--point", "terms.required", "--variants", "A:50,B:50"], 64, "\"A\" is not a value of terms.required (no, yes)"),
            (["experiments", "add", "x", "--point", "terms.required", "--variants", "yes:50"], 64, "an experiment needs two variants or more"),
            (["experiments", "add", "x", "--point", "terms.required", "--variants", "no:0,yes:0"], 64, "every weight is 0"),
            (["experiments", "add", "x", "--point", "terms.required", "--variants", "no:-1,yes:2"], 64, "is not NAME:WEIGHT"),
            (["experiments", "add", "bad name", "--point", "terms.required", "--variants", "no:1,yes:1"], 64, "an experiment's name is"),
            (["experiments", "add", "x", "--point", "terms", "--variants", "no:1,yes:1"], 64, "'terms.required'"),
            (["experiments", "stop", "nope"], 1, "no experiment nope"),
            (["experiments", "stop", "sheet", "--keep", "sideways"], 1, "sideways is not a variant of sheet (push, modal)"),
        ]
        for (arguments, status, message) in refusals {
            let refused = try await admin(arguments)
            #expect(refused.status == status, "\(arguments): \(refused.status) \(refused.stderr)")
            #expect(refused.stderr.contains(message), "\(arguments): \(refused.stderr)")
            #expect(refused.stderr.split(separator: "\n").count == 1, "\(arguments): \(refused.stderr)")
        }

        let stopped = try await admin(["experiments", "stop", "sheet", "--keep", "modal"])
        #expect(stopped.stdout == "stopped experiment sheet; new flows get modal\n", "\(stopped.stderr)")
        let again = try await admin(["experiments", "stop", "sheet"])
        #expect(again.status == 1 && again.stderr.contains("stopped already"))
        // Another experiment on the point may start now.
        #expect(try await admin(["experiments", "add", "sheet-2", "--point", "buy.presentation", "--variants", "modal:70,push:30"]).status == 0)

        let listed = try await admin(["experiments", "list", "--format", "json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any])
        let experiments = try #require(object["experiments"] as? [[String: Any]])
        #expect(experiments.map { $0["name"] as? String } == ["sheet-2", "sheet"])
        #expect(experiments.map { $0["running"] as? Bool } == [true, false])
        #expect(experiments[1]["kept"] as? String == "modal")
        #expect(experiments[0]["control"] as? String == "modal")
        #expect((experiments[0]["variants"] as? [[String: Any]])?.map { "\($0["name"] ?? ""):\($0["weight"] ?? "")" } == ["modal:70", "push:30"])
        #expect(object.keys.contains("nextAfter"))
        let table = try await admin(["experiments", "list"])
        #expect(table.stdout.contains("stopped: new flows get modal"), "\(table.stdout)")

        let trail = try await admin(["audit", "--session", "operator", "--format", "json"])
        let steps = (try JSONSerialization.jsonObject(with: Data(trail.stdout.utf8)) as? [String: Any])?["events"] as? [[String: Any]] ?? []
        #expect(steps.map { $0["step"] as? String } == ["experiment.added", "experiment.stopped", "experiment.added"])
        #expect((steps[1]["detail"] as? [String: Any])?["kept"] as? String == "modal")
        #expect(try await admin(["audit", "verify"]).status == 0)
    }

    @Test("report funnel --experiment: a table, JSON with the interval and its method named, an SVG; an unknown experiment refused")
    func report() async throws {
        let (directory, db) = try await freshDatabase()
        defer { directory.remove() }
        func admin(_ arguments: [String]) async throws -> ProcessResult { try await AdminProcess.admin(arguments + db, in: directory.path) }
        #expect(try await admin(["experiments", "add", "terms-first", "--point", "terms.required", "--variants", "no:50,yes:50"]).status == 0)

        let table = try await admin(["report", "funnel", "--experiment", "terms-first", "--svg", directory.file("experiment.svg")])
        #expect(table.status == 0, "\(table.stderr)")
        #expect(table.stdout.contains("experiment terms-first on terms.required (running; control no)"), "\(table.stdout)")
        #expect(table.stdout.contains("Newcombe"), "\(table.stdout)")
        let svg = try String(contentsOfFile: directory.file("experiment.svg"), encoding: .utf8)
        #expect(svg.hasPrefix("<?xml") && svg.contains("Experiment terms-first"))

        let json = try await admin(["report", "funnel", "--experiment", "terms-first", "--format", "json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(object["control"] as? String == "no")
        #expect((object["variants"] as? [[String: Any]])?.map { $0["variant"] as? String } == ["no", "yes"])
        #expect((object["method"] as? String)?.contains("two-proportion z-test") == true)

        let unknown = try await admin(["report", "funnel", "--experiment", "nope"])
        #expect(unknown.status == 1 && unknown.stderr.contains("no experiment nope"))
    }
}
