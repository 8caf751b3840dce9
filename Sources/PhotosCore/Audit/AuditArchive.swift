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
    /// The previous archive's hash (`AuditLog.genesisHash` for the first).
    public var prevHash: String
    /// Rows it holds.
    public var rows: Int
    /// Hex SHA-256 over its rows' (trail, seq, hash) in (trail, seq) order.
    public var rowsDigest: String
    /// Trail segments it holds (a session's whole trail, or a reserved trail's seqs a … b).
    public var segments: Int
    /// Hex SHA-256 over its segments' (trail, first seq, last seq, last hash) in (trail, first seq) order.
    public var segmentsDigest: String
    /// The public key that signed it, hex (informative: verification uses a trusted key).
    public var publicKey: String
    /// The hex Ed25519 signature of `statement`.
    public var signature: String
    /// Hex SHA-256 of `statement` and `signature`: what the next archive chains to.
    public var hash: String

    /// The exact bytes that are signed.
    public var statement: [UInt8] {
        Array(
            """
            photosd audit archive v1
            number \(number)
            at \(at)
            before \(before)
            prev \(prevHash)
            rows \(rows) \(rowsDigest)
            segments \(segments) \(segmentsDigest)

            """.utf8)
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

    /// The columns a statement is stored in, in the archive file.
    static let columns = "number, at, before, prev_hash, rows, rows_digest, segments, segments_digest, public_key, signature, hash"
    /// The same in the live database's `audit_archives` (where `at` is `finished_at`).
    static let liveColumns = "number, finished_at, before, prev_hash, rows, rows_digest, segments, segments_digest, public_key, signature, hash"

    /// A statement from a row of `columns`.
    static func statement(_ row: Row) throws -> AuditArchiveStatement {
        AuditArchiveStatement(
            number: try row.int(0), at: try row.string(1), before: try row.string(2), prevHash: try row.string(3),
            rows: try row.int(4), rowsDigest: try row.string(5), segments: try row.int(6), segmentsDigest: try row.string(7),
            publicKey: try row.string(8), signature: try row.string(9), hash: try row.string(10))
    }

    /// The statement's values in the order of `columns`.
    var values: [any DatabaseBindable] {
        [number, at, before, prevHash, rows, rowsDigest, segments, segmentsDigest, publicKey, signature, hash]
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

    var hex: String { Hex.encode(Array(hasher.finalize())) }
}

/// One trail's rows `firstSeq` … `lastSeq` in an archive.
struct AuditArchiveSegment: Sendable, Equatable {
    var trail: String
    var firstSeq: Int
    var lastSeq: Int
    var lastHash: String

    static func segment(_ row: Row) throws -> AuditArchiveSegment {
        AuditArchiveSegment(trail: try row.string(0), firstSeq: try row.int(1), lastSeq: try row.int(2), lastHash: try row.string(3))
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
            hash            TEXT NOT NULL
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
}
