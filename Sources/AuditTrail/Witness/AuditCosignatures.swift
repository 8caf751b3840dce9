import DatabaseAccess
import Foundation
import PhotosModel

/// Which witnesses' cosignatures a checkpoint needs before photosd serves it (`audit.witnesses`,
/// `audit.witnessQuorum`): `/v1/log/checkpoint` and receipts use the newest checkpoint cosigned
/// by at least `quorum` of `keys`.
public struct WitnessPolicy: Sendable, Equatable {
    /// The witnesses' cosigner keys, as configured.
    public var keys: [CosignerKey]
    /// How many of them must have cosigned (1 … `keys.count`).
    public var quorum: Int

    /// A policy; nil for no witnesses (the newest checkpoint is served as the log signed it).
    public init?(keys: [CosignerKey], quorum: Int) {
        guard !keys.isEmpty else { return nil }
        self.keys = keys
        self.quorum = min(max(1, quorum), keys.count)
    }
}

/// The witnesses' cosignatures of the log's checkpoints (`audit_cosignatures`, migration 0022):
/// one line per checkpoint and witness key, appended to the checkpoint's note (which never
/// changes) when it is served.
public enum AuditCosignatures {
    /// A checkpoint as it is served: its note with the cosignature lines after the log's own.
    public struct Served: Sendable, Equatable {
        /// The checkpoint's number.
        public var number: Int64
        /// The log's size it signed.
        public var size: Int64
        /// The signed note, cosignature lines included.
        public var note: String
        /// How many cosignature lines the note carries.
        public var cosignatures: Int
    }

    /// The checkpoint to serve, in the caller's snapshot: with `policy`, the newest one that at
    /// least `policy.quorum` of its witnesses cosigned; without, the newest that signed the log.
    /// Nil when there is none (yet).
    public static func served(_ policy: WitnessPolicy?, on connection: any DatabaseConnection) async throws -> Served? {
        let number: Int64
        if let policy {
            // Walks the cosignatures from the newest checkpoint down (their primary key) to the
            // first with the quorum.
            guard let row = try await connection.queryOne(
                """
                SELECT checkpoint FROM audit_cosignatures WHERE witness_key IN (\(list: policy.keys.map(\.description)))
                GROUP BY checkpoint HAVING count(*) >= \(policy.quorum) ORDER BY checkpoint DESC LIMIT 1
                """) else { return nil }
            number = try row.int64("checkpoint")
        } else {
            guard let row = try await connection.queryOne(
                "SELECT number FROM audit_checkpoints WHERE note IS NOT NULL ORDER BY number DESC LIMIT 1") else { return nil }
            number = try row.int64("number")
        }
        guard let checkpoint = try await connection.queryOne("SELECT tree_size, note FROM audit_checkpoints WHERE number = \(number)") else { return nil }
        let lines = try await connection.query("SELECT line FROM audit_cosignatures WHERE checkpoint = \(number) ORDER BY witness_key")
            .map { try $0.string("line") }
        return Served(number: number, size: try checkpoint.int64("tree_size"), note: try checkpoint.string("note") + lines.joined(), cosignatures: lines.count)
    }

    /// The newest checkpoint, for a witness to cosign: its number, size and note as signed.
    public static func newestSigned(on connection: any DatabaseConnection) async throws -> (number: Int64, size: Int64, note: String)? {
        guard let row = try await connection.queryOne(
            "SELECT number, tree_size, note FROM audit_checkpoints WHERE note IS NOT NULL ORDER BY number DESC LIMIT 1") else { return nil }
        return (try row.int64("number"), try row.int64("tree_size"), try row.string("note"))
    }

    /// The newest checkpoint `witness` cosigned and its size, if any.
    public static func newest(cosignedBy witness: CosignerKey, on connection: any DatabaseConnection) async throws -> (checkpoint: Int64, size: Int64)? {
        guard let row = try await connection.queryOne(
            "SELECT checkpoint, tree_size FROM audit_cosignatures WHERE witness_key = \(witness.description) ORDER BY checkpoint DESC LIMIT 1") else { return nil }
        return (try row.int64("checkpoint"), try row.int64("tree_size"))
    }

    /// What `store` did with a cosignature line.
    public enum Stored: Sendable, Equatable {
        /// Stored: the checkpoint's note is served with it from now on.
        case stored
        /// The witness's cosignature of this checkpoint was stored before (another instance
        /// stored it first); this one is left.
        case alreadyStored
        /// Not stored: the line is not `witness`'s cosignature of the checkpoint (why, in words).
        case refused(String)
    }

    /// Stores `witness`'s cosignature `line` (one signature line, newline included) of
    /// checkpoint `number`, which must verify over the checkpoint's note; a second one of the
    /// same witness and checkpoint is ignored (another instance stored it first). A line that
    /// does not verify is an outcome, not an error: a witness's answer is input.
    @discardableResult
    public static func store(
        _ line: String, of witness: CosignerKey, checkpoint number: Int64, at: String, on connection: any DatabaseConnection
    ) async throws -> Stored {
        guard let row = try await connection.queryOne("SELECT tree_size, note FROM audit_checkpoints WHERE number = \(number)") else {
            throw PhotosError.notFound("no checkpoint \(number)")
        }
        guard let note = try? SignedNote(parsing: try row.string("note") + line) else {
            return .refused("the cosignature of \(witness.name) is not a signature line that checkpoint \(number)'s note can carry")
        }
        guard witness.cosignedTime(of: note) != nil else {
            return .refused("the cosignature of \(witness.name) does not verify over checkpoint \(number)")
        }
        let inserted = try await connection.execute(
            """
            INSERT INTO audit_cosignatures (checkpoint, witness_key, tree_size, line, at) VALUES (\(number), \(witness.description), \(try row.int64("tree_size")), \(line), \(at))
            ON CONFLICT (checkpoint, witness_key) DO NOTHING
            """)
        return inserted == 1 ? .stored : .alreadyStored
    }
}
