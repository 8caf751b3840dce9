import Crypto
import DatabaseAccess
import Foundation
import PhotosModel

/// The signed statement of one archive (`photos-admin audit archive`), kept both in the archive
/// file and in the live database's `audit_archives`: which archive it is, what it moved, and
/// digests of exactly the rows and the trail segments it holds, signed with the audit key.
///
/// Archives are numbered 1, 2, 3 … and each names the previous one's hash, like checkpoints, so
/// an archive file from another database (or an archive left out) is found by its hash.
public struct AuditArchiveStatement: Sendable, Equatable, Codable {
    /// 1, 2, 3 … without gaps.
    public var number: Int
    /// When the move finished (ISO-8601 UTC with milliseconds).
    public var at: String
    /// What it moved ended (a session's trail) or was written (a reserved trail's rows) before this.
    public var before: String
    /// The previous archive's hash (`AuditChains.genesisHash` for the first).
    public var prevHash: String
    /// Rows it holds.
    public var rows: Int
    /// Hex SHA-256 over its rows' (trail, seq, hash) in (trail, seq) order.
    public var rowsDigest: String
    /// Trail segments it holds (a session's whole trail, or a reserved trail's seqs a … b).
    public var segments: Int
    /// Hex SHA-256 over its segments' (trail, first seq, last seq, last hash) in (trail, first seq) order.
    public var segmentsDigest: String
    /// Sessions it holds; nil in a version 1 statement (written before migration 0019), which
    /// did not sign them.
    public var sessions: Int?
    /// Hex SHA-256 over its sessions' rows in id order (`AuditArchiveDigest.add(session:)`); nil
    /// in a version 1 statement.
    public var sessionsDigest: String?
    /// The public key that signed it, hex (informative: verification uses a trusted key).
    public var publicKey: String
    /// The hex Ed25519 signature of `statement`.
    public var signature: String
    /// Hex SHA-256 of `statement` and `signature`: what the next archive chains to.
    public var hash: String

    /// The statement's version: 2 when it signs the archive's sessions, else 1.
    public var version: Int { sessionsDigest == nil ? 1 : 2 }

    /// The exact bytes that are signed. Version 2 adds the sessions line; a version 1 statement
    /// keeps its bytes, so archives written before 0019 still verify.
    public var statement: [UInt8] {
        var text = """
            photosd audit archive v\(version)
            number \(number)
            at \(at)
            before \(before)
            prev \(prevHash)
            rows \(rows) \(rowsDigest)
            segments \(segments) \(segmentsDigest)

            """
        if let sessionsDigest { text += "sessions \(sessions ?? 0) \(sessionsDigest)\n" }
        return Array(text.utf8)
    }

    /// Signs the statement with `key`, setting `publicKey`, `signature` and `hash`.
    mutating func sign(with key: AuditSigningKey) throws {
        publicKey = key.publicKeyHex
        signature = try key.signatureHex(statement)
        hash = AuditCheckpoint.hash(statement: statement, signature: signature)
    }

    /// Whether the signature verifies with `key` and the hash is the statement's.
    func isSigned(by key: AuditPublicKey) -> Bool {
        key.isValidSignature(signature, for: statement) && AuditCheckpoint.hash(statement: statement, signature: signature) == hash
    }

    /// The columns a statement is stored in, in the archive file (`sessions` and
    /// `sessions_digest` are added to a file made before 0019 when it is finished; see
    /// `AuditArchiveFile.addSessionColumns`).
    static let columns =
        "number, at, before, prev_hash, rows, rows_digest, segments, segments_digest, public_key, signature, hash, sessions, sessions_digest"
    /// The columns of a version 1 archive file's statement.
    static let version1Columns = "number, at, before, prev_hash, rows, rows_digest, segments, segments_digest, public_key, signature, hash"
    /// The same in the live database's `audit_archives` (where `at` is `finished_at`).
    static let liveColumns =
        "number, finished_at AS at, before, prev_hash, rows, rows_digest, segments, segments_digest, public_key, signature, hash, sessions, sessions_digest"

    /// A statement from a row of `columns` (or of `version1Columns`).
    static func statement(_ row: Row) throws -> AuditArchiveStatement {
        AuditArchiveStatement(
            number: try row.int("number"), at: try row.string("at"), before: try row.string("before"), prevHash: try row.string("prev_hash"),
            rows: try row.int("rows"), rowsDigest: try row.string("rows_digest"), segments: try row.int("segments"),
            segmentsDigest: try row.string("segments_digest"),
            sessions: row.has("sessions") ? try row.optionalInt("sessions") : nil,
            sessionsDigest: row.has("sessions_digest") ? try row.optionalString("sessions_digest") : nil,
            publicKey: try row.string("public_key"), signature: try row.string("signature"), hash: try row.string("hash"))
    }

    /// The statement's values in the order of `columns`.
    var values: [any DatabaseBindable] {
        [number, at, before, prevHash, rows, rowsDigest, segments, segmentsDigest, publicKey, signature, hash, sessions, sessionsDigest]
    }
}

/// A running digest of rows or segments, in the order the statement defines (each trail
/// length-prefixed, so that no two lists have the same bytes).
struct AuditArchiveDigest {
    private var hasher = SHA256()
    private(set) var count = 0

    mutating func add(trail: String, seq: Int, hash: String) {
        hasher.update(data: Array("\(trail.utf8.count):\(trail) \(seq) \(hash)\n".utf8))
        count += 1
    }

    mutating func add(segment: AuditArchiveSegment) {
        hasher.update(data: Array("\(segment.trail.utf8.count):\(segment.trail) \(segment.firstSeq) \(segment.lastSeq) \(segment.lastHash)\n".utf8))
        count += 1
    }

    /// One session row of the archive (id, user id, layout, created, updated, ended), each
    /// value length-prefixed and NULL written as `-`.
    mutating func add(session row: Row) {
        var line = ""
        for value in row.values {
            switch value {
            case .null: line += "- "
            case .integer(let number): line += "i\(number) "
            case .real(let number): line += "r\(number) "
            case .text(let text): line += "\(text.utf8.count):\(text) "
            case .blob(let bytes): line += "x\(Hex.encode(bytes)) "
            }
        }
        hasher.update(data: Array((line + "\n").utf8))
        count += 1
    }

    var hex: String { Hex.encode(Array(hasher.finalize())) }
}

/// One trail's rows `firstSeq` … `lastSeq` in an archive.
struct AuditArchiveSegment: Sendable, Equatable {
    var trail: String
    var firstSeq: Int
    var lastSeq: Int
    var lastHash: String

    static func segment(_ row: Row) throws -> AuditArchiveSegment {
        AuditArchiveSegment(trail: try row.string("trail"), firstSeq: try row.int("first_seq"), lastSeq: try row.int("last_seq"), lastHash: try row.string("last_hash"))
    }
}

/// The archive file: a SQLite database of its own, readable with `sqlite3` alone.
public enum AuditArchiveFile {
    /// Its schema. `audit_trail` has the live view's columns; a row names its user by
    /// `audit_events.user_id` only (the archive holds no names: erasing a person never needs
    /// to reach it), so `username` is what a row from before migration 0011 recorded, if any.
    public static let schema = """
        CREATE TABLE archive (
            number          INTEGER NOT NULL,
            at              TEXT NOT NULL,
            before          TEXT NOT NULL,
            prev_hash       TEXT NOT NULL,
            rows            INTEGER NOT NULL,
            rows_digest     TEXT NOT NULL,
            segments        INTEGER NOT NULL,
            segments_digest TEXT NOT NULL,
            public_key      TEXT NOT NULL,
            signature       TEXT NOT NULL,
            hash            TEXT NOT NULL,
            sessions        INTEGER,
            sessions_digest TEXT
        );
        CREATE TABLE audit_events (
            id          INTEGER PRIMARY KEY,
            session_id  TEXT NOT NULL,
            seq         INTEGER NOT NULL,
            at          TEXT NOT NULL,
            actor       TEXT NOT NULL,
            user_id     INTEGER,
            username    TEXT,
            coordinator TEXT,
            step        TEXT NOT NULL,
            screen      TEXT,
            detail      TEXT NOT NULL,
            prev_hash   TEXT NOT NULL,
            hash        TEXT NOT NULL,
            UNIQUE (session_id, seq)
        );
        CREATE TABLE audit_redactions (
            event_id INTEGER PRIMARY KEY,
            user_id  INTEGER NOT NULL,
            at       TEXT NOT NULL
        );
        CREATE TABLE audit_archived_trails (
            trail     TEXT NOT NULL,
            first_seq INTEGER NOT NULL,
            last_seq  INTEGER NOT NULL,
            last_hash TEXT NOT NULL,
            PRIMARY KEY (trail, first_seq)
        );
        CREATE TABLE sessions (
            id         TEXT PRIMARY KEY,
            user_id    INTEGER,
            layout     TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            ended_at   TEXT
        );
        CREATE VIEW audit_trail AS
        SELECT session_id, seq, at, actor, username, coordinator, step, screen, detail
        FROM audit_events ORDER BY id;
        """

    /// The session columns a version 2 statement's digest covers, in its order.
    static let sessionColumns = "id, user_id, layout, created_at, updated_at, ended_at"

    /// Whether `file` has the statement's version 2 columns (a file made before migration
    /// 0019 has not).
    static func hasSessionColumns(_ file: any DatabaseConnection) async throws -> Bool {
        try await file.query("SELECT name FROM pragma_table_info('archive')").contains { (try? $0.string("name")) == "sessions_digest" }
    }

    /// Adds the version 2 columns to a file made before 0019 (an archive interrupted before an
    /// upgrade, finished after it).
    static func addSessionColumns(_ file: any DatabaseConnection) async throws {
        guard try await !hasSessionColumns(file) else { return }
        try await file.execute("ALTER TABLE archive ADD COLUMN sessions INTEGER")
        try await file.execute("ALTER TABLE archive ADD COLUMN sessions_digest TEXT")
    }

    /// The digest of `file`'s sessions, as a version 2 statement signs it.
    static func sessionsDigest(_ file: any DatabaseConnection) async throws -> AuditArchiveDigest {
        var digest = AuditArchiveDigest()
        try await file.forEachRow("SELECT \(raw: sessionColumns) FROM sessions ORDER BY id") { digest.add(session: $0) }
        return digest
    }
}
