import Foundation
import PhotosModel
import PhotosTestSupport
import Testing

/// What the docs list, held to what the code has: the audit trail's steps (docs/design.md) and
/// photos-admin's exit statuses (docs/cli.md), so that neither goes stale again.
@Suite("The docs' lists against the code")
struct DocumentedContractTests {
    static func read(_ file: String) throws -> String {
        try String(contentsOfFile: BuiltProducts.packageRoot + "/" + file, encoding: .utf8)
    }

    @Test("docs/deploy.md's operator's walk names the suites scripts/operators-walk runs, and each is a suite of Tests/")
    func operatorsWalk() throws {
        let deploy = try Self.read("docs/deploy.md")
        let start = try #require(deploy.range(of: "## The operator's walk, as tests"), "docs/deploy.md lost the operator's walk")
        let end = try #require(deploy[start.upperBound...].range(of: "\n## "))
        let documented = Set(deploy[start.upperBound..<end.lowerBound].matches(of: /`([A-Za-z]+Tests)`/).map { String($0.output.1) })
        let script = try Self.read("scripts/operators-walk")
        let filter = try #require(script.firstMatch(of: /--filter '([^']+)'/), "scripts/operators-walk lost its filter")
        let run = Set(filter.output.1.split(separator: "|").map(String.init))
        #expect(documented == run, "in the doc only: \(documented.subtracting(run)); in the script only: \(run.subtracting(documented))")
        let sources = try FileManager.default.subpathsOfDirectory(atPath: BuiltProducts.packageRoot + "/Tests")
            .filter { $0.hasSuffix(".swift") }
            .map { try String(contentsOfFile: BuiltProducts.packageRoot + "/Tests/" + $0, encoding: .utf8) }
            .joined()
        for suite in run { #expect(sources.contains("struct \(suite) "), "no suite \(suite) in Tests/") }
    }

    @Test("docs/design.md's list of steps is exactly AuditStep's cases")
    func stepList() throws {
        let design = try Self.read("docs/design.md")
        let start = try #require(design.range(of: "`step` is one of"), "docs/design.md lost its list of steps")
        let end = try #require(design[start.upperBound...].range(of: ". A replace"))
        let listed = Set(design[start.upperBound..<end.lowerBound].matches(of: /`([a-zA-Z.]+)`/).map { String($0.output.1) })
        #expect(listed == Set(AuditStep.allCases.map(\.rawValue)), "listed, not a step: \(listed.subtracting(AuditStep.allCases.map(\.rawValue))); a step, not listed: \(Set(AuditStep.allCases.map(\.rawValue)).subtracting(listed))")
    }

    @Test("docs/cli.md's exit statuses: 64 for a value out of range before anything runs, 1 for what the data refuses or a file it cannot write, 3 for a broken trail")
    func exitStatuses() async throws {
        let cli = try Self.read("docs/cli.md")
        for words in ["`0` done", "`1` the command could not do its work", "`3` it ran and found the audit trail tampered with", "`64` a usage error"] {
            #expect(cli.contains(words), "docs/cli.md no longer says \(words)")
        }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let db = ["--db", directory.file("photos.db")]
        #expect(try await AdminProcess.admin(["migrate"] + db, in: directory.path).status == 0)
        let cases: [(arguments: [String], status: Int32)] = [
            (["report", "funnel", "--days", "0"], 64),
            (["users", "list", "--format", "xml"], 64),
            (["users", "list", "--limit", "-1"], 64),
            (["report", "funnel", "--svg", directory.file("no-such-directory/funnel.svg")], 1),
            (["users", "erase", "nobody", "--yes"], 1),
            (["purchase", "nobody", "1"], 1),
        ]
        // A file the command cannot read: 1, as the doc says (it was 64), with a good key.
        let noteKey = try await AdminProcess.admin(["audit", "key", "--note"] + db, in: directory.path).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let missingReceipt = try await AdminProcess.admin(["audit", "check-receipt", directory.file("no-such-receipt.json"), "--key", noteKey], in: directory.path)
        #expect(missingReceipt.status == 1 && missingReceipt.stderr.contains("no such file"), "\(missingReceipt.status) \(missingReceipt.output)")
        for (arguments, status) in cases {
            let result = try await AdminProcess.admin(arguments + db, in: directory.path)
            #expect(result.status == status, "\(arguments): \(result.status) \(result.output)")
            #expect(result.stderr.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "\n").count == 1, "\(arguments): \(result.stderr)")
        }
    }
}
