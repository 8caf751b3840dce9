import AuditTrail
import Configuration
import DatabaseAccess
import Foundation
@testable import PhotosCore
import PhotosModel
import PhotosTestSupport
import Testing

@Suite("Configuration")
struct ConfigurationTests {
    static let shippedFile = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("config/photosd.json").path

    @Test("config/photosd.json holds exactly the built-in defaults")
    func shippedFileEqualsDefaults() async throws {
        var loaded = try await PhotosConfiguration.load(filePath: Self.shippedFile, environment: [:])
        // Where it was read from is not a setting.
        #expect(loaded.filePath == Self.shippedFile)
        loaded.filePath = nil
        #expect(loaded == PhotosConfiguration())
    }

    @Test("config/photosd.json lists every setting the configuration reads, and no other")
    func shippedFileListsEveryKey() throws {
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: Self.shippedFile)))
        func keys(_ value: Any, _ prefix: String) -> [String] {
            guard let object = value as? [String: Any] else { return [prefix] }
            return object.flatMap { keys($0.value, prefix.isEmpty ? $0.key : prefix + "." + $0.key) }
        }
        let inFile = Set(keys(object, ""))
        let read = Set(PhotosConfiguration.defaultValues.keys.map { $0.components.joined(separator: ".") })
        #expect(inFile.subtracting(read).isEmpty, "in the file but never read: \(inFile.subtracting(read).sorted())")
        #expect(read.subtracting(inFile).isEmpty, "read but missing from the file: \(read.subtracting(inFile).sorted())")
    }

    @Test("docs/configuration.md's table is the settings table: every key once, with its default and its environment variable")
    func documentedTable() throws {
        let root = URL(fileURLWithPath: Self.shippedFile).deletingLastPathComponent().deletingLastPathComponent()
        let doc = try String(contentsOf: root.appendingPathComponent("docs/configuration.md"), encoding: .utf8)
        var rows: [String: (default: String, environment: String)] = [:]
        for line in doc.split(separator: "\n") where line.hasPrefix("| `") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count > 4 else { continue }
            let key = cells[1].trimmingCharacters(in: CharacterSet(charactersIn: "`"))
            #expect(rows[key] == nil, "\(key) twice")
            rows[key] = (cells[2], cells[3])
        }
        let read = PhotosConfiguration.defaultValues.mapValues(\.content)
        let keys = Set(read.keys.map { $0.components.joined(separator: ".") })
        #expect(Set(rows.keys) == keys, "documented only: \(Set(rows.keys).subtracting(keys).sorted()); read only: \(keys.subtracting(rows.keys).sorted())")
        for (key, content) in read {
            let name = key.components.joined(separator: ".")
            guard let row = rows[name] else { continue }
            // PHOTOSD_ + the key path in upper snake case.
            let snake = key.components.map { $0.replacing(/([a-z0-9])([A-Z])/) { "\($0.1)_\($0.2)" }.uppercased() }.joined(separator: "_")
            #expect(row.environment.hasPrefix("`PHOTOSD_\(snake)`"), "\(name): \(row.environment), expected PHOTOSD_\(snake)")
            let shown: String = switch content {
            case .string(let value): value
            case .int(let value): "\(value)"
            case .bool(let value): "\(value)"
            case .stringArray(let value): "[" + value.map { "\"\($0)\"" }.joined(separator: ", ") + "]"
            default: "?"
            }
            // The cell's first code span (a note in words may follow it).
            let documented = row.default.firstMatch(of: /^`([^`]*)`/).map { String($0.1) } ?? row.default
            // An empty string is written `""`.
            #expect(documented == shown || (shown.isEmpty && documented == "\"\""), "\(name): documented default \(row.default), the code's \(shown)")
        }
    }

    @Test("environment variables override the file; flags override both")
    func overrides() async throws {
        let loaded = try await PhotosConfiguration.load(
            filePath: Self.shippedFile,
            environment: ["PHOTOSD_SERVER_PORT": "9090", "PHOTOSD_DATABASE_PATH": "/tmp/x.db", "PHOTOSD_DATABASE_DURABILITY": "normal"],
            overrides: ["server.port": .init(.int(7070), isSecret: false)])
        #expect(loaded.port == 7070)
        #expect(loaded.databasePath == "/tmp/x.db")
        #expect(loaded.durability == .normal)
    }

    @Test("bad values give a clear error naming the setting")
    func badValues() async throws {
        await #expect(throws: PhotosError.badRequest("configuration server.port must be an integer (from the environment: PHOTOSD_SERVER_PORT)")) {
            try await PhotosConfiguration.load(filePath: Self.shippedFile, environment: ["PHOTOSD_SERVER_PORT": "eighty"])
        }
        await #expect(throws: PhotosError.self) {
            try await PhotosConfiguration.load(filePath: Self.shippedFile, environment: ["PHOTOSD_DATABASE_DURABILITY": "sometimes"])
        }
        await #expect(throws: PhotosError.self) {
            try await PhotosConfiguration.load(filePath: "/nonexistent/photosd.json", environment: [:])
        }
    }

    @Test("a bad value's error says where it came from: a flag, the environment (named), the config file (named), or nothing for a default")
    func badValueSource() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = directory.file("photosd.json")
        try #"{"auth": {"signInMaxAttempts": "many"}}"#.write(toFile: file, atomically: true, encoding: .utf8)
        do {
            _ = try await PhotosConfiguration.load(filePath: file, environment: [:])
            Issue.record("a string for an integer was taken")
        } catch let error as PhotosError {
            #expect(error.message == "configuration auth.signInMaxAttempts must be an integer (from config file \(file))")
        }
        do {
            _ = try await PhotosConfiguration.load(filePath: Self.shippedFile, environment: ["PHOTOSD_AUTH_SIGN_IN_MAX_ATTEMPTS": "many"])
            Issue.record("a string for an integer was taken")
        } catch let error as PhotosError {
            #expect(error.message.hasSuffix("(from the environment: PHOTOSD_AUTH_SIGN_IN_MAX_ATTEMPTS)"), "\(error.message)")
        }
        do {
            _ = try await PhotosConfiguration.load(filePath: Self.shippedFile, environment: [:], overrides: ["server.port": .init(.int(70_000), isSecret: false)])
            Issue.record("port 70000 was taken")
        } catch let error as PhotosError {
            #expect(error.message.hasSuffix("(from a command-line flag)"), "\(error.message)")
        }
        #expect(PhotosConfiguration.environmentVariable(for: "tracing.otlpEndpoint") == "PHOTOSD_TRACING_OTLP_ENDPOINT")
    }
    @Test("audit.witnesses: an array of objects in the file, its JSON text in PHOTOSD_AUDIT_WITNESSES; each bad entry refused naming it; the quorum defaults to all")
    func witnesses() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let key = CosignerKey(name: "w.example/1", publicKey: Array(repeating: 7, count: 32)).description
        let other = CosignerKey(name: "w.example/2", publicKey: Array(repeating: 9, count: 32)).description
        let file = directory.file("photosd.json")
        try #"{"audit": {"witnesses": [{"name": "one", "url": "https://w1.example/prefix", "key": "KEY"}, {"name": "two", "url": "http://127.0.0.1:9", "key": "OTHER"}]}}"#
            .replacingOccurrences(of: "KEY", with: key).replacingOccurrences(of: "OTHER", with: other)
            .write(toFile: file, atomically: true, encoding: .utf8)
        let loaded = try await PhotosConfiguration.load(filePath: file, environment: [:])
        #expect(loaded.auditWitnesses == [WitnessEndpoint(name: "one", url: "https://w1.example/prefix", key: key), WitnessEndpoint(name: "two", url: "http://127.0.0.1:9", key: other)])
        #expect(loaded.warnings.isEmpty, "\(loaded.warnings)")
        #expect(loaded.resolvedWitnessQuorum == 2 && loaded.auditWitnesses[0].addCheckpointURL == "https://w1.example/prefix/add-checkpoint")
        let fromEnvironment = try await PhotosConfiguration.load(filePath: Self.shippedFile, environment: [
            "PHOTOSD_AUDIT_WITNESSES": #"[{"name": "one", "url": "http://w/", "key": "\#(key)"}]"#, "PHOTOSD_AUDIT_WITNESS_QUORUM": "1",
        ])
        #expect(fromEnvironment.auditWitnesses.map(\.name) == ["one"] && fromEnvironment.resolvedWitnessQuorum == 1)
        #expect(fromEnvironment.auditWitnesses[0].addCheckpointURL == "http://w/add-checkpoint")
        let noteKey = SignedNote.VerifierKey(name: "w.example/1", publicKey: Array(repeating: 7, count: 32)).description
        let refusals: [(String, String)] = [
            ("{}", "must be a list"),
            (#"[{"name": "one", "url": "http://w"}]"#, "[0].key (one) must be the witness's cosigner key"),
            (#"[{"name": "one", "url": "http://w", "key": "\#(noteKey)"}]"#, "[0].key (one) must be the witness's cosigner key"),
            (#"[{"name": "one", "url": "ftp://w", "key": "\#(key)"}]"#, "[0].url (one) must be"),
            (#"[{"name": "", "url": "http://w", "key": "\#(key)"}]"#, "[0].name must be"),
            (#"[{"name": "one", "url": "http://w", "key": "\#(key)", "quorum": 1}]"#, "[0] has quorum"),
            (#"[{"name": "one", "url": "http://w", "key": "\#(key)"}, {"name": "one", "url": "http://v", "key": "\#(other)"}]"#, "names one twice"),
            (#"[{"name": "one", "url": "http://w", "key": "\#(key)"}, {"name": "two", "url": "http://v", "key": "\#(key)"}]"#, "lists the key of two twice"),
        ]
        for (value, message) in refusals {
            await #expect(throws: PhotosError.self, "\(value)") {
                do {
                    _ = try await PhotosConfiguration.load(filePath: Self.shippedFile, environment: ["PHOTOSD_AUDIT_WITNESSES": value])
                } catch let error as PhotosError {
                    #expect(error.message.contains(message) && error.message.hasSuffix("(from the environment: PHOTOSD_AUDIT_WITNESSES)"), "\(error.message)")
                    throw error
                }
            }
        }
        // A quorum above the witnesses' count cannot be met.
        await #expect(throws: PhotosError.badRequest("configuration audit.witnessQuorum = 3 is out of range 0…2 (from the environment: PHOTOSD_AUDIT_WITNESS_QUORUM)")) {
            try await PhotosConfiguration.load(filePath: file, environment: ["PHOTOSD_AUDIT_WITNESS_QUORUM": "3"])
        }
    }
    @Test("0.0.0.0/0 or ::/0 as trusted proxies is taken, with a warning naming the setting; a proxy's own address is not")
    func trustEveryone() async throws {
        let everyone = try await PhotosConfiguration.load(filePath: Self.shippedFile, environment: [
            "PHOTOSD_SERVER_TRUSTED_PROXIES": "10.0.0.1, 0.0.0.0/0", "PHOTOSD_CONSOLE_TRUSTED_PROXIES": "::/0",
        ])
        #expect(everyone.warnings.count == 2, "\(everyone.warnings)")
        #expect(everyone.warnings.first?.hasPrefix("configuration server.trustedProxies includes 0.0.0.0/0, which is every address") == true, "\(everyone.warnings)")
        #expect(everyone.warnings.last?.hasPrefix("configuration console.trustedProxies includes ::/0") == true, "\(everyone.warnings)")
        let one = try await PhotosConfiguration.load(filePath: Self.shippedFile, environment: ["PHOTOSD_SERVER_TRUSTED_PROXIES": "10.0.0.0/8, 127.0.0.1"])
        #expect(one.warnings.isEmpty, "\(one.warnings)")
    }
}
