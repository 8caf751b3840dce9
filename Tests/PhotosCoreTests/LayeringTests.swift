import Foundation
import Testing

/// The storage seam holds: services, navigation and the HTTP layer see `DatabaseAccess` only, and
/// what differs between the engines is a capability of the store, never a test of its dialect.
/// (`MemberImportVisibility` keeps each file's imports honest; this keeps the imports themselves
/// to the layering.)
@Suite("Layering")
struct LayeringTests {
    static let sources = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources").path

    /// Where a database is opened and migrated (and the application wired): the only places
    /// outside the stores that may name a store's module or read the dialect.
    static let compositionRoots = ["PhotosStorage/", "PhotosServer/Application/Application+build.swift"]

    /// The swift files of `modules`, as (path relative to Sources, text).
    func files(in modules: [String], atLeast minimum: Int = 20) throws -> [(String, String)] {
        var found: [(String, String)] = []
        for module in modules {
            let root = Self.sources + "/" + module
            guard let walker = FileManager.default.enumerator(atPath: root) else { continue }
            for case let name as String in walker where name.hasSuffix(".swift") {
                found.append((module + "/" + name, try String(contentsOfFile: root + "/" + name, encoding: .utf8)))
            }
        }
        #expect(found.count >= minimum, "expected the sources under \(Self.sources)")
        return found
    }

    @Test("services, sessions, navigation and the HTTP layer import no store and test no dialect")
    func oneSeam() throws {
        let layered = ["PhotosModel", "Navigation", "AuditTrail", "PhotosCore", "Sessions", "PhotosServer", "PhotosConsole"]
        var offences: [String] = []
        for (path, text) in try files(in: layered) where !Self.compositionRoots.contains(where: { path.hasPrefix($0) }) {
            for line in text.split(separator: "\n") {
                let code = line.trimmingCharacters(in: .whitespaces)
                if code.hasPrefix("//") { continue }
                if ["import SQLiteStore", "import PostgresStore", "import PostgresNIO", "import CSQLite"].contains(where: { code.hasSuffix($0) })
                    || code.contains("@_exported") || code.contains(".dialect") || code.contains("as? SQLiteDatabase")
                    || code.contains("as? PostgresStorage") || code.contains("as? Connection") {
                    offences.append("\(path): \(code)")
                }
            }
        }
        #expect(offences.isEmpty, "\(offences.joined(separator: "\n"))")
    }

    @Test("no thread is held waiting for PostgreSQL: no EventLoopFuture.wait() and no pool of blocking threads outside SQLite's own")
    func nothingWaitsForTheServer() throws {
        // SQLite's writer and readers block their own threads by design (its calls block); every
        // other module awaits. `await x.wait()` (an async wait) is not a blocked thread.
        let modules = ["DatabaseAccess", "PostgresStore", "PhotosModel", "Navigation", "AuditTrail", "PhotosCore", "Sessions", "PhotosStorage",
                       "PhotosServer", "PhotosConsole", "photosd", "photos-admin"]
        var offences: [String] = []
        for (path, text) in try files(in: modules) {
            for line in text.split(separator: "\n") {
                let code = line.trimmingCharacters(in: .whitespaces)
                if code.hasPrefix("//") || code.hasPrefix("///") { continue }
                if (code.contains(".wait()") && !code.contains("await")) || code.contains("NIOThreadPool") || code.contains("DispatchSemaphore")
                    || code.contains("NSCondition") {
                    offences.append("\(path): \(code)")
                }
            }
        }
        #expect(offences.isEmpty, "\(offences.joined(separator: "\n"))")
    }

    @Test("the audit trail is a module of its own: it imports no service, session or server module, and its types are defined nowhere else")
    func auditTrailModule() throws {
        // What the trail may build on: the model, the storage contract and crypto. The services
        // write through it; it never calls them back.
        let allowed: Set<String> = ["Crypto", "DatabaseAccess", "Foundation", "PhotosModel", "Synchronization"]
        for (path, text) in try files(in: ["AuditTrail"], atLeast: 10) {
            for line in text.split(separator: "\n") where line.hasPrefix("import ") {
                let module = String(line.dropFirst("import ".count))
                #expect(allowed.contains(module), "\(path) imports \(module)")
            }
        }
        // The trail's own types live in AuditTrail only (PhotosCore was a drawer that held them).
        let trailTypes = ["AuditChains", "AuditTrailWriter", "AuditVerifier", "AuditArchiver", "AuditArchiveFile", "AuditCheckpoint",
                          "AuditCheckpoints", "AuditSigningKey", "AuditPublicKey", "AuditService", "CoveredHeads"]
        let elsewhere = ["PhotosModel", "PhotosCore", "Sessions", "PhotosStorage", "PhotosServer", "PhotosConsole", "photos-admin"]
        for (path, text) in try files(in: elsewhere) {
            for line in text.split(separator: "\n") {
                let code = line.trimmingCharacters(in: .whitespaces)
                for name in trailTypes {
                    for kind in ["struct ", "enum ", "final class ", "class ", "actor "]
                    where code.contains(kind + name + " ") || code.contains(kind + name + ":") || code.contains(kind + name + "<") {
                        Issue.record("\(path) defines \(name), a type of the audit trail: \(code)")
                    }
                }
            }
        }
    }

    @Test("the session routes are authorized in one place: the route group's middleware, not by each handler")
    func sessionRoutesAuthorizedOnce() throws {
        let routes = try files(in: ["PhotosServer"]).filter { $0.0.contains("/Routes/") }
        for (path, text) in routes {
            #expect(!text.contains(".authorize("), "\(path) authorizes a session by hand")
            #expect(!text.contains("router.on(\"/v1/sessions/:id"), "\(path) adds a session route outside the authorized group")
        }
    }

    @Test("Navigation, the pure core, imports no storage module at all")
    func pureCore() throws {
        for (path, text) in try files(in: ["Navigation", "PhotosModel"]) {
            #expect(!text.contains("import DatabaseAccess"), "\(path) imports DatabaseAccess")
            #expect(!text.contains("import Sessions"), "\(path) imports Sessions")
        }
    }

    @Test("PhotosModel and Navigation import no package, and PhotosClientTesting only the client's: an app's tests resolve nothing of the server's")
    func clientTestingStaysClientSide() throws {
        let allowed: [String: Set<String>] = [
            "PhotosModel": ["Foundation"],
            "Navigation": ["Foundation", "PhotosModel"],
            "PhotosClientTesting": ["Foundation", "HTTPTypes", "OpenAPIRuntime", "PhotosClient", "Navigation", "PhotosModel"],
        ]
        for (module, modules) in allowed {
            for (path, text) in try files(in: [module], atLeast: 2) {
                for line in text.split(separator: "\n") where line.hasPrefix("import ") {
                    let imported = String(line.dropFirst("import ".count)).trimmingCharacters(in: .whitespaces)
                    #expect(modules.contains(imported), "\(path) imports \(imported)")
                }
            }
        }
    }

    @Test("the navigation core takes its clock and its randomness as inputs: no Date(), no ISO8601Timestamp.now(), no SecureToken.random, no .random(")
    func pureCoreHasNoClockOrDice() throws {
        // A decision is a function of (state, action, facts): the time and any new token come in
        // the facts (`SessionFacts.now`, `newToken`), so replay and the randomized tests decide
        // exactly as the server did.
        let forbidden = ["Date()", "Date.now", "ISO8601Timestamp.now()", "SecureToken.random", ".random(", "UUID()"]
        for (path, text) in try files(in: ["Navigation"], atLeast: 10) {
            for line in text.split(separator: "\n") where !line.trimmingCharacters(in: .whitespaces).hasPrefix("//") {
                for call in forbidden where line.contains(call) {
                    Issue.record("\(path) calls \(call): \(line.trimmingCharacters(in: .whitespaces))")
                }
            }
        }
    }

    @Test("the sessions layer holds no SQL and no store cast: what it asks of a store is the action contract")
    func sessionsHoldNoSQL() throws {
        // String literals only (comments may name SQL): a keyword of a statement, a cast to a
        // store or a store capability, a dialect test.
        let keywords = ["SELECT ", "INSERT ", "UPDATE ", "DELETE ", " FROM ", " WHERE ", "WITH ", "RETURNING", "ON CONFLICT", "::"]
        let casts = ["as? any ", "as! any ", "as? SingleStatementStore", "SingleStatementStore", "GroupCommitStore", "rowLockClause", ".dialect"]
        var offences: [String] = []
        for (path, text) in try files(in: ["Sessions"], atLeast: 5) {
            for line in text.split(separator: "\n") {
                let code = line.trimmingCharacters(in: .whitespaces)
                if code.hasPrefix("//") { continue }
                for literal in Self.stringLiterals(in: code) where keywords.contains(where: { literal.contains($0) }) {
                    offences.append("\(path): SQL in \"\(literal)\"")
                }
                for cast in casts where code.contains(cast) { offences.append("\(path): \(code)") }
            }
        }
        #expect(offences.isEmpty, "\(offences.joined(separator: "\n"))")
    }

    @Test("the action write is one SQL text per store: DatabaseAccess holds the contract and no statement of it, PostgreSQL's locked path runs the same prepared statements")
    func oneActionWritePerStore() throws {
        // The action's own statements: the session's conditional update and the effects.
        let actionSQL = ["UPDATE sessions SET", "INSERT INTO purchases", "INSERT INTO tokens", "INSERT INTO idempotency_keys"]
        func offences(in modules: [String], atLeast minimum: Int) throws -> [String] {
            var found: [String] = []
            for (path, text) in try files(in: modules, atLeast: minimum) {
                for line in text.split(separator: "\n") where !line.trimmingCharacters(in: .whitespaces).hasPrefix("//") {
                    for statement in actionSQL where line.contains(statement) { found.append("\(path): \(statement)") }
                }
            }
            return found
        }
        #expect(try offences(in: ["DatabaseAccess"], atLeast: 5).isEmpty, "the contract module writes no action")
        let sqlite = try offences(in: ["SQLiteStore"], atLeast: 5)
        let postgres = try offences(in: ["PostgresStore"], atLeast: 5)
        // Each statement once per store, in one file each.
        #expect(Set(sqlite.map { $0.components(separatedBy: ":")[0] }) == ["SQLiteStore/SQLiteSessionActions.swift"], "\(sqlite)")
        #expect(sqlite.count == actionSQL.count, "\(sqlite)")
        #expect(Set(postgres.map { $0.components(separatedBy: ":")[0] }) == ["PostgresStore/SessionStatements.swift"], "\(postgres)")
        #expect(postgres.count == actionSQL.count, "\(postgres)")
        let locked = try String(contentsOfFile: Self.sources + "/PostgresStore/PostgresStorage+SessionActions.swift", encoding: .utf8)
        #expect(locked.contains("SessionStatements.write(write, on: transaction)") && locked.contains("SessionStatements.read(read, on: transaction)"))
    }

    @Test("rows are read by column name: no read of a result column by its position outside the tests")
    func rowsByName() throws {
        let positional = try Regex(#"\.(int|int64|string|blob|optionalInt|optionalInt64|optionalString)\([0-9]+\)"#)
        var offences: [String] = []
        let modules = try FileManager.default.contentsOfDirectory(atPath: Self.sources).filter { !$0.hasPrefix("C") && $0 != "PhotosClient" }
        for (path, text) in try files(in: modules) {
            for line in text.split(separator: "\n") where line.contains(positional) { offences.append("\(path): \(line.trimmingCharacters(in: .whitespaces))") }
        }
        #expect(offences.isEmpty, "\(offences.joined(separator: "\n"))")
    }

    @Test("services learn outcomes as values: no error caught by its code in the audit trail, the core services, the sessions or the server's services")
    func noCaughtCodes() throws {
        let caught = try Regex(#"catch\b.*\bwhere\b.*\.code\s*=="#)
        var offences: [String] = []
        for (path, text) in try files(in: ["AuditTrail", "PhotosCore", "Sessions", "PhotosServer/Services"]) {
            for line in text.split(separator: "\n") where line.contains(caught) {
                offences.append("\(path): \(line.trimmingCharacters(in: .whitespaces))")
            }
        }
        #expect(offences.isEmpty, "\(offences.joined(separator: "\n"))")
    }

    @Test("SQL is written with its values where they go: no ? or $n placeholder written by hand in the sources' SQL (the SQL value renders them)")
    func sqlValuesOnly() throws {
        // A placeholder: `?` or `$n` standing where a value goes (after a space, `(`, `=`, `,`,
        // a comparison; before a space, `)`, `,`, `;`, a cast or the end).
        let placeholder = try Regex(#"(^|[\s(=,<>])(\?[0-9]*|\$[0-9]+)(?=[\s),;]|::|$)"#)
        let sqlWord = try Regex(#"\b(SELECT|INSERT|UPDATE|DELETE|WHERE|VALUES|SET|AND|OR|IN|LIMIT)\b"#)
        // The raw peer is a plain SQLite program on purpose; migrations are scripts, bound nothing.
        let modules = try FileManager.default.contentsOfDirectory(atPath: Self.sources)
            .filter { !$0.hasPrefix("C") && !["photos-bench-peer", "SchemaMigrations"].contains($0) }
        var offences: [String] = []
        for (path, text) in try files(in: modules) {
            for literal in Self.literals(in: text) where literal.contains(sqlWord) && literal.contains(placeholder) {
                offences.append("\(path): \(literal.prefix(120))")
            }
        }
        #expect(offences.isEmpty, "\(offences.joined(separator: "\n"))")
    }

    /// The string literals of a Swift file, whole (a multi-line literal as one), with their
    /// interpolations left out.
    static func literals(in text: String) -> [String] {
        var literals: [String] = []
        let characters = Array(text)
        var index = 0
        var current = ""
        while index < characters.count {
            let character = characters[index]
            if character == "/", index + 1 < characters.count, characters[index + 1] == "/" {
                while index < characters.count, characters[index] != "\n" { index += 1 }
                continue
            }
            guard character == "\"" else { index += 1; continue }
            let multi = index + 2 < characters.count && characters[index + 1] == "\"" && characters[index + 2] == "\""
            index += multi ? 3 : 1
            current = ""
            while index < characters.count {
                let c = characters[index]
                if c == "\\", index + 1 < characters.count, characters[index + 1] == "(" {
                    // Skips the interpolation, nested parentheses and all.
                    var depth = 0
                    index += 1
                    repeat {
                        if characters[index] == "(" { depth += 1 } else if characters[index] == ")" { depth -= 1 }
                        index += 1
                    } while depth > 0 && index < characters.count
                    current.append(" ")
                    continue
                }
                if c == "\\" { index += 2; continue }
                if multi, c == "\"", index + 2 < characters.count, characters[index + 1] == "\"", characters[index + 2] == "\"" {
                    index += 3
                    break
                }
                if !multi, c == "\"" || c == "\n" { index += 1; break }
                current.append(c)
                index += 1
            }
            literals.append(current)
        }
        return literals
    }

    @Test("a coordinator's role is total: no optional field in a role or a flow, so nothing is re-defaulted where it is read")
    func totalRoles() throws {
        let text = try String(contentsOfFile: Self.sources + "/Navigation/Model/CoordinatorState.swift", encoding: .utf8)
        var offences: [String] = []
        for declaration in ["public enum Role", "public struct BuyFlow"] {
            let body = try #require(Self.body(of: declaration, in: text), "\(declaration) in CoordinatorState.swift")
            for line in body.split(separator: "\n") {
                let code = line.trimmingCharacters(in: .whitespaces)
                guard code.hasPrefix("case ") || code.hasPrefix("public var ") || code.hasPrefix("public let ") || code.hasPrefix("var ")
                    || code.hasPrefix("let ")
                else { continue }
                if code.contains("?") { offences.append("\(declaration): \(code)") }
            }
        }
        #expect(offences.isEmpty, "\(offences.joined(separator: "\n"))")
    }

    /// The text between the braces of `declaration`'s body (its first occurrence), nested bodies
    /// (methods, initializers) left out.
    static func body(of declaration: String, in text: String) -> String? {
        guard let start = (text.range(of: declaration + ":") ?? text.range(of: declaration + " "))?.upperBound, let open = text[start...].firstIndex(of: "{")
        else { return nil }
        var depth = 0
        var kept = ""
        for character in text[open...] {
            if character == "{" { depth += 1; if depth == 1 { continue } }
            if character == "}" { depth -= 1; if depth == 0 { return kept } }
            if depth == 1 { kept.append(character) }
        }
        return nil
    }

    /// The string literals of one line of Swift (multi-line literals' lines count as literals
    /// when they are inside one: the line itself is taken whole).
    static func stringLiterals(in line: String) -> [String] {
        if !line.contains("\"") { return [line] }
        var literals: [String] = []
        var current = ""
        var inside = false
        for character in line {
            if character == "\"" {
                if inside { literals.append(current) }
                inside.toggle()
                current = ""
            } else if inside {
                current.append(character)
            }
        }
        return literals
    }
}
