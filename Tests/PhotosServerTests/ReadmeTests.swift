import Foundation
import PhotosTestSupport
import Testing

/// The README is what a newcomer reads first: its commands run as written, its answer is the
/// answer, it stays short, and every link in it and in docs/ leads somewhere.
@Suite("README and docs")
struct ReadmeTests {
    static let defaultAPI = "http://127.0.0.1:8080"

    @Test("the README's first request gives the answer it shows, against a real photosd with the demo photos")
    func firstRequest() async throws {
        let script = try DocBlocks.block("first-request", in: "README.md")
        let shown = try DocBlocks.block("first-request-answer", in: "README.md")
        #expect(script.contains(Self.defaultAPI), "the README's lines name the default address")
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let daemon = try await Daemon(["--seed-demo"], in: directory.path)
        defer { _ = daemon.stop() }
        let result = try await runProcess(
            "/bin/bash", ["-c", "set -euo pipefail\n" + script.replacingOccurrences(of: Self.defaultAPI, with: daemon.baseURL)],
            in: directory.path)
        #expect(result.status == 0, "\(result.output)")
        #expect(result.stdout.trimmingCharacters(in: .newlines) == shown, "the README shows:\n\(shown)\nphotosd answers:\n\(result.stdout)")
    }

    @Test("the README's console lines add an operator who can then sign in to the console; its CLI and experiment lines run")
    func consoleAndCLI() async throws {
        let console = try DocBlocks.block("console-start", in: "README.md")
        let cli = try DocBlocks.block("cli-example", in: "README.md")
        let credentials = try #require(console.firstMatch(of: /printf '%s' '([^']+)' \| photos-admin operators add (\S+)/), "\(console)")
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // As after `scripts/run --seed-demo` from the repository root: photosd on data/photos.db,
        // the commands run from the same directory (the PATH line names the test's binaries).
        let daemon = try await Daemon(["--seed-demo"], in: directory.path)
        defer { _ = daemon.stop() }
        let commands = try await runProcess("/bin/bash", ["-c", "set -euxo pipefail\n" + console + "\n" + cli], in: directory.path)
        #expect(commands.status == 0, "\(commands.output)")
        #expect(commands.stdout.contains(String(credentials.2)), "operators list names the new operator: \(commands.stdout)")
        #expect(commands.stdout.contains("audit trail intact"), "\(commands.output)")
        #expect(commands.stdout.contains("purchase.completed"), "\(commands.output)")

        // The experiment lines, on the same database.
        let experiment = try await runProcess("/bin/bash", ["-c", "set -euxo pipefail\n" + (try DocBlocks.block("experiment-example", in: "README.md"))], in: directory.path)
        #expect(experiment.status == 0, "\(experiment.output)")
        #expect(experiment.stdout.contains("started experiment sheet on buy.presentation"), "\(experiment.output)")
        #expect(experiment.stdout.contains("experiment sheet on buy.presentation (running; control push)"), "\(experiment.output)")
        #expect(experiment.stdout.contains("stopped experiment sheet; new flows get modal"), "\(experiment.output)")

        let consoleURL = try #require(try await daemon.consoleURL())
        let browser = ConsoleClient(baseURL: consoleURL)
        let signIn = try await browser.signIn(String(credentials.2), password: String(credentials.1))
        #expect(signIn.status == 303, "\(signIn.status) \(signIn.body.prefix(300))")
        #expect(signIn.headers["location"] == "/console/sessions")
        #expect(try await browser.get("/console/sessions").status == 200)
    }

    @Test("the README stays a five-minute read (at most 160 lines) and names the two commands first")
    func short() throws {
        let readme = try String(contentsOfFile: BuiltProducts.packageRoot + "/README.md", encoding: .utf8)
        let lines = readme.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count <= 160, "README.md has \(lines.count) lines; move the detail to a page of docs/")
        let run = try #require(lines.firstIndex { $0.hasPrefix("scripts/run ") })
        let test = try #require(lines.firstIndex { $0.hasPrefix("scripts/test ") })
        #expect(run < 40 && test < 40, "the two commands come first: lines \(run + 1) and \(test + 1)")
    }

    /// Every `.md` file a reader can open: the README and docs/.
    static func documents() throws -> [String] {
        let docs = try FileManager.default.contentsOfDirectory(atPath: BuiltProducts.packageRoot + "/docs")
            .filter { $0.hasSuffix(".md") }.map { "docs/" + $0 }
        let bench = try FileManager.default.contentsOfDirectory(atPath: BuiltProducts.packageRoot + "/docs/bench")
            .filter { $0.hasSuffix(".md") }.map { "docs/bench/" + $0 }
        return ["README.md"] + docs.sorted() + bench.sorted()
    }

    /// GitHub's anchor for a heading: lowercased, spaces to hyphens, punctuation dropped.
    static func anchor(_ heading: String) -> String {
        var slug = ""
        for character in heading.lowercased() {
            if character == " " { slug.append("-") } else if character.isLetter || character.isNumber || character == "-" || character == "_" { slug.append(character) }
        }
        return slug
    }

    static func anchors(in text: String) -> Set<String> {
        var inFence = false
        var result: Set<String> = []
        for line in text.split(separator: "\n") {
            if line.hasPrefix("```") { inFence.toggle() }
            guard !inFence, line.hasPrefix("#") else { continue }
            result.insert(anchor(String(line.drop { $0 == "#" }.drop { $0 == " " })))
        }
        return result
    }

    @Test("the benchmark page and docs/postgres.md show the figures docs/bench/ holds (scripts/bench-summary.py --check)")
    func benchmarkFigures() async throws {
        let result = try await runProcess("/usr/bin/env", ["python3", BuiltProducts.packageRoot + "/scripts/bench-summary.py", "--check"], in: BuiltProducts.packageRoot)
        #expect(result.status == 0, "\(result.output)")
    }

    @Test("every relative link of the README and docs/ names a file that exists, and a heading that exists in it")
    func links() throws {
        let root = BuiltProducts.packageRoot
        var broken: [String] = []
        var checked = 0
        for document in try Self.documents() {
            let text = try String(contentsOfFile: root + "/" + document, encoding: .utf8)
            let folder = (document as NSString).deletingLastPathComponent
            for match in text.matches(of: /\]\(([^)\s]+)\)/) {
                let target = String(match.1)
                if target.hasPrefix("http://") || target.hasPrefix("https://") || target.hasPrefix("mailto:") { continue }
                checked += 1
                let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
                let path = parts[0].isEmpty ? document : (folder.isEmpty ? parts[0] : folder + "/" + parts[0])
                let file = (root + "/" + path as NSString).standardizingPath
                guard FileManager.default.fileExists(atPath: file) else {
                    broken.append("\(document): \(target) (no file \(path))")
                    continue
                }
                if parts.count == 2, file.hasSuffix(".md") {
                    let headings = Self.anchors(in: try String(contentsOfFile: file, encoding: .utf8))
                    if !headings.contains(parts[1]) { broken.append("\(document): \(target) (no heading #\(parts[1]) in \(path))") }
                }
            }
        }
        #expect(checked > 40, "only \(checked) links found")
        #expect(broken.isEmpty, "broken links:\n\(broken.joined(separator: "\n"))")
    }
}
