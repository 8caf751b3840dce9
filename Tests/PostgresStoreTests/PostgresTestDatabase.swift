import Testing
import Foundation
import Logging
import PostgresNIO
import PostgresStore

/// A throwaway database on the test server (`PHOTOSD_TEST_POSTGRES_URL`, which `scripts/test`
/// starts: `scripts/postgres-test-server`), created for one test and dropped after it.
struct PostgresTestDatabase {
    static let serverURL = ProcessInfo.processInfo.environment["PHOTOSD_TEST_POSTGRES_URL"]
    static var available: Bool { serverURL != nil }
    static let reason: Comment = "needs PHOTOSD_TEST_POSTGRES_URL: scripts/test starts a throwaway PostgreSQL"
    static let logger = Logger(label: "postgres-test")

    let name: String
    let location: PostgresLocation

    /// Creates an empty database with a fresh name.
    static func create() async throws -> PostgresTestDatabase {
        let server = try PostgresLocation(url: serverURL ?? "")
        let name = "photos_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(16)
        try await PostgresClient.withClient(server, logger: logger) { client in
            // An identifier cannot be a bound parameter; the name is [a-z0-9_] made here.
            try await client.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"), logger: logger)
        }
        var location = server
        location.database = String(name)
        return PostgresTestDatabase(name: String(name), location: location)
    }

    /// Drops it (closing what is still connected).
    func drop() async {
        guard let server = try? PostgresLocation(url: Self.serverURL ?? "") else { return }
        _ = try? await PostgresClient.withClient(server, logger: Self.logger) { client in
            try await client.query(PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)"), logger: Self.logger)
        }
    }

    /// Runs `body` with a client of this database.
    func withClient<T: Sendable>(_ body: @Sendable (PostgresClient) async throws -> T) async throws -> T {
        try await PostgresClient.withClient(location, logger: Self.logger, body)
    }
}

