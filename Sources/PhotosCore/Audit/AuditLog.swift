import Foundation
import SQLiteStore

/// The append-only audit trail: contiguous `seq` per session and a hash chain over all rows.
///
/// Every write goes through an `AuditTrailWriter` (directly, or through `append`), inside the
/// caller's write transaction, so a step is recorded if and only if what it describes is
/// committed, and its `seq` is assigned in one place.
public enum AuditLog {
    /// Reserved session id for `photos-admin` commands that act on no live session.
    public static let operatorSession = "operator"
    /// Reserved session id for the token API (sign-in, sign-out outside a session).
    public static let apiSession = "api"
    /// `prev_hash` of the very first row.
    public static let genesisHash = String(repeating: "0", count: 64)

    /// Appends `entries`, in order and all stamped `at`, to the trail `sessionID` (a session
    /// id, `operatorSession` or `apiSession`), and returns the rows as written.
    @discardableResult
    public static func append(_ entries: [AuditEntry], to sessionID: String, at: String, on connection: Connection) throws -> [AuditRow] {
        guard !entries.isEmpty else { return [] }
        let trail = try AuditTrailWriter(sessionID: sessionID, on: connection)
        for entry in entries { trail.record(entry) }
        return try trail.write(at: at)
    }

    /// The last `seq` of a trail, 0 for none.
    static func lastSeq(of sessionID: String, on connection: Connection) throws -> Int {
        try connection.queryOne("SELECT seq FROM audit_events WHERE session_id = ? ORDER BY seq DESC LIMIT 1", sessionID)?.int(0) ?? 0
    }

    /// Inserts rows whose seq is already assigned (by `AuditTrailWriter`), chained to the row
    /// before them.
    static func insert(_ rows: [StoredFields], on connection: Connection) throws {
        var previousHash = try connection.queryOne("SELECT hash FROM audit_events ORDER BY id DESC LIMIT 1")?.string(0) ?? genesisHash
        for fields in rows {
            let hash = fields.hash(previous: previousHash)
            try connection.execute(
                """
                INSERT INTO audit_events (session_id, seq, at, actor, user_id, username, coordinator, step, screen, detail, prev_hash, hash)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
                fields.sessionID, fields.seq, fields.at, fields.actor, fields.userID, fields.username,
                fields.coordinator, fields.step, fields.screen, fields.detail, previousHash, hash)
            previousHash = hash
        }
    }

    /// Rows of the `audit_trail` view, oldest first, at most `limit`: one session's after its
    /// `seq` `after`, or (no session) every session's after the row with id `after`.
    public static func rows(sessionID: String? = nil, after: Int = 0, limit: Int = 1_000, on connection: Connection) throws -> [AuditRow] {
        guard let sessionID else {
            return try rows(afterID: Int64(after), sessionID: nil, limit: limit, on: connection).map(\.row)
        }
        return try connection.query(
            "SELECT session_id, seq, at, actor, username, coordinator, step, screen, detail FROM audit_trail WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?",
            sessionID, after, limit
        ).map(Self.row)
    }

    /// Rows after the row with id `afterID` (all sessions, or one), oldest first, with their ids:
    /// for following the trail as it grows.
    public static func rows(afterID: Int64, sessionID: String?, limit: Int = 1_000, on connection: Connection) throws -> [(id: Int64, row: AuditRow)] {
        let result = try connection.query(
            """
            SELECT session_id, seq, at, actor, username, coordinator, step, screen, detail, id FROM audit_events
            WHERE id > ? AND (? IS NULL OR session_id = ?) ORDER BY id LIMIT ?
            """, afterID, sessionID, sessionID, limit)
        return result.map { ($0.int64(9), Self.row($0)) }
    }

    static func row(_ row: Row) -> AuditRow {
        AuditRow(
            sessionId: row.string(0), seq: row.int(1), at: row.string(2), actor: row.string(3),
            username: row.optionalString(4), coordinator: row.optionalString(5), step: row.string(6),
            screen: row.optionalString(7), detail: row.string(8))
    }

    /// The outcome of `verify`.
    public struct Verification: Sendable, Equatable {
        /// Rows read.
        public var rowsChecked: Int
        /// The first row that breaks the chain or the numbering, if any.
        public var problem: Problem?
        /// True when nothing was found.
        public var isIntact: Bool { problem == nil }
    }

    /// A row that does not check out.
    public struct Problem: Sendable, Equatable, CustomStringConvertible {
        /// `audit_events.id` of the row.
        public var rowID: Int64
        /// Its session and seq.
        public var sessionID: String
        public var seq: Int
        /// What is wrong.
        public var reason: String

        public var description: String { "row id \(rowID) (session \(sessionID), seq \(seq)): \(reason)" }
    }

    /// Re-reads every row in order and checks the hash chain and the per-session numbering.
    /// Detects a row altered, deleted or inserted behind the triggers' back (except the removal
    /// of the newest rows, which leaves a shorter but consistent chain).
    public static func verify(on connection: Connection) throws -> Verification {
        var previousHash = genesisHash
        var lastSeq: [String: Int] = [:]
        var checked = 0
        var problem: Problem?
        try connection.forEachRow(
            "SELECT id, session_id, seq, at, actor, user_id, username, coordinator, step, screen, detail, prev_hash, hash FROM audit_events ORDER BY id"
        ) { row in
            guard problem == nil else { return }
            checked += 1
            let fields = StoredFields(
                sessionID: row.string(1), seq: row.int(2), at: row.string(3), actor: row.string(4),
                userID: row.optionalInt64(5), username: row.optionalString(6), coordinator: row.optionalString(7),
                step: row.string(8), screen: row.optionalString(9), detail: row.string(10))
            let id = row.int64(0)
            func fail(_ reason: String) { problem = Problem(rowID: id, sessionID: fields.sessionID, seq: fields.seq, reason: reason) }
            if row.string(11) != previousHash {
                fail("prev_hash does not match the row before it (a row was deleted or inserted)")
            } else if fields.hash(previous: previousHash) != row.string(12) {
                fail("hash does not match the row's contents (the row was altered)")
            } else if fields.seq != (lastSeq[fields.sessionID] ?? 0) + 1 {
                fail("seq \(fields.seq) follows \(lastSeq[fields.sessionID] ?? 0) (a gap or a repeat)")
            }
            previousHash = row.string(12)
            lastSeq[fields.sessionID] = fields.seq
        }
        return Verification(rowsChecked: checked, problem: problem)
    }
}

/// The columns that the hash covers, in a fixed order.
struct StoredFields {
    var sessionID: String
    var seq: Int
    var at: String
    var actor: String
    var userID: Int64?
    var username: String?
    var coordinator: String?
    var step: String
    var screen: String?
    var detail: String

    /// SHA-256 over the previous hash and every field, each length-prefixed so that no two
    /// different rows encode alike.
    func hash(previous: String) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256)
        func add(_ text: String?) {
            guard let text else {
                bytes.append(UInt8(ascii: "~"))
                return
            }
            bytes.append(contentsOf: String(text.utf8.count).utf8)
            bytes.append(UInt8(ascii: ":"))
            bytes.append(contentsOf: text.utf8)
        }
        add(previous)
        add(sessionID)
        add(String(seq))
        add(at)
        add(actor)
        add(userID.map { String($0) })
        add(username)
        add(coordinator)
        add(step)
        add(screen)
        add(detail)
        return SecureToken.sha256Hex(bytes)
    }

    var row: AuditRow {
        AuditRow(sessionId: sessionID, seq: seq, at: at, actor: actor, username: username, coordinator: coordinator, step: step, screen: screen, detail: detail)
    }
}
