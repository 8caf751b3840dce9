import Foundation
import PostgresNIO

/// The peer's PostgreSQL database: postgres-nio's `PostgresClient` (a pool of up to 20
/// connections, as photosd's default), one statement per request, each its own transaction
/// with `synchronous_commit` on (the server's default: photosd's durability `full`). An action
/// is one round trip, as photosd's is: the row's version moved on and the event appended by one
/// statement.
final class PostgresPeerStore: PeerStoring {
    let client: PostgresClient

    /// A client for `url` (`postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE`, no TLS); run it
    /// (`client.run()`) before using the store.
    init(url: String) throws {
        guard let components = URLComponents(string: url), components.scheme == "postgres" || components.scheme == "postgresql",
              let user = components.user, let host = components.host, components.path.count > 1
        else { throw PeerError("not a postgres:// URL: \(url)") }
        var configuration = PostgresClient.Configuration(
            host: host, port: components.port ?? 5_432, username: user, password: components.password,
            database: String(components.path.dropFirst()), tls: .disable)
        configuration.options.maximumConnections = 20
        client = PostgresClient(configuration: configuration)
    }

    /// Makes the tables (empty).
    func prepare() async throws {
        try await client.query("DROP TABLE IF EXISTS events, sessions")
        try await client.query("CREATE TABLE sessions (id TEXT PRIMARY KEY, version BIGINT NOT NULL, state TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL)")
        try await client.query("CREATE TABLE events (id BIGSERIAL PRIMARY KEY, session_id TEXT NOT NULL, seq BIGINT NOT NULL, at TEXT NOT NULL, detail TEXT NOT NULL, UNIQUE (session_id, seq))")
    }

    func createSession(id: String) async throws {
        let now = PeerClock.now()
        try await client.query("INSERT INTO sessions (id, version, state, created_at, updated_at) VALUES (\(id), 0, '{}', \(now), \(now))")
    }

    func apply(sessionID id: String, action: String) async throws -> Int64? {
        let now = PeerClock.now()
        let rows = try await client.query(
            """
            WITH moved AS (UPDATE sessions SET version = version + 1, state = \(action), updated_at = \(now) WHERE id = \(id) RETURNING version),
                 event AS (INSERT INTO events (session_id, seq, at, detail) SELECT \(id), version, \(now), \(action) FROM moved)
            SELECT version FROM moved
            """)
        for try await version in rows.decode(Int64.self) { return version }
        return nil
    }
}
