import DatabaseAccess
import PhotosModel

/// Re-checks the audit trail, streaming (memory stays flat however long a trail is; it holds one
/// entry per trail that a checkpoint covers), and names the first thing that does not check out:
///
/// 1. rows up to the cut-over (`audit_chain_cutover`), in id order, against the first version's
///    single global chain;
/// 2. the checkpoints: numbers 1, 2, 3 … without gaps, each chained to the one before, each
///    signed by the trusted key; and an exported checkpoint (`against`), which the database
///    must still hold;
/// 3. every trail in (trail, seq) order: seq 1, 2, 3 … without gaps; each later row chained to
///    the trail's row before it and hashed over its contents; the row a checkpoint signed still
///    there with the hash it signed; the trail not ending before the seq its newest checkpoint
///    signed; and no trail that a checkpoint names missing.
struct AuditVerifier {
    let connection: any DatabaseConnection
    let publicKey: AuditPublicKey?
    let against: AuditCheckpoint?
    /// Told the number of trail rows checked so far, every `progressEvery` rows.
    var progress: (@Sendable (Int) -> Void)? = nil
    static let progressEvery = 10_000

    /// What a checkpoint signed about one trail.
    private struct Covered {
        var seq: Int
        var hash: String
        var checkpoint: Int
    }

    private struct Failure: Error {
        let problem: AuditLog.Problem
    }

    func run() async throws -> AuditLog.Verification {
        var verification = AuditLog.Verification(rowsChecked: 0)
        do {
            let hasV2 = try await connection.tableExists("audit_chain_cutover")
            let cutover = hasV2
                ? try await connection.queryOne("SELECT global_chain_until_id FROM audit_chain_cutover")?.int64(0) ?? 0
                : Int64.max
            try await checkGlobalChain(upTo: cutover)
            var covered: [String: Covered] = [:]
            if hasV2 { verification.checkpointsChecked = try await checkCheckpoints(into: &covered) }
            verification.rowsChecked = try await checkTrails(cutover: cutover, covered: &covered)
        } catch let failure as Failure {
            verification.problem = failure.problem
        }
        return verification
    }

    // MARK: 1. The first version's global chain

    private func checkGlobalChain(upTo cutover: Int64) async throws {
        var previousHash = AuditLog.genesisHash
        try await connection.forEachRow(
            "SELECT id, session_id, seq, at, actor, user_id, username, coordinator, step, screen, detail, prev_hash, hash FROM audit_events WHERE id <= ? ORDER BY id",
            arguments: [cutover]
        ) { row in
            let fields = try Self.fields(row)
            if try row.string(11) != previousHash {
                throw rowFailure(row, "prev_hash does not match the row before it (a row was deleted or inserted)")
            }
            if try row.string(12) != fields.hash(previous: previousHash) {
                throw rowFailure(row, "hash does not match the row's contents (the row was altered)")
            }
            previousHash = try row.string(12)
        }
    }

    // MARK: 2. Checkpoints

    private func checkCheckpoints(into covered: inout [String: Covered]) async throws -> Int {
        var expected = 1
        var previousHash = AuditLog.genesisHash
        var previousCovers: Int64 = 0
        var foundAgainst = false
        try await connection.forEachRow(
            "SELECT number, at, prev_hash, covers_until_id, heads, public_key, signature, hash FROM audit_checkpoints ORDER BY number"
        ) { row in
            let number = try row.int(0)
            func fail(_ reason: String) -> Failure { Failure(problem: AuditLog.Problem(checkpoint: number, reason: reason)) }
            guard number == expected else {
                throw Failure(problem: AuditLog.Problem(checkpoint: expected, reason: "missing: the checkpoints go from \(expected - 1) to \(number) (a checkpoint was deleted)"))
            }
            guard let checkpoint = try? AuditCheckpoints.checkpoint(row) else { throw fail("its heads are not readable (the checkpoint was altered)") }
            guard checkpoint.prevHash == previousHash else { throw fail("prev_hash does not match checkpoint \(number - 1) (a checkpoint was deleted, inserted or altered)") }
            guard checkpoint.coversUntilID >= previousCovers else { throw fail("covers fewer rows than checkpoint \(number - 1) (altered)") }
            let statement = checkpoint.statement
            guard AuditCheckpoint.hash(statement: statement, signature: checkpoint.signature) == checkpoint.hash else {
                throw fail("hash does not match its contents (the checkpoint was altered)")
            }
            guard let publicKey else {
                throw fail("there is no trusted public key to check its signature: give --public-key (photos-admin audit key prints it), or keep the signing key at audit.signingKeyPath (a relative path is the database directory's)")
            }
            guard publicKey.isValidSignature(checkpoint.signature, for: statement) else {
                throw fail("its signature does not verify with public key \(publicKey.hex.prefix(16))… (signed by another key, or altered)")
            }
            if let against, against.number == number {
                guard against.hash == checkpoint.hash else { throw fail("differs from the exported checkpoint \(number) (hash \(against.hash.prefix(16))…)") }
                foundAgainst = true
            }
            for head in checkpoint.heads {
                covered[head.trail] = Covered(seq: head.seq, hash: head.hash, checkpoint: number)
            }
            previousHash = checkpoint.hash
            previousCovers = checkpoint.coversUntilID
            expected += 1
        }
        if let against {
            guard let publicKey, publicKey.isValidSignature(against.signature, for: against.statement),
                  AuditCheckpoint.hash(statement: against.statement, signature: against.signature) == against.hash
            else {
                throw Failure(problem: AuditLog.Problem(checkpoint: against.number, reason: "the exported checkpoint does not verify with the trusted public key"))
            }
            guard foundAgainst else {
                throw Failure(problem: AuditLog.Problem(
                    checkpoint: against.number,
                    reason: "the database holds checkpoints up to \(expected - 1) only; the exported checkpoint \(against.number) and what it covered are gone (the newest checkpoints were deleted)"))
            }
        }
        return expected - 1
    }

    // MARK: 3. Trails

    private func checkTrails(cutover: Int64, covered: inout [String: Covered]) async throws -> Int {
        var checked = 0
        var trail: String?
        var lastSeq = 0
        var lastHash = AuditLog.genesisHash
        func finishTrail() throws {
            guard let trail else { return }
            if let signed = covered.removeValue(forKey: trail), signed.seq > lastSeq {
                throw Failure(problem: AuditLog.Problem(
                    sessionID: trail,
                    reason: "ends at seq \(lastSeq) but checkpoint \(signed.checkpoint) signed it up to seq \(signed.seq) (its newest rows were removed)"))
            }
        }

        try await connection.forEachRow(
            "SELECT id, session_id, seq, at, actor, user_id, username, coordinator, step, screen, detail, prev_hash, hash FROM audit_events ORDER BY session_id, seq"
        ) { row in
            let rowTrail = try row.string(1)
            if rowTrail != trail {
                try finishTrail()
                trail = rowTrail
                lastSeq = 0
                lastHash = AuditLog.genesisHash
            }
            checked += 1
            if checked % Self.progressEvery == 0 { progress?(checked) }
            let seq = try row.int(2)
            guard seq == lastSeq + 1 else {
                throw rowFailure(row, "seq \(seq) follows \(lastSeq) (a row was deleted or inserted)")
            }
            if try row.int64(0) > cutover {
                if try row.string(11) != lastHash {
                    throw rowFailure(row, "prev_hash does not match the trail's row before it (a row was deleted, inserted or moved)")
                }
                if try row.string(12) != Self.fields(row).hash(previous: lastHash) {
                    throw rowFailure(row, "hash does not match the row's contents (the row was altered)")
                }
            }
            if let signed = covered[rowTrail], signed.seq == seq, try row.string(12) != signed.hash {
                throw rowFailure(row, "differs from what checkpoint \(signed.checkpoint) signed (altered, or the trail's hashes recomputed without the key)")
            }
            lastSeq = seq
            lastHash = try row.string(12)
        }
        try finishTrail()
        if let missing = covered.min(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
            throw Failure(problem: AuditLog.Problem(
                sessionID: missing.key,
                reason: "checkpoint \(missing.value.checkpoint) signed it up to seq \(missing.value.seq) but it has no rows (the whole trail was deleted)"))
        }
        return checked
    }

    // MARK: Helpers

    static func fields(_ row: Row) throws -> AuditRecord {
        AuditRecord(
            sessionID: try row.string(1), seq: try row.int(2), at: try row.string(3), actor: try row.string(4),
            userID: row.optionalInt64(5), username: row.optionalString(6), coordinator: row.optionalString(7),
            step: try row.string(8), screen: row.optionalString(9), detail: try row.string(10))
    }

    private func rowFailure(_ row: Row, _ reason: String) -> Failure {
        Failure(problem: AuditLog.Problem(rowID: row.optionalInt64(0), sessionID: row.optionalString(1), seq: row.optionalInt(2), reason: reason))
    }
}
