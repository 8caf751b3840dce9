import DatabaseAccess
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import PhotosCore
import PhotosModel
import Sessions

/// The console's SQL: plain statements over the columns kept for it (migration 0010), the same
/// text on both stores.
enum ConsoleQueries {
    /// What the sessions list is filtered by (nil: any).
    struct SessionFilter {
        var username: String?
        var topScreen: String?
        var layout: String?
        /// An ISO-8601 time: sessions changed at or after it.
        var updatedSince: String?
        /// Keyset cursor: sessions created before this (created_at, id).
        var before: (createdAt: String, id: String)?
    }

    /// One line of the sessions list.
    struct SessionLine {
        var id: String
        var version: Int
        var username: String?
        var topScreen: String?
        var layout: String?
        var createdAt: String
        var updatedAt: String
        /// When it ended (idle past the expiry); nil while it lives.
        var endedAt: String?

        var values: [String: Any] {
            [
                "id": id, "short": String(id.prefix(12)), "version": version, "username": username ?? "",
                "top": endedAt == nil ? topScreen ?? "" : "ended", "layout": layout ?? "", "createdAt": createdAt, "updatedAt": updatedAt,
                "ended": endedAt != nil,
            ]
        }
    }

    private static let sessionColumns: SQL = """
        SELECT s.id, s.version, u.username, s.top_screen, s.layout, s.created_at, s.updated_at, s.ended_at
        FROM sessions s LEFT JOIN users u ON u.id = s.user_id
        """

    /// Sessions newest first (by creation: an index that an action's update never moves), at most `limit`.
    static func sessions(_ filter: SessionFilter, limit: Int, on connection: any DatabaseConnection) async throws -> [SessionLine] {
        var conditions: [SQL] = []
        if let username = filter.username { conditions.append("u.username = \(username)") }
        if let top = filter.topScreen { conditions.append("s.top_screen = \(top)") }
        if let layout = filter.layout { conditions.append("s.layout = \(layout)") }
        if let since = filter.updatedSince { conditions.append("s.updated_at >= \(since)") }
        if let before = filter.before {
            conditions.append("(s.created_at < \(before.createdAt) OR (s.created_at = \(before.createdAt) AND s.id < \(before.id)))")
        }
        let condition: SQL = conditions.isEmpty ? "" : " WHERE \(SQL.joined(conditions, separator: " AND "))"
        return try await connection.query(sessionColumns + condition + " ORDER BY s.created_at DESC, s.id DESC LIMIT \(limit)")
            .map(line)
    }

    /// The sessions that audit rows after id `after` (up to `upTo`) belong to, as they are now.
    static func sessionsChanged(after: Int64, upTo: Int64, on connection: any DatabaseConnection) async throws -> [SessionLine] {
        try await connection.query(
            sessionColumns + " WHERE s.id IN (SELECT DISTINCT session_id FROM audit_events WHERE id > \(after) AND id <= \(upTo)) ORDER BY s.updated_at"
        ).map(line)
    }

    /// The newest audit row's id (0 for none).
    static func newestAuditID(on connection: any DatabaseConnection) async throws -> Int64 {
        try await connection.queryOne("SELECT max(id) AS newest FROM audit_events")?.optionalInt64("newest") ?? 0
    }

    /// A session's trail's last seq (its row keeps it).
    static func lastSeq(of sessionID: String, on connection: any DatabaseConnection) async throws -> Int {
        try await storedLastSeq(of: sessionID, on: connection) ?? 0
    }

    /// A session's trail's last seq, nil when there is no such session.
    static func storedLastSeq(of sessionID: String, on connection: any DatabaseConnection) async throws -> Int? {
        try await connection.queryOne("SELECT trail_seq FROM sessions WHERE id = \(sessionID)")?.int("trail_seq")
    }

    /// The newest checkpoint, as the audit page shows it.
    struct CheckpointSummary: Sendable {
        var number: Int
        var at: String
        var coversUntil: Int64
        /// Trails changed since the checkpoint before.
        var trails: Int
        var hash: String

        var values: [String: Any] { ["number": number, "at": at, "coversUntil": coversUntil, "trails": trails, "hash": hash] }
    }

    /// The newest checkpoint (nil: none yet).
    static func newestCheckpoint(on connection: any DatabaseConnection) async throws -> CheckpointSummary? {
        guard let row = try await connection.queryOne("SELECT number, at, covers_until_id, heads, hash FROM audit_checkpoints ORDER BY number DESC LIMIT 1")
        else { return nil }
        let heads = (try? JSONSerialization.jsonObject(with: Data(try row.string("heads").utf8))) as? [Any]
        return CheckpointSummary(
            number: try row.int("number"), at: try row.string("at"), coversUntil: try row.int64("covers_until_id"), trails: heads?.count ?? 0,
            hash: try row.string("hash"))
    }

    private static func line(_ row: Row) throws -> SessionLine {
        SessionLine(
            id: try row.string("id"), version: try row.int("version"), username: try row.optionalString("username"),
            topScreen: try row.optionalString("top_screen"), layout: try row.optionalString("layout"), createdAt: try row.string("created_at"),
            updatedAt: try row.string("updated_at"), endedAt: try row.optionalString("ended_at"))
    }
}
