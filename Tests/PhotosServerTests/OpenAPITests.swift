import Foundation
import Logging
import Navigation
import PhotosCore
import PhotosTestSupport
import SQLiteStore
@testable import PhotosServer
import Testing
import PhotosModel
import Sessions

@Suite("docs/openapi.yaml")
struct OpenAPITests {
    static let document = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("docs/openapi.yaml").path

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
        let h = try await ServerHarness.make()
        defer { h.close() }
        let database = try PhotosDatabase.open(path: h.configuration.databasePath)
        defer { database.close() }
        let api = PhotosAPI(
            services: try PhotosServices(configuration: h.configuration, database: database), bodyLimit: h.configuration.maxBodyBytes,
            metrics: .shared, storage: StorageHealth(logger: Logger(label: "test")),
            sessionsPerAddress: AddressLimiter(limit: 0, window: .seconds(60)))
        // Hummingbird's own list of what the router serves.
        let served = Set(buildRouter(api).routes.map { route -> String in
            let path = route.path.description.split(separator: "/").map { $0.hasPrefix(":") ? "{\($0.dropFirst())}" : String($0) }.joined(separator: "/")
            return "\(route.method.rawValue) /\(path)"
        })
        let documented = try Self.documentedOperations()
        #expect(served.count == 11)
        #expect(served.subtracting(documented) == [], "served but not documented")
        #expect(documented.subtracting(served) == [], "documented but not served")
    }
}
