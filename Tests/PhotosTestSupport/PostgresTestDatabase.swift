import Testing
import Foundation
import Logging
import PostgresNIO
import PostgresStore

/// A throwaway database on the test server (`PHOTOSD_TEST_POSTGRES_URL`, which `scripts/test`
/// starts: `scripts/postgres-test-server`), created for one test and dropped after it.
public struct PostgresTestDatabase: Sendable {
    public static let serverURL = ProcessInfo.processInfo.environment["PHOTOSD_TEST_POSTGRES_URL"]
    public static var available: Bool { serverURL != nil }
    public static let reason: Comment = "needs PHOTOSD_TEST_POSTGRES_URL: scripts/test starts a throwaway PostgreSQL"
    public static let logger = Logger(label: "postgres-test")

    public let name: String
    public let location: PostgresLocation

    /// Creates an empty database with a fresh name.
    public static func create() async throws -> PostgresTestDatabase {
        let server = try PostgresLocation(url: serverURL ?? "")
        let name = "photos_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(16)
        _ = try await PostgresClient.withClient(server, logger: logger) { client in
            // An identifier cannot be a bound parameter; the name is [a-z0-9_] made here.
            try await client.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"), logger: logger)
        }
        var location = server
        location.database = String(name)
        return PostgresTestDatabase(name: String(name), location: location)
    }

    /// Drops it (closing what is still connected).
    public func drop() async {
        guard let server = try? PostgresLocation(url: Self.serverURL ?? "") else { return }
        _ = try? await PostgresClient.withClient(server, logger: Self.logger) { client in
            try await client.query(PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)"), logger: Self.logger)
        }
    }

    /// The database's URL (the test server trusts loopback; `password` is there to show that it
    /// never comes out).
    public func url(password: String? = nil) -> String {
        "postgres://\(location.username)\(password.map { ":" + $0 } ?? "")@\(location.host ?? "127.0.0.1"):\(location.port)/\(name)"
    }

    /// `pg_dump` of the database (schema and data, as plain SQL): what someone with a copy of
    /// the database would read.
    public func dump() async throws -> Data {
        let result = try await runProcess(
            "/usr/bin/env",
            ["pg_dump", "-h", location.host ?? "127.0.0.1", "-p", String(location.port), "-U", location.username, name],
            in: FileManager.default.temporaryDirectory.path)
        guard result.status == 0 else { throw DumpFailed(message: result.stderr) }
        return Data(result.stdout.utf8)
    }

    /// Loads `dump` (a `pg_dump` of another database) into this one, as a restore does.
    public func restore(_ dump: Data) async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("restore-\(name).sql")
        try dump.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let result = try await runProcess(
            "/usr/bin/env",
            ["psql", "-q", "-v", "ON_ERROR_STOP=1", "-h", location.host ?? "127.0.0.1", "-p", String(location.port), "-U", location.username, "-d", name, "-f", file.path],
            in: FileManager.default.temporaryDirectory.path)
        guard result.status == 0 else { throw DumpFailed(message: result.stderr) }
    }

    /// The test server's log (`PHOTOSD_TEST_POSTGRES_LOG`, which `scripts/test` sets), if known.
    public static func serverLog() -> Data? {
        ProcessInfo.processInfo.environment["PHOTOSD_TEST_POSTGRES_LOG"].flatMap { FileManager.default.contents(atPath: $0) }
    }

    /// The names of the databases on the test server.
    public static func serverDatabases() async throws -> [String] {
        let server = try PostgresLocation(url: serverURL ?? "")
        return try await PostgresClient.withClient(server, logger: logger) { client in
            var names: [String] = []
            for try await name in try await client.query("SELECT datname FROM pg_database", logger: logger).decode(String.self) {
                names.append(name)
            }
            return names
        }
    }

    /// Runs `body` with a client of this database.
    public func withClient<T: Sendable>(_ body: @Sendable (PostgresClient) async throws -> T) async throws -> T {
        try await PostgresClient.withClient(location, logger: Self.logger, body)
    }
}


/// `pg_dump` did not succeed.
struct DumpFailed: Error, CustomStringConvertible {
    let message: String
    var description: String { "pg_dump failed: \(message)" }
}
