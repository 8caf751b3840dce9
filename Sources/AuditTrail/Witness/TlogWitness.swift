import Crypto
import DatabaseAccess
import Foundation
import PhotosModel

/// A C2SP `tlog-witness`: it cosigns a log's checkpoint only when the checkpoint is signed by a
/// key it trusts for that origin and provably extends the newest checkpoint it cosigned for that
/// origin (`photos-admin audit witness serve`). Its state is one row per origin in
/// `witness_logs` (a SQLite file of its own), moved forward by compare-and-set, so that two
/// requests can never roll it back.
public actor TlogWitness {
    /// The answer to one `add-checkpoint` request.
    public struct Answer: Sendable, Equatable {
        public var status: Int
        public var contentType: String
        public var body: String

        static func refused(_ status: Int, _ reason: String) -> Answer {
            Answer(status: status, contentType: "text/plain; charset=utf-8", body: reason + "\n")
        }

        static func size(_ size: Int64) -> Answer {
            Answer(status: 409, contentType: "text/x.tlog.size", body: "\(size)\n")
        }
    }

    /// The witness's name (its key's name) and key.
    public let name: String
    private let key: AuditSigningKey
    /// The log keys trusted, by origin.
    private let logs: [String: [SignedNote.VerifierKey]]
    private let state: any DatabaseConnection
    private let now: @Sendable () -> Date

    /// The schema of the state file.
    public static let schema = """
        CREATE TABLE IF NOT EXISTS witness_logs (
            origin TEXT PRIMARY KEY,
            size   INTEGER NOT NULL,
            root   TEXT NOT NULL,
            note   TEXT NOT NULL,
            at     TEXT NOT NULL
        );
        """

    /// A witness named `name` signing with `key`, trusting `logs` (note verifier keys; their
    /// names are the origins), keeping its state in `state` (`schema` is applied).
    public init(name: String, key: AuditSigningKey, logs: [SignedNote.VerifierKey], state: any DatabaseConnection, now: @escaping @Sendable () -> Date = Date.init) async throws {
        self.name = name
        self.key = key
        self.logs = Dictionary(grouping: logs, by: \.name)
        self.state = state
        self.now = now
        try await state.executeScript(Self.schema)
    }

    /// This witness's cosigner key (what a log and a receipt checker configure).
    public var cosignerKey: CosignerKey {
        key.cosignerKey(name: name)
    }

    /// The newest size and root cosigned for `origin`, if any.
    public func cosigned(origin: String) async throws -> (size: Int64, root: MerkleTree.Hash)? {
        guard let row = try await state.queryOne("SELECT size, root FROM witness_logs WHERE origin = \(origin)") else { return nil }
        guard let data = Data(base64Encoded: try row.string("root")), let root = MerkleTree.Hash(data) else {
            throw PhotosError(.internal, "the witness state's root for \(origin) is not base64 of 32 bytes")
        }
        return (try row.int64("size"), root)
    }

    /// Answers `POST …/add-checkpoint` with `body` as C2SP tlog-witness says: 200 and the
    /// cosignature line; 400 (malformed, old size above the checkpoint's), 403 (no trusted
    /// signature), 404 (unknown origin), 409 (`text/x.tlog.size`: the old size is not the one
    /// cosigned, or the same size with another root), 422 (the consistency proof fails).
    public func addCheckpoint(_ body: String) async throws -> Answer {
        // old line, proof lines, an empty line, the checkpoint note.
        guard let blank = body.range(of: "\n\n") else { return .refused(400, "no empty line between the proof and the checkpoint") }
        let head = body[..<blank.lowerBound].split(separator: "\n", omittingEmptySubsequences: false)
        let noteText = String(body[blank.upperBound...])
        guard let oldLine = head.first, oldLine.hasPrefix("old "), let old = Int64(oldLine.dropFirst(4)), old >= 0, String(old) == oldLine.dropFirst(4) else {
            return .refused(400, "the first line must be \"old <size>\" in decimal")
        }
        let proofLines = head.dropFirst()
        guard proofLines.count <= 63 else { return .refused(400, "more than 63 consistency proof lines") }
        var proof: [MerkleTree.Hash] = []
        for line in proofLines {
            guard let data = Data(base64Encoded: String(line)), let hash = MerkleTree.Hash(data) else { return .refused(400, "a proof line is not base64 of 32 bytes") }
            proof.append(hash)
        }
        let note: SignedNote
        let checkpoint: LogCheckpoint
        do {
            note = try SignedNote(parsing: noteText)
            checkpoint = try LogCheckpoint(parsing: note.text)
        } catch {
            return .refused(400, "not a signed checkpoint: \(error)")
        }
        guard let trusted = logs[checkpoint.origin] else { return .refused(404, "unknown log \(checkpoint.origin)") }
        guard trusted.contains(where: note.isSigned(by:)) else { return .refused(403, "no signature of a key trusted for \(checkpoint.origin)") }
        guard old <= checkpoint.size else { return .refused(400, "old size \(old) is above the checkpoint's \(checkpoint.size)") }

        let current = try await cosigned(origin: checkpoint.origin)
        let currentSize = current?.size ?? 0
        guard old == currentSize else { return .size(currentSize) }
        if let current, old == checkpoint.size {
            guard current.root == checkpoint.root else { return .size(currentSize) }
        }
        if old == 0 {
            guard proof.isEmpty else { return .refused(422, "a consistency proof from size 0 must be empty") }
        } else if old < checkpoint.size {
            guard let current, MerkleTree.verifyConsistency(old: old, new: checkpoint.size, oldRoot: current.root, newRoot: checkpoint.root, proof: proof) else {
                return .refused(422, "the consistency proof from \(old) to \(checkpoint.size) does not verify")
            }
        }
        // Compare-and-set: the state moves only from the size this request was checked against.
        let at = ISO8601Timestamp.string(from: now())
        let root = Data(checkpoint.root).base64EncodedString()
        let moved = if current == nil {
            try await state.execute(
                "INSERT INTO witness_logs (origin, size, root, note, at) VALUES (\(checkpoint.origin), \(checkpoint.size), \(root), \(noteText), \(at)) ON CONFLICT (origin) DO NOTHING")
        } else {
            try await state.execute(
                "UPDATE witness_logs SET size = \(checkpoint.size), root = \(root), note = \(noteText), at = \(at) WHERE origin = \(checkpoint.origin) AND size = \(old)")
        }
        guard moved == 1 else { return .size(try await cosigned(origin: checkpoint.origin)?.size ?? 0) }
        let time = UInt64(max(0, now().timeIntervalSince1970.rounded(.down)))
        let signature = try Cosignature.sign(body: note.text, name: name, key: key.privateKey, time: time)
        return Answer(status: 200, contentType: "text/plain; charset=utf-8", body: SignedNote.line(signature))
    }
}
