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

    /// The subcommand a command without one runs (`audit` lists rows, `audit witness` monitors),
    /// which docs/cli.md writes as the command itself or with the name in brackets.
    static let defaultSubcommands = ["audit": "show", "audit witness": "monitor"]
    /// Options every command that opens a database or prints takes, documented once above the table.
    static let sharedOptions: Set<String> = ["db", "config", "format", "version", "help"]

    @Test("docs/cli.md's table of commands is photos-admin's parsers: every command with each of its own options, and no command they do not have")
    func commandTable() async throws {
        // The parsers' own description of every command and option (swift-argument-parser).
        let dump = try await AdminProcess.admin(["--experimental-dump-help"], in: BuiltProducts.packageRoot)
        #expect(dump.status == 0, "\(dump.output.prefix(500))")
        let tool = try #require(try JSONSerialization.jsonObject(with: Data(dump.stdout.utf8)) as? [String: Any])
        var commands: [String: Set<String>] = [:]  // leaf command path → its own long options
        func walk(_ command: [String: Any], _ path: [String]) {
            let subcommands = command["subcommands"] as? [[String: Any]] ?? []
            if subcommands.isEmpty, !path.isEmpty, path != ["help"] {
                let options = (command["arguments"] as? [[String: Any]] ?? []).flatMap { argument -> [String] in
                    // Hidden options (a test's knobs) are the parsers' own business.
                    guard ["option", "flag"].contains(argument["kind"] as? String), argument["shouldDisplay"] as? Bool != false else { return [] }
                    return (argument["names"] as? [[String: Any]] ?? []).filter { $0["kind"] as? String == "long" }.compactMap { $0["name"] as? String }
                }
                commands[path.joined(separator: " ")] = Set(options).subtracting(Self.sharedOptions)
            }
            for subcommand in subcommands { walk(subcommand, path + [subcommand["commandName"] as? String ?? "?"]) }
        }
        walk(try #require(tool["command"] as? [String: Any]), [])
        #expect(commands.count > 30, "\(commands.keys.sorted())")

        // Each table row's first cell: one or more `command words ARGS [--options]` in backticks.
        var documented: [String: Set<String>] = [:]
        var usages: [String: Set<String>] = [:]
        let cli = try Self.read("docs/cli.md")
        for line in cli.split(separator: "\n") where line.hasPrefix("| `") {
            // The first cell, its escaped pipes (`A \| B`) kept.
            let cells = line.replacingOccurrences(of: "\\|", with: "\u{1}").split(separator: "|", omittingEmptySubsequences: false)
            let cell = cells.count > 1 ? cells[1].replacingOccurrences(of: "\u{1}", with: "|") : ""
            for usage in cell.matches(of: /`([^`]+)`/).map({ String($0.output.1) }) {
                var words: [String] = []
                for token in usage.split(separator: " ") {
                    if token.allSatisfy({ $0.isLowercase || $0 == "-" }), !token.hasPrefix("-") {
                        words.append(String(token))
                    } else if token.hasPrefix("["), token.hasSuffix("]"), token.dropFirst().dropLast().allSatisfy({ $0.isLowercase }) {
                        continue  // `[monitor]`: the default subcommand, named or not
                    } else {
                        break
                    }
                }
                var path = words.joined(separator: " ")
                if let fallback = Self.defaultSubcommands[path] { path += " " + fallback }
                // Its options: in the usage (each must be one it takes), or named in the row's
                // description (which may name another command's too).
                usages[path, default: []].formUnion(usage.matches(of: /--([a-z][a-z-]*)/).map { String($0.output.1) })
                documented[path, default: []].formUnion(line.matches(of: /--([a-z][a-z-]*)/).map { String($0.output.1) })
            }
        }
        #expect(Set(documented.keys).subtracting(commands.keys).isEmpty, "in docs/cli.md's table, not a command: \(Set(documented.keys).subtracting(commands.keys).sorted())")
        for (path, options) in commands.sorted(by: { $0.key < $1.key }) {
            guard let written = documented[path] else {
                Issue.record("photos-admin \(path) has no row in docs/cli.md's table")
                continue
            }
            let missing = options.subtracting(written)
            #expect(missing.isEmpty, "photos-admin \(path): docs/cli.md's table does not name --\(missing.sorted().joined(separator: ", --"))")
            let unknown = (usages[path] ?? []).subtracting(options).subtracting(Self.sharedOptions)
            #expect(unknown.isEmpty, "photos-admin \(path): docs/cli.md's table names --\(unknown.sorted().joined(separator: ", --")), which it does not take")
        }
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
