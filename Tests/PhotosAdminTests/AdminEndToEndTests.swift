import Foundation
import PhotosModel
import PhotosTestSupport
import Testing

@Suite("photos-admin end to end", .serialized)
struct AdminEndToEndTests {
    /// The lines of docs/cli.md's walkthrough that are commands (not blank, not comments).
    static func walkthrough() throws -> [String] {
        try DocBlocks.block("admin-walkthrough", in: "docs/cli.md").split(separator: "\n").map(String.init)
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
    }

    @Test("docs/cli.md's walkthrough works line by line")
    func walkthroughWorks() async throws {
        let lines = try Self.walkthrough()
        #expect(lines.count >= 10, "docs/cli.md's walkthrough missing")
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // One shell, as an operator pasting the lines would have; -e stops at the first failing
        // line and -x shows which one it was.
        let script = "set -euxo pipefail\n" + lines.joined(separator: "\n") + "\nphotos-admin audit verify\n"
        let result = try await AdminProcess.shell(script, in: directory.path)
        #expect(result.status == 0, "stdout: \(result.stdout)\nstderr: \(result.stderr)")
        #expect(result.stdout.contains("already owns photo 1"))
        #expect(result.stdout.contains("audit trail intact"))
    }

    func freshDatabase() async throws -> (TemporaryDirectory, [String]) {
        let directory = try TemporaryDirectory()
        let db = ["--db", directory.file("photos.db")]
        let migrate = try await AdminProcess.admin(["migrate"] + db, in: directory.path)
        #expect(migrate.status == 0, "\(migrate.stderr)")
        return (directory, db)
    }

    /// Asserts a failure: non-zero exit, exactly one line on stderr containing `fragment`.
    func expectOneLineError(_ result: AdminProcess.Result, contains fragment: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(result.status != 0, sourceLocation: sourceLocation)
        let lines = result.stderr.split(separator: "\n").filter { !$0.isEmpty }
        #expect(lines.count == 1, "stderr: \(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stderr.contains(fragment), "stderr: \(result.stderr)", sourceLocation: sourceLocation)
    }

    @Test("a config file's key that is no setting is warned about once, naming the nearest setting; the command still runs")
    func unknownConfigKeys() async throws {
        let (directory, db) = try await freshDatabase()
        defer { directory.remove() }
        try #"{"server": {"prot": 9000, "port": 8080}, "auth": {"bcryptCots": 4}, "shop": {"name": "x"}}"#
            .write(toFile: directory.file("photosd.json"), atomically: true, encoding: .utf8)
        let listed = try await AdminProcess.admin(["users", "list", "--config", "photosd.json"] + db, in: directory.path)
        #expect(listed.status == 0, "\(listed.output)")
        let warnings = listed.stderr.split(separator: "\n").filter { $0.contains("warning") }
        #expect(warnings.count == 3, "\(listed.stderr)")
        #expect(listed.stderr.contains("server.prot is not a setting and is ignored (did you mean server.port?)"), "\(listed.stderr)")
        #expect(listed.stderr.contains("auth.bcryptCots is not a setting and is ignored (did you mean auth.bcryptCost?)"))
        #expect(listed.stderr.contains("shop.name is not a setting and is ignored\n") || listed.stderr.hasSuffix("shop.name is not a setting and is ignored"),
                "no suggestion for a key near nothing: \(listed.stderr)")
        // The shipped file has no such key.
        let shipped = try await AdminProcess.admin(["users", "list", "--config", BuiltProducts.packageRoot + "/config/photosd.json"] + db, in: directory.path)
        #expect(!shipped.stderr.contains("warning"), "\(shipped.stderr)")
    }

    @Test("audit pages: a cut page names the next page's --after; --after goes on from it; --tail shows the newest; --session pages by seq")
    func auditPages() async throws {
        let (directory, db) = try await freshDatabase()
        defer { directory.remove() }
        for title in ["A", "B", "C", "D", "E"] {
            _ = try await AdminProcess.admin(["photos", "add", "--title", title, "--price", "1.00"] + db, in: directory.path)
        }
        // `{"events": [...], "nextAfter": …}`, each row's detail a JSON object.
        struct Printed: Decodable {
            struct Row: Decodable, Equatable { let sessionId: String; let seq: Int; let detail: [String: Int] }
            let events: [Row]
            let nextAfter: Int?
        }
        func details(_ stdout: String) throws -> [Printed.Row] {
            try JSONDecoder().decode(Printed.self, from: Data(stdout.utf8)).events
        }
        let all = try details(try await AdminProcess.admin(["audit", "--format", "json"] + db, in: directory.path).stdout)
        #expect(all.count == 5, "\(all)")
        let first = try await AdminProcess.admin(["audit", "--limit", "2", "--format", "json"] + db, in: directory.path)
        #expect(try details(first.stdout) == Array(all[0..<2]))
        #expect(try JSONDecoder().decode(Printed.self, from: Data(first.stdout.utf8)).nextAfter != nil, "a cut page names the next")
        #expect(all.allSatisfy { $0.detail["count"] == 1 }, "photo.added's detail is an object: \(all)")
        let next = try #require(first.stderr.firstMatch(of: /the next page: --after (\d+)/).map { String($0.1) }, "\(first.stderr)")
        let second = try await AdminProcess.admin(["audit", "--limit", "2", "--after", next, "--format", "json"] + db, in: directory.path)
        #expect(try details(second.stdout) == Array(all[2..<4]))
        let tail = try await AdminProcess.admin(["audit", "--tail", "--limit", "2", "--format", "json"] + db, in: directory.path)
        #expect(try details(tail.stdout) == Array(all[3..<5]))
        #expect(!tail.stderr.contains("next page"), "\(tail.stderr)")
        let bySeq = try await AdminProcess.admin(["audit", "--session", "operator", "--after", "3", "--format", "json"] + db, in: directory.path)
        #expect(try details(bySeq.stdout).map(\.seq) == [4, 5])
        let both = try await AdminProcess.admin(["audit", "--tail", "--after", "2"] + db, in: directory.path)
        #expect(both.status == 64 && both.stderr.contains("--tail or --after"), "\(both.stderr)")
    }

    @Test("audit verify passes on a clean database and fails, naming the row, after tampering")
    func auditVerify() async throws {
        let (directory, db) = try await freshDatabase()
        defer { directory.remove() }
        _ = try await AdminProcess.admin(["photos", "add", "--title", "A", "--price", "1.00"] + db, in: directory.path)
        _ = try await AdminProcess.admin(["photos", "add", "--title", "B", "--price", "2.00"] + db, in: directory.path)
        _ = try await AdminProcess.admin(["users", "add", "alice", "--password-stdin"] + db, stdin: "correct horse\n", in: directory.path)
        let clean = try await AdminProcess.admin(["audit", "verify"] + db, in: directory.path)
        #expect(clean.status == 0)
        #expect(clean.stdout.contains("3 rows verified"))
        // Alter row 2 behind the triggers' back, with the sqlite3 shell.
        let tamper = try await AdminProcess.shell(
            "sqlite3 \(db[1]) \"DROP TRIGGER audit_events_no_update; UPDATE audit_events SET detail = '{\\\"count\\\":7}' WHERE id = 2;\"",
            in: directory.path)
        #expect(tamper.status == 0, "\(tamper.stderr)")
        let broken = try await AdminProcess.admin(["audit", "verify"] + db, in: directory.path)
        expectOneLineError(broken, contains: "row id 2 (session operator, seq 2)")
        #expect(broken.status == 3, "tampering found: exit 3, not 1 (could not check)")
        let check = try await AdminProcess.admin(["check"] + db, in: directory.path)
        #expect(check.status == 3)
        #expect(check.stdout.contains("audit: FAILED"))
    }

    @Test("audit checkpoint --export, audit key, audit verify --public-key and --against")
    func auditCheckpoints() async throws {
        let (directory, db) = try await freshDatabase()
        defer { directory.remove() }
        _ = try await AdminProcess.admin(["photos", "add", "--title", "A", "--price", "1.00"] + db, in: directory.path)
        let key = try await AdminProcess.admin(["audit", "key"] + db, in: directory.path)
        #expect(key.status == 0)
        let publicKey = key.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(publicKey.count == 64)
        var info = stat()
        // Beside the database (a relative audit.signingKeyPath is the database directory's).
        #expect(stat(directory.file("audit-signing.key"), &info) == 0 && info.st_mode & 0o777 == 0o600)
        let written = try await AdminProcess.admin(["audit", "checkpoint", "--export", "cp1.json"] + db, in: directory.path)
        #expect(written.status == 0, "\(written.output)")
        #expect(written.stdout.hasPrefix("checkpoint 1: 1 trail changed"))
        let verified = try await AdminProcess.admin(["audit", "verify", "--public-key", publicKey, "--against", "cp1.json"] + db, in: directory.path)
        #expect(verified.status == 0, "\(verified.output)")
        #expect(verified.stdout.contains("1 checkpoint verified"))
        // Without the private key on this host: the public key alone verifies.
        try FileManager.default.moveItem(atPath: directory.file("audit-signing.key"), toPath: directory.file("elsewhere.key"))
        await #expect(try AdminProcess.admin(["audit", "verify", "--public-key", publicKey] + db, in: directory.path).status == 0)
        await expectOneLineError(try AdminProcess.admin(["audit", "verify"] + db, in: directory.path), contains: "no trusted public key")
        // No new key is made for a database whose checkpoints another key signed …
        await expectOneLineError(
            try AdminProcess.admin(["audit", "key"] + db, in: directory.path, environment: ["PHOTOSD_AUDIT_SIGNING_KEY_PATH": "other.key"]),
            contains: "public key \(publicKey)")
        #expect(!FileManager.default.fileExists(atPath: directory.file("other.key")))
        // … a database without checkpoints gets one.
        let (otherDirectory, otherDB) = try await freshDatabase()
        defer { otherDirectory.remove() }
        let otherKey = try await AdminProcess.admin(["audit", "key"] + otherDB, in: otherDirectory.path).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(otherKey.count == 64 && otherKey != publicKey)
        await expectOneLineError(try AdminProcess.admin(["audit", "verify", "--public-key", otherKey] + db, in: directory.path), contains: "checkpoint 1")
        await expectOneLineError(try AdminProcess.admin(["audit", "verify", "--public-key", "nothex"] + db, in: directory.path), contains: "not an Ed25519 public key")
        await expectOneLineError(try AdminProcess.admin(["audit", "verify", "--public-key", publicKey, "--against", "missing.json"] + db, in: directory.path), contains: "no such file")
        await expectOneLineError(try AdminProcess.admin(["audit", "checkpoint", "--export", "cp1.json"] + db, in: directory.path), contains: "already exists")
    }

    @Test("Foundation's errors and SQL text never reach the operator: a config file that cannot be read or parsed, a write the database refuses")
    func errorsInOurWords() async throws {
        let (directory, db) = try await freshDatabase()
        defer { directory.remove() }
        try "{bad".write(toFile: directory.file("bad.json"), atomically: true, encoding: .utf8)
        let badJSON = try await AdminProcess.admin(["photos", "list", "--config", "bad.json"] + db, in: directory.path)
        expectOneLineError(badJSON, contains: "config file bad.json is not valid JSON (around character 1)")
        try FileManager.default.createDirectory(atPath: directory.file("config.json"), withIntermediateDirectories: false)
        await expectOneLineError(try AdminProcess.admin(["photos", "list", "--config", "config.json"] + db, in: directory.path), contains: "config file config.json cannot be read")
        try "[1]".write(toFile: directory.file("array.json"), atomically: true, encoding: .utf8)
        await expectOneLineError(try AdminProcess.admin(["photos", "list", "--config", "array.json"] + db, in: directory.path), contains: "not a JSON object of settings")
        for leak in ["NSCocoaErrorDomain", "Code=", "Error Domain"] { #expect(!badJSON.output.contains(leak), "\(badJSON.output)") }
    }

    @Test("a negative price or limit is refused by its rule, in its words, not as a missing value")
    func negativePrice() async throws {
        let (directory, db) = try await freshDatabase()
        defer { directory.remove() }
        let refused = try await AdminProcess.admin(["photos", "add", "--title", "A", "--price", "-1"] + db, in: directory.path)
        expectOneLineError(refused, contains: #"invalid price "-1""#)
        #expect(!refused.stderr.contains("Missing value"))
        let listed = try await AdminProcess.admin(["photos", "list", "--format", "json"] + db, in: directory.path)
        #expect(!listed.stdout.contains("\"A\""), "nothing added: \(listed.stdout)")
        for command in [["photos", "list", "--limit", "-5"], ["users", "list", "--limit", "-5"], ["report", "funnel", "--days", "-3"]] {
            let negative = try await AdminProcess.admin(command + db, in: directory.path)
            expectOneLineError(negative, contains: "must be between 1 and")
        }
    }

    @Test("a read-only database lists, and a write to it fails in one line of our words with nothing changed")
    func readOnlyDatabase() async throws {
        let (directory, db) = try await freshDatabase()
        defer { directory.remove() }
        await #expect(try AdminProcess.admin(["photos", "add", "--title", "A", "--price", "1.00"] + db, in: directory.path).status == 0)
        // root writes any file: as root, the commands run as `nobody`, from a copy of the binary
        // it may execute, on files it owns but may not write.
        let asRoot = getuid() == 0
        var admin = BuiltProducts.binDirectory + "/photos-admin"
        if asRoot {
            admin = directory.file("photos-admin")
            // Copied by another process: a file this one held open for writing would be
            // inherited by any child another test forks meanwhile, and executing it would then
            // fail with "Text file busy" for as long as that child lives.
            let copied = try await runProcess("/bin/cp", [BuiltProducts.binDirectory + "/photos-admin", admin], in: directory.path)
            try #require(copied.status == 0, "\(copied.output)")
            let nobody = try #require(getpwnam("nobody")).pointee
            chown(directory.path, nobody.pw_uid, nobody.pw_gid)
            chmod(directory.path, 0o755)
            for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) { chown(directory.file(name), nobody.pw_uid, nobody.pw_gid) }
        }
        // A read-only file in a read-only directory (a backup's, a read-only mount): SQLite
        // cannot make the -shm file a WAL database is read through.
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) where name.hasPrefix("photos.db") {
            chmod(directory.file(name), 0o444)
        }
        chmod(directory.path, 0o555)
        defer { chmod(directory.path, 0o755) }
        let before = try Data(contentsOf: URL(fileURLWithPath: db[1]))
        func run(_ arguments: [String]) async throws -> ProcessResult {
            await asRoot ? try runProcess("/usr/sbin/runuser", ["-u", "nobody", "--", admin] + arguments, in: directory.path)
                : try runProcess(admin, arguments, in: directory.path)
        }
        for _ in 0..<2 {
            let listed = try await run(["photos", "list"] + db)
            #expect(listed.status == 0, "\(listed.output)")
            #expect(listed.stdout.contains("A"))
        }
        await #expect(try run(["users", "list"] + db).status == 0)
        await #expect(try run(["audit"] + db).status == 0)
        let added = try await run(["photos", "add", "--title", "B", "--price", "1.00"] + db)
        expectOneLineError(added, contains: "attempt to write a readonly database")
        #expect(added.stderr.contains("nothing of this command was committed"), "\(added.stderr)")
        for leak in ["(in:", "INSERT ", "SQLite error 8:"] { #expect(!added.stderr.contains(leak), "\(added.stderr)") }
        #expect(try Data(contentsOf: URL(fileURLWithPath: db[1])) == before)
    }

    @Test("operators add, list and remove: password from stdin only, a role required, one line per refusal")
    func operators() async throws {
        let (directory, db) = try await freshDatabase()
        defer { directory.remove() }
        let added = try await AdminProcess.admin(["operators", "add", "vera", "--role", "viewer", "--password-stdin"] + db, stdin: "watching closely\n", in: directory.path)
        #expect(added.status == 0 && added.stdout == "added operator vera (viewer)\n", "\(added.output)")
        await #expect(try AdminProcess.admin(["operators", "add", "otto", "--role", "operator", "--password-stdin"] + db, stdin: "acting carefully", in: directory.path).status == 0)
        let listed = try await AdminProcess.admin(["operators", "list", "--format", "json"] + db, in: directory.path)
        let rows = (try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any])?["operators"] as? [[String: Any]]
        #expect(rows?.map { "\($0["name"] ?? "")=\($0["role"] ?? "")" } == ["otto=operator", "vera=viewer"])
        #expect(!listed.stdout.contains("password") && !listed.stdout.contains("$2"))
        await expectOneLineError(try AdminProcess.admin(["operators", "add", "vera", "--role", "viewer", "--password-stdin"] + db, stdin: "another one", in: directory.path), contains: "operator vera already exists")
        await expectOneLineError(try AdminProcess.admin(["operators", "add", "zed", "--role", "admin", "--password-stdin"] + db, stdin: "a password", in: directory.path), contains: "admin")
        await expectOneLineError(try AdminProcess.admin(["operators", "add", "zed", "--role", "viewer"] + db, in: directory.path), contains: "--password-stdin is required")
        await expectOneLineError(try AdminProcess.admin(["operators", "remove", "nobody"] + db, in: directory.path), contains: "no operator nobody")
        let removed = try await AdminProcess.admin(["operators", "remove", "otto"] + db, in: directory.path)
        #expect(removed.stdout == "removed operator otto; 0 console sessions ended\n", "\(removed.output)")
        let table = try await AdminProcess.admin(["operators", "list"] + db, in: directory.path)
        #expect(table.stdout.contains("vera") && !table.stdout.contains("otto"))
    }

    @Test("bad input: one clear line on stderr, non-zero exit, nothing written")
    func badInput() async throws {
        let (directory, db) = try await freshDatabase()
        defer { directory.remove() }
        try "title,url,price\ngood,,1.00\n\"broken,,2\n".write(toFile: directory.file("bad.csv"), atomically: true, encoding: .utf8)
        try "[{\"title\": \"x\", \"price\": \"1.00\"}, {\"title\": 5}]".write(toFile: directory.file("bad.json"), atomically: true, encoding: .utf8)
        try "[{\"title\": \"x\", ".write(toFile: directory.file("truncated.json"), atomically: true, encoding: .utf8)
        _ = try await AdminProcess.admin(["users", "add", "alice", "--password-stdin"] + db, stdin: "correct horse", in: directory.path)
        let before = try Data(contentsOf: URL(fileURLWithPath: db[1]))

        await expectOneLineError(try AdminProcess.admin(["photos", "import", "bad.csv"] + db, in: directory.path), contains: "bad.csv:3: malformed CSV")
        await expectOneLineError(try AdminProcess.admin(["photos", "import", "bad.json"] + db, in: directory.path), contains: "element 2")
        await expectOneLineError(try AdminProcess.admin(["photos", "import", "truncated.json"] + db, in: directory.path), contains: "malformed JSON")
        await expectOneLineError(try AdminProcess.admin(["photos", "import", "missing.csv"] + db, in: directory.path), contains: "missing.csv: no such file")
        await expectOneLineError(try AdminProcess.admin(["purchase", "nobody", "1"] + db, in: directory.path), contains: "no user named nobody")
        await expectOneLineError(try AdminProcess.admin(["sign-in", "nobody"] + db, in: directory.path), contains: "no user named nobody")
        await expectOneLineError(try AdminProcess.admin(["users", "add", "alice", "--password-stdin"] + db, stdin: "another pw", in: directory.path), contains: "user alice already exists")
        await expectOneLineError(try AdminProcess.admin(["photos", "add", "--title", "x", "--price", "2.555"] + db, in: directory.path), contains: "invalid price")
        await expectOneLineError(try AdminProcess.admin(["purchase", "alice", "notanumber"] + db, in: directory.path), contains: "photo")

        let photos = try await AdminProcess.admin(["photos", "list", "--format", "json"] + db, in: directory.path)
        let page = try JSONSerialization.jsonObject(with: Data(photos.stdout.utf8)) as? [String: Any]
        #expect((page?["photos"] as? [Any])?.isEmpty == true)
        #expect(page?["nextAfter"] is NSNull)
        let verify = try await AdminProcess.admin(["audit", "verify"] + db, in: directory.path)
        #expect(verify.stdout.contains("1 row verified"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: db[1])) == before, "the database file changed")
    }

    @Test("--db and --config stand before or after the subcommand, as with git")
    func globalOptionsAnywhere() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let db = directory.file("x.db")
        await #expect(try AdminProcess.admin(["migrate", "--db", db], in: directory.path).status == 0)
        await #expect(try AdminProcess.admin(["--db", db, "photos", "add", "--title", "Front", "--price", "1"], in: directory.path).status == 0)
        await #expect(try AdminProcess.admin(["photos", "--db", db, "add", "--title", "Middle", "--price", "1"], in: directory.path).status == 0)
        await #expect(try AdminProcess.admin(["photos", "add", "--title", "Back", "--price", "1", "--db", db], in: directory.path).status == 0)
        let listed = try await AdminProcess.admin(["--db", db, "photos", "list"], in: directory.path)
        #expect(listed.status == 0, "\(listed.output)")
        #expect(["Front", "Middle", "Back"].allSatisfy { listed.stdout.contains($0) })
        let users = try await AdminProcess.admin(["--db", db, "users", "list"], in: directory.path)
        #expect(users.status == 0, "\(users.output)")
        try #"{"database": {"path": "\#(db)"}}"#.write(toFile: directory.file("c.json"), atomically: true, encoding: .utf8)
        let configured = try await AdminProcess.admin(["--config", directory.file("c.json"), "photos", "list"], in: directory.path)
        #expect(configured.stdout.contains("Front"), "\(configured.output)")
        await expectOneLineError(try AdminProcess.admin([], in: directory.path), contains: "missing subcommand (migrate, photos, users")
        await expectOneLineError(try AdminProcess.admin(["--db", db, "photos"], in: directory.path), contains: "missing subcommand (add, import, list)")
    }

    @Test("listings say how to get the next page: a line on stderr, or nextAfter in JSON")
    func nextPage() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let db = ["--db", directory.file("x.db")]
        await #expect(try AdminProcess.admin(["migrate"] + db, in: directory.path).status == 0)
        for title in ["One", "Two", "Three"] {
            await #expect(try AdminProcess.admin(["photos", "add", "--title", title, "--price", "1"] + db, in: directory.path).status == 0)
        }
        let first = try await AdminProcess.admin(["photos", "list", "--limit", "2"] + db, in: directory.path)
        #expect(first.stdout.contains("One") && first.stdout.contains("Two") && !first.stdout.contains("Three"))
        #expect(first.stderr == "more photos: photos-admin photos list --after 2\n")
        let last = try await AdminProcess.admin(["photos", "list", "--limit", "2", "--after", "2"] + db, in: directory.path)
        #expect(last.stdout.contains("Three") && last.stderr.isEmpty)
        let json = try await AdminProcess.admin(["photos", "list", "--limit", "2", "--format", "json"] + db, in: directory.path)
        let page = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        #expect((page?["photos"] as? [Any])?.count == 2)
        #expect(page?["nextAfter"] as? Int == 2)
        #expect(json.stderr.isEmpty, "JSON output carries the cursor itself")
        for name in ["ann", "ben"] {
            await #expect(try AdminProcess.admin(["users", "add", name, "--password-stdin"] + db, stdin: "password123", in: directory.path).status == 0)
        }
        let users = try await AdminProcess.admin(["users", "list", "--limit", "1"] + db, in: directory.path)
        #expect(users.stderr == "more users: photos-admin users list --after 1\n")
    }

    @Test("refusals: not a database, database newer than the binary")
    func refusals() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try String(repeating: "plain text, not SQLite\n", count: 200).write(toFile: directory.file("notes.db"), atomically: true, encoding: .utf8)
        await expectOneLineError(try AdminProcess.admin(["migrate", "--db", directory.file("notes.db")], in: directory.path), contains: "is not a SQLite database")
        let db = directory.file("photos.db")
        await #expect(try AdminProcess.admin(["migrate", "--db", db], in: directory.path).status == 0)
        _ = try await AdminProcess.shell("sqlite3 \(db) \"INSERT INTO schema_migrations VALUES (999, '0999_future.sql', 'x', 'now')\"", in: directory.path)
        await expectOneLineError(try AdminProcess.admin(["photos", "list", "--db", db], in: directory.path), contains: "database schema version 999 is newer than this binary")
    }
}
