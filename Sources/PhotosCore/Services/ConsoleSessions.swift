import DatabaseAccess
import Foundation
import HummingbirdBcrypt
import PhotosModel

/// An operator signed in to the console, as a request finds them.
public struct ConsoleSession: Sendable, Equatable {
    /// Who.
    public var `operator`: Operator
    /// The token every state-changing request of this session must carry (CSRF).
    public var csrfToken: String
}

/// The console's sign-ins: an opaque random id in the operator's cookie, stored only as its
/// SHA-256 with a CSRF token, ending after `idleSeconds` without a request (each request found
/// in time moves the end on), at sign-out, or when the operator is removed.
public struct ConsoleSessions: Sendable {
    let database: any DatabaseStore
    let idleSeconds: TimeInterval
    let bcryptCost: Int
    let offload: Offload
    let now: @Sendable () -> Date

    /// `idleMinutes` is `console.sessionMinutes`; `bcryptCost` the cost of the operators'
    /// hashes (for the decoy compared when a name is unknown).
    public init(
        database: any DatabaseStore, idleMinutes: Int, bcryptCost: Int = 12,
        offload: Offload = Offload(), now: @escaping @Sendable () -> Date = Date.init
    ) {
        self.database = database
        self.idleSeconds = TimeInterval(idleMinutes * 60)
        self.bcryptCost = bcryptCost
        self.offload = offload
        self.now = now
    }

    /// Checks `name` and `password` (bcrypt, against a decoy hash when the name is unknown, so
    /// both cost the same) and, when they match, starts a session: returns the cookie's value
    /// (shown once) and the session. Nil for a wrong name or password.
    public func signIn(name: String, password: String) async throws -> (cookie: String, session: ConsoleSession)? {
        let found = try await database.read { connection in
            try await connection.queryOne("SELECT id, name, role, created_at, password_hash FROM operators WHERE name = ?", name)
                .map { (try OperatorService.operator($0), try $0.string(4)) }
        }
        let cost = bcryptCost
        let matches = await offload.run { Bcrypt.verify(password, hash: found?.1 ?? DecoyHash.hash(cost: cost)) }
        guard matches, let found else { return nil }
        let cookie = SecureToken.random(byteCount: 32)
        let csrf = SecureToken.random(byteCount: 32)
        let at = ISO8601Timestamp.string(from: now())
        try await database.write { connection in
            try await connection.execute(
                "INSERT INTO console_sessions (id_hash, operator_id, csrf_token, created_at, last_seen) VALUES (?, ?, ?, ?, ?)",
                SecureToken.sha256Hex(cookie), found.0.id, csrf, at, at)
        }
        return (cookie, ConsoleSession(operator: found.0, csrfToken: csrf))
    }

    /// The session of `cookie`, its idle time restarted; nil (and the session ended) when it was
    /// idle too long, and nil for an unknown cookie or a removed operator.
    public func session(cookie: String) async throws -> ConsoleSession? {
        let at = now()
        let stamp = ISO8601Timestamp.string(from: at)
        let cutoff = ISO8601Timestamp.string(from: at.addingTimeInterval(-idleSeconds))
        let idHash = SecureToken.sha256Hex(cookie)
        return try await database.write { connection in
            guard let row = try await connection.queryOne(
                """
                SELECT o.id, o.name, o.role, o.created_at, s.csrf_token, s.last_seen
                FROM console_sessions s JOIN operators o ON o.id = s.operator_id WHERE s.id_hash = ?
                """, idHash)
            else { return nil }
            guard try row.string(5) > cutoff else {
                try await connection.execute("DELETE FROM console_sessions WHERE id_hash = ?", idHash)
                return nil
            }
            try await connection.execute("UPDATE console_sessions SET last_seen = ? WHERE id_hash = ?", stamp, idHash)
            return ConsoleSession(operator: try OperatorService.operator(row), csrfToken: try row.string(4))
        }
    }

    /// Ends the session of `cookie` (nothing for an unknown one).
    public func signOut(cookie: String) async throws {
        let idHash = SecureToken.sha256Hex(cookie)
        try await database.write { connection in
            try await connection.execute("DELETE FROM console_sessions WHERE id_hash = ?", idHash)
        }
    }
}
