import Foundation
import HTTPTypes
import Hummingbird
import Logging
import Navigation
import PhotosCore
import PhotosStorage
import PhotosTestSupport
import SQLiteStore
@testable import PhotosServer
import Testing
import PhotosListener
import PhotosModel
import Sessions

@Suite("docs/openapi.yaml")
struct OpenAPITests {
    static let document = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("docs/openapi.yaml").path

    @Test("docs/openapi.yaml is a valid OpenAPI document (openapi-spec-validator), and no value YAML read as a stray key")
    func validDocument() async throws {
        // A description in a flow mapping with a comma in it ({description: a, b}) makes YAML
        // read "b" as a key without a value: the validator refuses such a document.
        let check = """
            import sys
            from openapi_spec_validator import validate
            from openapi_spec_validator.readers import read_from_filename
            document, _ = read_from_filename(sys.argv[1])
            validate(document)
            def nulls(value, path):
                if isinstance(value, dict):
                    for key, item in value.items():
                        if item is None: print("a key without a value: " + path + "/" + str(key))
                        nulls(item, path + "/" + str(key))
                elif isinstance(value, list):
                    for index, item in enumerate(value): nulls(item, path + "/" + str(index))
            nulls(document, "")
            """
        let python = PythonTools.command(["-c", check, Self.document])
        let result = try await runProcess(python.executable, python.arguments, in: "/")
        #expect(result.status == 0, "\(result.output.suffix(2_000))")
        #expect(result.stdout.isEmpty, "\(result.stdout)")
    }

    /// `METHOD /path/{param}` for every operation under `paths:`.
    static func documentedOperations() throws -> Set<String> {
        let text = try String(contentsOfFile: document, encoding: .utf8)
        var operations = Set<String>()
        var inPaths = false
        var currentPath: String?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line == "paths:" { inPaths = true; continue }
            if inPaths, let first = line.first, first != " ", first != "#" { inPaths = false }
            guard inPaths else { continue }
            if line.hasPrefix("  /"), line.hasSuffix(":"), !line.hasPrefix("   ") {
                currentPath = String(line.dropFirst(2).dropLast())
            } else if let currentPath, line.hasPrefix("    "), !line.hasPrefix("     "), line.hasSuffix(":") {
                let method = line.trimmingCharacters(in: .whitespaces).dropLast().uppercased()
                if ["GET", "POST", "PUT", "PATCH", "DELETE"].contains(method) { operations.insert("\(method) \(currentPath)") }
            }
        }
        return operations
    }

    @Test("every route the router serves is in the document, and vice versa")
    func routesMatchDocument() async throws {
        let served = try await Self.servedRoutes()
        let documented = try Self.documentedOperations()
        #expect(served.count == 16)  // /metrics is the metrics listener's, not the API's
        #expect(served.subtracting(documented) == [], "served but not documented")
        #expect(documented.subtracting(served) == [], "documented but not served")
    }

    @Test("docs/api.md's table of routes names every route the router serves, and no other (the metrics listener's /metrics aside)")
    func routesMatchAPIPage() async throws {
        let served = try await Self.servedRoutes()
        let page = try String(contentsOfFile: Self.document.replacingOccurrences(of: "openapi.yaml", with: "api.md"), encoding: .utf8)
        // Each table row's first cell: one or more `METHOD /path?query` in backticks.
        var listed = Set<String>()
        for line in page.split(separator: "\n") where line.hasPrefix("| `") {
            let cell = line.dropFirst(2).prefix { $0 != "|" }
            for match in cell.matches(of: /`(GET|POST|PUT|PATCH|DELETE) (\/[^`?]*)[^`]*`/) {
                listed.insert("\(match.1) \(match.2)")
            }
        }
        listed.remove("GET /metrics")
        // A path parameter's name is the page's prose (`{id}` for `{photoId}`): compared without it.
        func shape(_ routes: Set<String>) -> Set<String> { Set(routes.map { $0.replacing(/\{[A-Za-z]+\}/, with: "{}") }) }
        #expect(shape(served).subtracting(shape(listed)) == [], "served but not in docs/api.md's table")
        #expect(shape(listed).subtracting(shape(served)) == [], "in docs/api.md's table but not served")
    }

    /// `METHOD /path/{param}` for every route the API's router serves (Hummingbird's own list).
    static func servedRoutes() async throws -> Set<String> {
        let h = try await ServerHarness.make()
        defer { h.close() }
        let database = try PhotosDatabase.open(path: h.configuration.databasePath)
        defer { database.close() }
        let api = PhotosAPI(
            services: try PhotosServices(configuration: h.configuration, database: database), bodyLimit: h.configuration.maxBodyBytes,
            metrics: .shared, storage: StorageHealth(logger: Logger(label: "test")),
            sessionsPerAddress: AddressLimiter(limit: 0, window: .seconds(60)), longPolls: HeldSlots(perKey: 1),
            readiness: Readiness(database: database, started: ReadyGate(), checkpointMaxAgeSeconds: 60))
        // Hummingbird's own list of what the router serves.
        return Set(buildRouter(api).routes.map { route -> String in
            let path = route.path.description.split(separator: "/").map { $0.hasPrefix(":") ? "{\($0.dropFirst())}" : String($0) }.joined(separator: "/")
            return "\(route.method.rawValue) /\(path)"
        })
    }
}
