import DatabaseAccess
import Foundation
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
///    signed; and no trail that a checkpoint names missing;
/// 4. every user's name against what the chain holds of it: the commitment in their
///    `user.created` step (or, for users created before migration 0011, the clear name that step
///    recorded). Erased users are skipped: their name is gone, which is the point.
///
/// Rows moved to archives (`AuditArchiver`) are proven through the archives' signed statements:
/// each archive's segments in `audit_archived_trails` must match the digest its statement signed,
/// a reserved trail goes on from its last archived segment, and a checkpoint's head that was
/// archived must lie in a segment. Given the archive files (`archivePaths`), their rows are
/// checked too, in archive order before the live rows, as one history (see `checkArchiveFiles`).
///
/// A row listed in `audit_redactions` (a row from before 0011 that named a user since erased,
/// and lost that name) is chained like any other, but its hash is not recomputed: the content it
/// covered is gone. The listing must name an erased user.
struct AuditVerifier {
    let connection: any DatabaseConnection
    let publicKey: AuditPublicKey?
    let against: AuditCheckpoint?
    /// Told the number of trail rows checked so far, every `progressEvery` rows.
    var progress: (@Sendable (Int) -> Void)? = nil
    static let progressEvery = 10_000
    /// Archive files to check with the live database, as one history (any order).
    var archivePaths: [String] = []
    /// Opens an archive file read-only.
    var openArchive: (@Sendable (String) throws -> any DatabaseConnection)? = nil
    /// Opens a scratch database for what the checkpoints signed (nil: kept in memory).
    var openScratch: (@Sendable () throws -> any DatabaseConnection)? = nil
    /// Now, to tell an archive being written from an interrupted one.
    var now: @Sendable () -> Date = Date.init

    /// What a checkpoint signed about one trail.
    struct Covered {
        var seq: Int
        var hash: String
        var checkpoint: Int
    }

    struct Failure: Error {
        let problem: AuditChains.Problem
    }

    func run() async throws -> AuditChains.Verification {
        var verification = AuditChains.Verification(rowsChecked: 0)
        do {
            let hasV2 = try await connection.tableExists("audit_chain_cutover")
            let cutover = hasV2
                ? try await connection.queryOne("SELECT global_chain_until_id FROM audit_chain_cutover")?.int64("global_chain_until_id") ?? 0
                : Int64.max
            let redacted = try await redactedRows()
            try await checkGlobalChain(upTo: cutover, redacted: redacted)
            let covered = try await CoveredHeads(scratch: try openScratch?())
            var chain = KeyChain(keys: publicKey.map { [$0] } ?? [], rotations: [])
            var signedTrees: [SignedTree] = []
            if hasV2 { verification.checkpointsChecked = try await checkCheckpoints(into: covered, keys: &chain, trees: &signedTrees) }
            verification.keyRotations = chain.rotations
            verification.currentKey = chain.keys.last
            var continuations: [String: Head] = [:]
            if try await connection.tableExists("audit_archives") {
                let archives = try await checkArchiveRecords(into: &verification, keys: chain.keys)
                continuations = try await liveContinuations()
                if !archivePaths.isEmpty {
                    let carried = try await checkArchiveFiles(archives, covered: covered, verification: &verification)
                    for (trail, head) in continuations where carried[trail] != head {
                        throw Failure(problem: AuditChains.Problem(
                            sessionID: trail, reason: "goes on after seq \(head.seq) in this database's segments, but the archives end it at seq \(carried[trail]?.seq ?? 0)"))
                    }
                }
            } else if !archivePaths.isEmpty {
                throw Failure(problem: AuditChains.Problem(reason: "this database has no archives (its schema predates them), yet --archive was given"))
            }
            verification.rowsChecked += try await checkTrails(cutover: cutover, covered: covered, redacted: redacted, continuations: continuations)
            // After the trails, which name an altered row more exactly than its leaf would.
            if try await connection.tableExists("audit_log") {
                verification.logLeavesChecked = try await checkLog(signedTrees)
            }
            if try await !covered.isEmpty, try await connection.tableExists("audit_archived_trails") { try await resolveArchived(covered) }
            if let missing = try await covered.first() {
                throw Failure(problem: AuditChains.Problem(
                    sessionID: missing.trail,
                    reason: "checkpoint \(missing.covered.checkpoint) signed it up to seq \(missing.covered.seq) but it has no rows (the whole trail was deleted)"))
            }
            if try await connection.tableExists("audit_redactions") {
                try await checkNames()
                verification.redactedRows = try await connection.queryOne(
                    "SELECT count(*) AS redacted FROM audit_events e JOIN users u ON u.id = e.user_id WHERE u.erased_at IS NOT NULL")?.int("redacted") ?? 0
                verification.redactedRows += try await connection.queryOne(
                    "SELECT count(*) AS redacted FROM audit_redactions r JOIN audit_events e ON e.id = r.event_id WHERE e.user_id IS NULL")?.int("redacted") ?? 0
                verification.redactedBeforeCommitments = redacted.listed.count
            }
        } catch let failure as Failure {
            verification.problem = failure.problem
        }
        return verification
    }

    // MARK: 1. The first version's global chain

    private func checkGlobalChain(upTo cutover: Int64, redacted: Redactions) async throws {
        var previousHash = AuditChains.genesisHash
        try await connection.forEachRow(
            "SELECT id, session_id, seq, at, actor, user_id, username, coordinator, step, screen, detail, prev_hash, hash FROM audit_events WHERE id <= \(cutover) ORDER BY id"
        ) { row in
            let fields = try Self.fields(row)
            if try row.string("prev_hash") != previousHash {
                throw rowFailure(row, "prev_hash does not match the row before it (a row was deleted or inserted)")
            }
            if try !redacted.skipsContentHash(row), try row.string("hash") != fields.hash(previous: previousHash) {
                throw rowFailure(row, "hash does not match the row's contents (the row was altered)")
            }
            previousHash = try row.string("hash")
        }
    }

    // MARK: 2. Checkpoints

    /// The chain of signing keys, from the trusted one: each rotation checkpoint (signed by the
    /// key before it) names the next.
    struct KeyChain {
        /// Every key the chain went through, oldest first.
        var keys: [AuditPublicKey]
        /// Checkpoints that rotated the key.
        var rotations: [Int]
    }

    private func checkCheckpoints(into covered: CoveredHeads, keys chain: inout KeyChain, trees: inout [SignedTree]) async throws -> Int {
        var expected = 1
        // Who must have signed the next checkpoint: the trusted key, then each rotation's next.
        var signer = publicKey
        var signerOfAgainst: AuditPublicKey?
        var previousHash = AuditChains.genesisHash
        var previousCovers: Int64 = 0
        var foundAgainst = false
        try await covered.beginBatch()
        try await connection.forEachRow(
            "SELECT \(raw: AuditCheckpoints.columns) FROM audit_checkpoints ORDER BY number"
        ) { row in
            let number = try row.int("number")
            func fail(_ reason: String) -> Failure { Failure(problem: AuditChains.Problem(checkpoint: number, reason: reason)) }
            guard number == expected else {
                throw Failure(problem: AuditChains.Problem(checkpoint: expected, reason: "missing: the checkpoints go from \(expected - 1) to \(number) (a checkpoint was deleted)"))
            }
            guard let checkpoint = try? AuditCheckpoints.checkpoint(row) else { throw fail("its heads are not readable (the checkpoint was altered)") }
            guard checkpoint.prevHash == previousHash else { throw fail("prev_hash does not match checkpoint \(number - 1) (a checkpoint was deleted, inserted or altered)") }
            guard checkpoint.coversUntilID >= previousCovers else { throw fail("covers fewer rows than checkpoint \(number - 1) (altered)") }
            let statement = checkpoint.statement
            guard AuditCheckpoint.hash(statement: statement, signature: checkpoint.signature) == checkpoint.hash else {
                throw fail("hash does not match its contents (the checkpoint was altered)")
            }
            guard let key = signer else {
                throw fail("there is no trusted public key to check its signature: give --public-key (photos-admin audit key prints it), or keep the signing key at audit.signingKeyPath (a relative path is the database directory's)")
            }
            guard key.isValidSignature(checkpoint.signature, for: statement) else {
                let whose = chain.rotations.isEmpty ? "" : " (the key checkpoint \(chain.rotations.last ?? 0) rotated to)"
                throw fail("its signature does not verify with public key \(key.hex.prefix(16))…\(whose) (signed by another key, or altered)")
            }
            if let against, against.number == number {
                guard against.hash == checkpoint.hash else { throw fail("differs from the exported checkpoint \(number) (hash \(against.hash.prefix(16))…)") }
                foundAgainst = true
                signerOfAgainst = key
            }
            if let size = checkpoint.treeSize, let root = checkpoint.treeRoot {
                trees.append(SignedTree(
                    checkpoint: number, size: size, root: root, note: checkpoint.note ?? "", signer: key,
                    next: checkpoint.nextPublicKey.flatMap { try? AuditPublicKey(hex: $0) }))
            }
            if let next = checkpoint.nextPublicKey {
                guard let nextKey = try? AuditPublicKey(hex: next) else { throw fail("names a next signing key that is not a public key (altered)") }
                signer = nextKey
                chain.keys.append(nextKey)
                chain.rotations.append(number)
            }
            for head in checkpoint.heads {
                try await covered.set(head.trail, Covered(seq: head.seq, hash: head.hash, checkpoint: number))
            }
            previousHash = checkpoint.hash
            previousCovers = checkpoint.coversUntilID
            expected += 1
        }
        try await covered.endBatch()
        if let against {
            guard let key = signerOfAgainst ?? publicKey, key.isValidSignature(against.signature, for: against.statement),
                  AuditCheckpoint.hash(statement: against.statement, signature: against.signature) == against.hash
            else {
                throw Failure(problem: AuditChains.Problem(checkpoint: against.number, reason: "the exported checkpoint does not verify with the trusted public key"))
            }
            guard foundAgainst else {
                throw Failure(problem: AuditChains.Problem(
                    checkpoint: against.number,
                    reason: "the database holds checkpoints up to \(expected - 1) only; the exported checkpoint \(against.number) and what it covered are gone (the newest checkpoints were deleted)"))
            }
        }
        return expected - 1
    }

    // MARK: 3. Trails

    private func checkTrails(cutover: Int64, covered: CoveredHeads, redacted: Redactions, continuations: [String: Head]) async throws -> Int {
        var checked = 0
        var trail: String?
        var lastSeq = 0
        var lastHash = AuditChains.genesisHash
        /// What a checkpoint signed of the trail being walked.
        var signedHere: Covered?
        func finishTrail() async throws {
            guard let trail else { return }
            if let signed = try await covered.remove(trail), signed.seq > lastSeq {
                throw Failure(problem: AuditChains.Problem(
                    sessionID: trail,
                    reason: "ends at seq \(lastSeq) but checkpoint \(signed.checkpoint) signed it up to seq \(signed.seq) (its newest rows were removed)"))
            }
        }

        try await connection.forEachRow(
            "SELECT id, session_id, seq, at, actor, user_id, username, coordinator, step, screen, detail, prev_hash, hash FROM audit_events ORDER BY session_id, seq"
        ) { row in
            let rowTrail = try row.string("session_id")
            if rowTrail != trail {
                try await finishTrail()
                trail = rowTrail
                signedHere = try await covered.get(rowTrail)
                // A reserved trail whose older rows were archived goes on from there.
                lastSeq = continuations[rowTrail]?.seq ?? 0
                lastHash = continuations[rowTrail]?.hash ?? AuditChains.genesisHash
            }
            checked += 1
            if checked % Self.progressEvery == 0 { progress?(checked) }
            let seq = try row.int("seq")
            guard seq == lastSeq + 1 else {
                throw rowFailure(row, "seq \(seq) follows \(lastSeq) (a row was deleted or inserted)")
            }
            if try row.int64("id") > cutover {
                if try row.string("prev_hash") != lastHash {
                    throw rowFailure(row, "prev_hash does not match the trail's row before it (a row was deleted, inserted or moved)")
                }
                if try !redacted.skipsContentHash(row), try row.string("hash") != Self.fields(row).hash(previous: lastHash) {
                    throw rowFailure(row, "hash does not match the row's contents (the row was altered)")
                }
            }
            if let signed = signedHere, signed.seq == seq, try row.string("hash") != signed.hash {
                throw rowFailure(row, "differs from what checkpoint \(signed.checkpoint) signed (altered, or the trail's hashes recomputed without the key)")
            }
            lastSeq = seq
            lastHash = try row.string("hash")
        }
        try await finishTrail()
        return checked
    }

    // MARK: 4. Names

    /// The rows listed as redacted (few: only rows from before 0011 that named an erased user);
    /// each listing must name an erased user (the rest of the rule: `Redactions`).
    private func redactedRows() async throws -> Redactions {
        var rows = Redactions(boundID: try await redactionBound())
        guard try await connection.tableExists("audit_redactions") else { return rows }
        try await connection.forEachRow(
            "SELECT r.event_id, r.user_id, u.erased_at FROM audit_redactions r LEFT JOIN users u ON u.id = r.user_id ORDER BY r.event_id"
        ) { row in
            guard try row.optionalString("erased_at") != nil else {
                throw Failure(problem: AuditChains.Problem(
                    rowID: try row.optionalInt64("event_id"),
                    reason: "listed as redacted for user \(try row.optionalInt64("user_id") ?? 0), who is not erased (a name was removed from the trail without an erasure)"))
            }
            rows.listed[try row.int64("event_id")] = try row.int64("user_id")
        }
        return rows
    }

    /// Each user that is not erased has the name their `user.created` step committed to.
    private func checkNames() async throws {
        try await connection.forEachRow(
            """
            SELECT u.id, u.username, u.name_salt, e.username AS recorded_username, e.detail
            FROM users u JOIN audit_events e ON e.user_id = u.id AND e.step = 'user.created'
            WHERE u.erased_at IS NULL ORDER BY u.id
            """
        ) { row in
            try Self.checkName(userID: try row.int64("id"), name: try row.string("username"), salt: try row.optionalString("name_salt"), recorded: try row.optionalString("recorded_username"), detail: try row.string("detail"))
        }
    }

    /// Whether a user's `name` (with their `salt`) is the one their `user.created` step (its
    /// `detail`, and the clear name a step before 0011 `recorded`) committed to.
    static func checkName(userID: Int64, name: String, salt: String?, recorded: String?, detail: String) throws {
        let committed = (try? JSONDecoder().decode(CreatedDetail.self, from: Data(detail.utf8)))?.nameCommitment
        let matches: Bool
        if let committed {
            matches = salt.map { NameCommitment.of(name: name, salt: $0) == committed } ?? false
        } else {
            // Created before 0011: the step recorded the clear name.
            matches = recorded == name
        }
        guard matches else {
            throw Failure(problem: AuditChains.Problem(
                reason: "user \(userID)'s name is not the one their user.created step committed to (the users row was altered)"))
        }
    }

    /// What `checkNames` reads of a `user.created` step's detail.
    private struct CreatedDetail: Decodable {
        var nameCommitment: String?
    }

    // MARK: Helpers

    static func fields(_ row: Row) throws -> AuditRecord {
        AuditRecord(
            sessionID: try row.string("session_id"), seq: try row.int("seq"), at: try row.string("at"), actor: try row.string("actor"),
            userID: try row.optionalInt64("user_id"), username: try row.optionalString("username"), coordinator: try row.optionalString("coordinator"),
            step: try row.string("step"), screen: try row.optionalString("screen"), detail: try row.string("detail"))
    }

    func rowFailure(_ row: Row, _ reason: String) -> Failure {
        Failure(problem: AuditChains.Problem(
            rowID: try? row.optionalInt64("id"), sessionID: try? row.optionalString("session_id"), seq: try? row.optionalInt("seq"), reason: reason))

    }
}
