import Foundation
import PhotosModel
import PhotosTestSupport
import Testing

/// What a release is made of stays together: CHANGELOG.md, `PhotosVersion`, the migrations, the
/// licence, the version the client docs pin, and `scripts/release`'s checks.
@Suite("Release")
struct ReleaseTests {
    static let root = BuiltProducts.packageRoot

    /// CHANGELOG.md's sections (`## [X] …`), by their bracketed name, each with its text.
    static func changelogSections() throws -> [(name: String, heading: String, text: String)] {
        let changelog = try String(contentsOfFile: root + "/CHANGELOG.md", encoding: .utf8)
        var sections: [(name: String, heading: String, text: String)] = []
        for line in changelog.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("## ["), let close = line.firstIndex(of: "]") {
                sections.append((String(line[line.index(line.startIndex, offsetBy: 4)..<close]), String(line), ""))
            } else if !sections.isEmpty {
                sections[sections.count - 1].text += line + "\n"
            }
        }
        return sections
    }

    /// The migrations' names without `.sql`, oldest first.
    static func migrations() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: root + "/Migrations/sqlite")
            .filter { $0.hasSuffix(".sql") }.sorted().map { String($0.dropLast(4)) }
    }

    @Test("CHANGELOG.md has an entry for PhotosVersion.current (dated, or Unreleased while -dev), names every migration once, the newest in the current version's entry")
    func changelogHoldsTheVersionAndTheMigrations() throws {
        let sections = try Self.changelogSections()
        #expect(sections.first?.name == "Unreleased", "the first entry is [Unreleased], where changes go until a release")
        let version = PhotosVersion.current
        let isDevelopment = version.hasSuffix("-dev")
        let current = isDevelopment ? "Unreleased" : version
        let entry = try #require(sections.first { $0.name == current }, "CHANGELOG.md has no entry for \(current)")
        if !isDevelopment {
            #expect(entry.heading.wholeMatch(of: /## \[\d+\.\d+\.\d+\] - \d{4}-\d{2}-\d{2}/) != nil, "'\(entry.heading)' is not '## [X.Y.Z] - YYYY-MM-DD'")
            #expect(sections.dropFirst().first?.name == version, "the newest release's entry is not \(version)'s")
        }
        let migrations = try Self.migrations()
        for migration in migrations {
            let naming = sections.filter { $0.text.contains("`\(migration)`") }.map(\.name)
            #expect(naming.count == 1, "\(migration) is named by \(naming) (it belongs in exactly one version's entry)")
        }
        let newest = try #require(migrations.last)
        #expect(
            entry.text.contains("`\(newest)`"),
            "the newest migration \(newest) is not in \(current)'s entry: a migration after a release raises PhotosVersion to the next -dev and goes under [Unreleased]")
    }

    @Test("LICENSE is the Apache License 2.0; the client docs pin the newest release")
    func licenceAndPin() throws {
        let licence = try String(contentsOfFile: Self.root + "/LICENSE", encoding: .utf8)
        #expect(licence.contains("Apache License") && licence.contains("Version 2.0, January 2004"))
        let released = try #require(try Self.changelogSections().first { $0.name != "Unreleased" }?.name)
        for doc in ["README.md", "docs/client.md"] {
            let text = try String(contentsOfFile: Self.root + "/" + doc, encoding: .utf8)
            #expect(text.contains("from: \"\(released)\""), "\(doc) does not pin from: \"\(released)\"")
            #expect(!text.contains("branch: \"main\""), "\(doc) still pins a branch")
        }
    }

    @Test("scripts/release tags only a clean tree whose version and CHANGELOG entry say X.Y.Z and whose tests pass")
    func releaseScript() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let repo = directory.path
        // A repository of the files the script reads, as the project has them.
        for file in ["scripts/release", "CHANGELOG.md", "Sources/PhotosModel/Support/PhotosVersion.swift"] {
            try FileManager.default.createDirectory(atPath: repo + "/" + (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: Self.root + "/" + file, toPath: repo + "/" + file)
        }
        func run(_ executable: String, _ arguments: [String], tests: String = "true") async throws -> ProcessResult {
            try await runProcess(
                executable, arguments, in: repo,
                environment: ["RELEASE_TEST_COMMAND": tests, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"])
        }
        func git(_ arguments: [String]) async throws -> ProcessResult { try await run("/usr/bin/git", arguments) }
        #expect(try await git(["init", "-q", "-b", "main"]).status == 0)
        #expect(try await git(["add", "-A"]).status == 0)
        #expect(try await git(["commit", "-qm", "release"]).status == 0)
        let release = repo + "/scripts/release"
        let version = PhotosVersion.current.replacing("-dev", with: "")

        // A version the sources do not say; a malformed one.
        let other = try await run(release, ["9.9.9"])
        #expect(other.status != 0 && other.stderr.contains("PhotosVersion.current"), "\(other.output)")
        #expect(try await run(release, ["v1"]).status != 0)
        guard !PhotosVersion.current.hasSuffix("-dev") else { return }
        // Failing tests: nothing tagged.
        let red = try await run(release, [version], tests: "false")
        #expect(red.status != 0 && red.stderr.contains("tests failed"), "\(red.output)")
        #expect(try await git(["tag"]).stdout.isEmpty)
        // A changed tree: refused.
        try Data("x".utf8).write(to: URL(fileURLWithPath: repo + "/stray"))
        let dirty = try await run(release, [version])
        #expect(dirty.status != 0 && dirty.stderr.contains("working tree"), "\(dirty.output)")
        try FileManager.default.removeItem(atPath: repo + "/stray")
        // Green: tagged, with the entry as the tag's message; a second time, refused.
        let green = try await run(release, [version])
        #expect(green.status == 0, "\(green.output)")
        #expect(try await git(["tag"]).stdout == "v\(version)\n")
        #expect(try await git(["tag", "-l", "--format=%(contents)", "v\(version)"]).stdout.contains("### Migrations"))
        let again = try await run(release, [version])
        #expect(again.status != 0 && again.stderr.contains("exists already"), "\(again.output)")
        // An entry missing: refused.
        let changelog = try String(contentsOfFile: repo + "/CHANGELOG.md", encoding: .utf8)
        try Data(changelog.replacing("## [\(version)]", with: "## [0.0.1]").utf8).write(to: URL(fileURLWithPath: repo + "/CHANGELOG.md"))
        #expect(try await git(["commit", "-qam", "no entry"]).status == 0)
        #expect(try await git(["tag", "-d", "v\(version)"]).status == 0)
        let missing = try await run(release, [version])
        #expect(missing.status != 0 && missing.stderr.contains("no entry"), "\(missing.output)")
    }
}
