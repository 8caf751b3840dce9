import Crypto
import Foundation
import PhotosBuildInfo
import PhotosModel
import PhotosTestSupport
import Testing

@Suite("photos-admin hostile arguments", .serialized)
struct HostileArgumentsTests {
    static let sqlish = "x'); DROP TABLE users; --"
    static let huge = String(repeating: "A", count: 100_000)

    /// Argument vectors that must each fail cleanly: (arguments, stdin).
    static let cases: [([String], String)] = [
        ([], ""),
        (["nonsense"], ""),
        (["photos"], ""),
        (["photos", "add"], ""),
        (["photos", "add", "--title", "x"], ""),
        (["photos", "add", "--title", "", "--price", "1"], ""),
        (["photos", "add", "--title", "x", "--price", "-1"], ""),
        (["photos", "add", "--title", "x", "--price", "1e9"], ""),
        (["photos", "add", "--title", "x", "--price", "NaN"], ""),
        (["photos", "add", "--title", huge, "--price", "1"], ""),
        (["photos", "add", "--title", "x", "--price", "1", "--url", "javascript:alert(1)"], ""),
        (["photos", "import"], ""),
        (["photos", "import", "/dev/null"], ""),
        (["photos", "import", "missing.csv"], ""),
        (["photos", "import", "../../../../etc/passwd"], ""),
        (["photos", "list", "--limit", "0"], ""),
        (["photos", "list", "--limit", "abc"], ""),
        (["photos", "list", "--format", "xml"], ""),
        (["users", "add", sqlish, "--password-stdin"], "long enough password"),
        (["users", "add", "bob"], ""),
        (["users", "add", "bob", "--password-stdin"], ""),
        (["users", "add", "bob", "--password-stdin"], "short"),
        (["users", "add", huge, "--password-stdin"], "long enough password"),
        (["users", "add", "bob", "--password-stdin"], String(repeating: "p", count: 100)),
        (["sign-in"], ""),
        (["sign-in", sqlish], ""),
        (["sign-in", "nobody", "--session", sqlish], ""),
        (["sign-out"], ""),
        (["sign-out", "alice", "--token", "t"], ""),
        (["sign-out", "--token", sqlish], ""),
        (["sign-out", "nobody"], ""),
        (["purchase"], ""),
        (["purchase", "alice"], ""),
        (["purchase", "alice", "-5"], ""),
        (["purchase", "alice", "99999999999999999999999"], ""),
        (["purchase", "alice", "999"], ""),
        (["purchase", "--session", sqlish], ""),
        (["purchase", "alice", "1", "--session", "s"], ""),
        (["sessions", "show"], ""),
        (["sessions", "show", sqlish], ""),
        (["sessions", "show", "x", "--at", "0"], ""),
        (["sessions", "list", "--limit", "-1"], ""),
        (["audit", "--limit", "0"], ""),
        (["audit", "--format", "yaml"], ""),
        (["backup"], ""),
        (["backup", "/nonexistent-dir/backup.db"], ""),
        (["backup", "photos.db"], ""),
        (["migrate", "--config", "/nonexistent.json"], ""),
        (["check", "--config", "/nonexistent.json"], ""),
        (["audit", "verify", "--config", "/nonexistent.json"], ""),
        (["users", "list", "--format", "csv"], ""),
        (["copy"], ""),
        (["copy", "--to", ""], ""),
        (["copy", "--to", "photos.db"], ""),
        (["copy", "--to", "postgres://someone:pw@127.0.0.1:1/photos"], ""),
        (["copy", "--to", "postgres://not a url"], ""),
        (["sessions", "list", "--format", sqlish], ""),
    ]

    @Test("every subcommand with missing, malformed or hostile arguments: one line, non-zero exit, database unchanged")
    func hostileArguments() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let db = ["--db", directory.file("photos.db")]
        await #expect(try AdminProcess.admin(["migrate"] + db, in: directory.path).status == 0)
        await #expect(try AdminProcess.admin(["photos", "add", "--title", "Sunset", "--price", "2.50"] + db, in: directory.path).status == 0)
        await #expect(try AdminProcess.admin(["users", "add", "alice", "--password-stdin"] + db, stdin: "correct horse", in: directory.path).status == 0)
        func digest() throws -> String {
            var hasher = SHA256()
            for suffix in ["", "-wal"] {
                if let data = FileManager.default.contents(atPath: db[1] + suffix) { hasher.update(data: data) }
            }
            return hasher.finalize().map { String(format: "%02x", $0) }.joined()
        }
        let before = try digest()
        for (arguments, stdin) in Self.cases {
            // --db goes first so that a subcommand's own arguments stay as the case wrote them.
            let full = arguments.isEmpty ? [] : [arguments[0]] + (arguments.count > 1 && ["photos", "users", "sessions"].contains(arguments[0]) ? [arguments[1]] + db + arguments.dropFirst(2) : db + arguments.dropFirst())
            let result = try await AdminProcess.admin(full, stdin: stdin, in: directory.path)
            let label = arguments.map { $0.prefix(30) }.joined(separator: " ")
            #expect(result.status != 0, "\(label) succeeded")
            let lines = result.stderr.split(separator: "\n")
            #expect(lines.count == 1, "\(label): \(result.stderr.prefix(500))")
            #expect(result.stderr.count < 1_000, "\(label): error line too long")
            #expect(!result.stderr.contains("Fatal error") && !result.stderr.contains("Stack dump"), "\(label) crashed")
        }
        #expect(try digest() == before, "a failed command changed the database")
    }

    @Test("a backup onto a file that exists, into a missing or read-only directory; --db a directory, an empty file, not a database: one line naming the path")
    func pathsNamed() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let db = ["--db", directory.file("photos.db")]
        await #expect(try AdminProcess.admin(["migrate"] + db, in: directory.path).status == 0)
        try FileManager.default.createDirectory(atPath: directory.file("locked"), withIntermediateDirectories: false)
        try FileManager.default.setAttributes([.posixPermissions: 0o500], ofItemAtPath: directory.file("locked"))
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: directory.file("locked")) }
        var cases: [([String], String)] = [
            (["backup", directory.file("photos.db")] + db, "\(directory.file("photos.db")) already exists"),
            (["backup", directory.file("missing/copy.db")] + db, "no directory \(directory.file("missing"))"),
            (["users", "list", "--db", directory.path], "\(directory.path) is a directory, not a database file"),
            (["users", "list", "--db", directory.file("empty.db")], "\(directory.file("empty.db")) is an empty file, not a database"),
            (["check", "--db", directory.file("junk.db")], "\(directory.file("junk.db")) is not a SQLite database"),
        ]
        #expect(FileManager.default.createFile(atPath: directory.file("empty.db"), contents: Data()))
        #expect(FileManager.default.createFile(atPath: directory.file("junk.db"), contents: Data(String(repeating: "not a database ", count: 20).utf8)))
        // root writes anywhere: the read-only directory is refused only for others.
        if geteuid() != 0 { cases.append((["backup", directory.file("locked/copy.db")] + db, "cannot write into \(directory.file("locked"))")) }
        for (arguments, expected) in cases {
            let result = try await AdminProcess.admin(arguments, in: directory.path)
            #expect(result.status != 0 && result.stderr.split(separator: "\n").count == 1 && result.stderr.contains(expected), "\(arguments): \(result.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: directory.file("missing")))
        let empty = try FileManager.default.attributesOfItem(atPath: directory.file("empty.db"))[.size] as? Int
        #expect(empty == 0, "the empty file was made a database")
    }

    @Test("every command but migrate, given a database that does not exist: one line, and no file or directory created")
    func missingDatabase() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let commands: [([String], String)] = [
            (["audit", "verify"], ""), (["backup", "copy.db"], ""), (["report", "funnel"], ""), (["copy", "--to", "copy.db"], ""), (["check"], ""),
            (["photos", "list"], ""), (["users", "list"], ""), (["sessions", "list"], ""), (["audit"], ""), (["audit", "checkpoint"], ""),
            (["users", "add", "bob", "--password-stdin"], "correct horse"), (["photos", "add", "--title", "T", "--price", "1"], ""),
            (["sign-out", "bob"], ""), (["purchase", "bob", "1"], ""),
        ]
        for path in ["missing.db", "typo/x.db"] {
            for (command, stdin) in commands {
                let result = try await AdminProcess.admin(["--db", path] + command, stdin: stdin, in: directory.path)
                #expect(result.status != 0, "\(command) succeeded: \(result.output)")
                #expect(result.stderr.split(separator: "\n").count == 1, "\(command): \(result.stderr)")
                #expect(result.stderr.contains("no database at \(path)"), "\(command): \(result.stderr)")
            }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".db") || $0 == "typo" }.isEmpty)
    }

    @Test("photosd --version and photos-admin --version print the version and the commit they were built from, and touch no database")
    func versions() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        for tool in ["photos-admin", "photosd"] {
            for arguments in [["--version"], ["--db", "x.db", "--version"]] {
                let result = try await runProcess(BuiltProducts.binDirectory + "/" + tool, arguments, in: directory.path)
                #expect(result.status == 0, "\(tool) \(arguments): \(result.output)")
                #expect(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "\(PhotosVersion.current) (\(PhotosBuild.commit))", "\(tool): \(result.stdout)")
            }
        }
        // The commit recorded at build time is the checkout's (this test runs from one).
        let head = try await runProcess("/usr/bin/git", ["-C", BuiltProducts.packageRoot, "rev-parse", "--short=12", "HEAD"], in: directory.path)
        #expect(head.status == 0 && PhotosBuild.commit == head.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "built from \(PhotosBuild.commit), HEAD is \(head.stdout)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty, "a database or a key was created")
    }

    @Test("a mistyped subcommand is named with the nearest one of its level, or the level's list; usage exit 64")
    func didYouMean() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let cases: [([String], String)] = [
            (["users", "lst"], "Unexpected argument 'lst' (did you mean 'list'?)"),
            (["audit", "verfy"], "(did you mean 'verify'?)"),
            (["users", "erse", "alice"], "(did you mean 'erase'?)"),
            (["lst"], "(the commands here: migrate, photos, users,"),
        ]
        for (arguments, expected) in cases {
            let result = try await runProcess(BuiltProducts.binDirectory + "/photos-admin", arguments, in: directory.path)
            #expect(result.status == 64, "\(arguments): \(result.output)")
            #expect(result.stderr.contains(expected), "\(arguments): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(arguments): \(result.stderr)")
        }
        // Nothing is suggested where nothing was mistyped as a command: an option value.
        let value = try await runProcess(BuiltProducts.binDirectory + "/photos-admin", ["users", "list", "extra"], in: directory.path)
        #expect(value.status == 64 && !value.stderr.contains("did you mean"), "\(value.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }

    @Test("migrate creates a database only in a directory that exists")
    func migrateNeedsDirectory() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let missing = directory.file("nonexistent/dir/x.db")
        let refused = try await AdminProcess.admin(["migrate", "--db", missing], in: directory.path)
        #expect(refused.status != 0)
        #expect(refused.stderr.split(separator: "\n").count == 1, "\(refused.stderr)")
        #expect(refused.stderr.contains("no directory"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory.file("nonexistent")))
        await #expect(try AdminProcess.admin(["migrate", "--db", "new.db"], in: directory.path).status == 0)
        #expect(FileManager.default.fileExists(atPath: directory.file("new.db")))
    }

    @Test("a NUL in a password is refused by users add (bcrypt would stop there), and nothing is added")
    func passwordWithNUL() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let db = ["--db", directory.file("photos.db")]
        await #expect(try AdminProcess.admin(["migrate"] + db, in: directory.path).status == 0)
        for password in ["abcd\u{0}efgh", "correct horse\u{0}", String(repeating: "p", count: 72) + "q"] {
            let result = try await AdminProcess.admin(["users", "add", "u"] + db + ["--password-stdin"], stdin: password, in: directory.path)
            #expect(result.status != 0, "accepted \(password.debugDescription)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
            #expect(result.stderr.contains("invalid password"), "\(result.stderr)")
        }
        let listed = try await AdminProcess.admin(["users", "list", "--format", "json"] + db, in: directory.path)
        #expect(listed.status == 0)
        #expect(!listed.stdout.contains("\"u\""), "\(listed.stdout)")
    }

    @Test("photo titles: bidirectional overrides and arguments that are not UTF-8 are refused; a CSV with a byte-order mark imports")
    func titles() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let db = ["--db", directory.file("photos.db")]
        await #expect(try AdminProcess.admin(["migrate"] + db, in: directory.path).status == 0)
        for title in ["evil\u{202E}gpj.exe", "a\u{2066}b\u{2069}c", "\u{202A}x"] {
            let refused = try await AdminProcess.admin(["photos", "add", "--title", title, "--price", "1"] + db, in: directory.path)
            #expect(refused.status != 0, "accepted \(title.debugDescription)")
            #expect(refused.stderr.contains("bidirectional"), "\(refused.stderr)")
        }
        let latin1 = try await AdminProcess.shell("photos-admin photos add --title \"$(printf 'caf\\351')\" --price 1 --db photos.db", in: directory.path)
        #expect(latin1.status != 0)
        #expect(latin1.stderr.contains("not valid UTF-8"), "\(latin1.stderr)")
        #expect(latin1.stderr.split(separator: "\n").count == 1)
        try Data([0xEF, 0xBB, 0xBF] + Array("title,url,price\nCafé,,2.50\n".utf8)).write(to: URL(fileURLWithPath: directory.file("bom.csv")))
        let imported = try await AdminProcess.admin(["photos", "import", "bom.csv"] + db, in: directory.path)
        #expect(imported.status == 0, "\(imported.output)")
        let listed = try await AdminProcess.admin(["photos", "list", "--format", "json"] + db, in: directory.path)
        #expect(listed.stdout.contains("Café"))
        #expect(!listed.stdout.contains("\u{FFFD}") && !listed.stdout.contains("\u{202E}"))
    }
}
