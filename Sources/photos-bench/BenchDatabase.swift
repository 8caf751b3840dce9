import Foundation
import Logging
import PostgresNIO
import PostgresStore

/// A fresh PostgreSQL database for one `photos-bench http --db` run, on the server the URL
/// names: created before the run (so every run starts from the same empty state, as the SQLite
/// runs do with a new file) and dropped after it.
struct BenchDatabase {
    /// The run database's URL: the server's URL with the database name replaced (the password,
    /// if the URL has one, stays; photosd may also take it from `PGPASSWORD`).
    let url: String
    private let name: String
    private let server: PostgresLocation

    static let logger: Logger = {
        var logger = Logger(label: "photos-bench")
        logger.logLevel = .error
        return logger
    }()

    /// Creates `photos_bench_<random>` on the server of `serverURL` (its user needs CREATEDB).
    static func create(serverURL: String) async throws -> BenchDatabase {
        let server = try PostgresLocation(url: serverURL)
        let name = "photos_bench_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(12)
        guard var components = URLComponents(string: serverURL) else { throw BenchError("--db: not a URL") }
        components.path = "/" + name
        guard let url = components.string else { throw BenchError("--db: cannot name the run's database") }
        _ = try await PostgresClient.withClient(server, logger: logger) { client in
            // An identifier cannot be a bound parameter; the name is [a-z0-9_] made here.
            try await client.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"), logger: logger)
        }
        return BenchDatabase(url: url, name: String(name), server: server)
    }

    /// Drops it (with whatever is still connected).
    func drop() async {
        _ = try? await PostgresClient.withClient(server, logger: Self.logger) { client in
            try await client.query(PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)"), logger: Self.logger)
        }
    }
}
