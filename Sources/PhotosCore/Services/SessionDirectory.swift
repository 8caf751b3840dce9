import AuditTrail
import DatabaseAccess
import PhotosModel

/// The sessions as listed and looked up outside an action: what the sessions layer asks of the
/// `sessions` table besides the action contract, in SQL kept here with the other services'.
public enum SessionDirectory {
    /// One session as listed.
    public struct Line: Sendable {
        public var id: String
        public var version: Int
        public var username: String?
        /// The top screen's name, nil before the session starts.
        public var topScreen: String?
        public var updatedAt: String
    }

    /// Sessions, most recently changed first, at most `limit`.
    public static func lines(limit: Int, on connection: any DatabaseConnection) async throws -> [Line] {
        let topScreen = connection.jsonText("s.state", path: ["top", "screen"])
        return try await connection.query(
            """
            SELECT s.id, s.version, u.username, \(topScreen) AS top_screen, s.updated_at
            FROM sessions s LEFT JOIN users u ON u.id = s.user_id ORDER BY s.updated_at DESC, s.id LIMIT \(limit)
            """
        ).map { row in
            Line(
                id: try row.string("id"), version: try row.int("version"), username: try row.optionalString("username"),
                topScreen: try row.optionalString("top_screen"), updatedAt: try row.string("updated_at"))
        }
    }

    /// Audit rows of the client session `sessionID` after its `seq` `after`. Throws `not_found`
    /// when there is no such session (the reserved trails have none).
    public static func trail(ofSession sessionID: String, after: Int, limit: Int, on connection: any DatabaseConnection) async throws -> [AuditRow] {
        if try await connection.queryOne("SELECT 1 FROM sessions WHERE id = \(sessionID)") == nil {
            throw PhotosError.notFound("no session \(sessionID.prefix(64))")
        }
        return try await AuditChains.rows(sessionID: sessionID, after: after, limit: limit, on: connection)
    }

    /// What is stored of the secret of `sessionID` (its SHA-256, hex): `.none` when there is no
    /// such session, `.some(nil)` for a session created before sessions had secrets.
    public static func secretHash(ofSession sessionID: String, on connection: any DatabaseConnection) async throws -> String?? {
        guard let row = try await connection.queryOne("SELECT secret_hash FROM sessions WHERE id = \(sessionID)") else { return .none }
        return .some(try row.optionalString("secret_hash"))
    }
}
