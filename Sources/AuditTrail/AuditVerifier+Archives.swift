import DatabaseAccess
import Foundation
import PhotosModel

/// The archives' part of `AuditVerifier`.
extension AuditVerifier {
    /// A trail's last row: its seq and hash.
    struct Head: Equatable {
        var seq: Int
        var hash: String
    }

    /// A finished archive as the live database recorded it.
    struct ArchiveRecord {
        var statement: AuditArchiveStatement
        var path: String
    }

    private func archiveFailure(_ number: Int, _ reason: String) -> Failure {
        Failure(problem: AuditChains.Problem(archive: number, reason: reason))
    }

    /// The archives the live database recorded: numbered without gaps, chained, signed by the
    /// trusted key, and each one's segments in `audit_archived_trails` exactly those its
    /// statement signed. An archive still being written (its lease held) is reported; one
    /// interrupted is a problem until `audit archive` finishes it.
    /// `keys`: the chain of signing keys the checkpoints went through, from the trusted one; an
    /// archive's statement is signed by the key in use when it was written, one of them.
    func checkArchiveRecords(into verification: inout AuditChains.Verification, keys: [AuditPublicKey]) async throws -> [Int: ArchiveRecord] {
        var records: [Int: ArchiveRecord] = [:]
        var expected = 1
        var previousHash = AuditChains.genesisHash
        let rows = try await connection.query(
            "SELECT path, finished_at, \(raw: AuditArchiveStatement.liveColumns) FROM audit_archives ORDER BY number")
        for row in rows {
            let number = try row.int("number")
            let path = try row.string("path")
            guard number == expected else {
                throw archiveFailure(expected, "missing: the archives go from \(expected - 1) to \(number) (an archive's record was deleted)")
            }
            expected += 1
            guard try row.optionalString("finished_at") != nil else {
                let held = try await MaintenanceLease.isHeld(AuditArchiver.lease, now: now(), on: connection)
                guard held, number == rows.count else {
                    throw archiveFailure(number, "was interrupted while its rows moved to \(path).partial: run photos-admin audit archive to finish it")
                }
                verification.archiveInProgress = number
                continue
            }
            let statement = try AuditArchiveStatement.statement(row)
            guard let publicKey else {
                throw archiveFailure(number, "there is no trusted public key to check its signature: give --public-key, or keep the signing key at audit.signingKeyPath")
            }
            guard keys.contains(where: { statement.isSigned(by: $0) }) else {
                throw archiveFailure(
                    number, "its signed statement does not verify with public key \(publicKey.hex.prefix(16))…\(keys.count > 1 ? " or the keys it was rotated to" : "") (signed by another key, or altered)")
            }
            guard statement.prevHash == previousHash else {
                throw archiveFailure(number, "its statement does not chain to archive \(number - 1) (a record was altered or replaced)")
            }
            var segments = AuditArchiveDigest()
            try await connection.forEachRow(
                "SELECT trail, first_seq, last_seq, last_hash FROM audit_archived_trails WHERE archive = \(number) ORDER BY trail, first_seq"
            ) { segments.add(segment: try AuditArchiveSegment.segment($0)) }
            guard segments.count == statement.segments, segments.hex == statement.segmentsDigest else {
                throw archiveFailure(number, "the segments this database lists for it are not those its statement signed (rows were removed and listed as archived, or a listing was altered)")
            }
            previousHash = statement.hash
            records[number] = ArchiveRecord(statement: statement, path: path)
            verification.archives += 1
            verification.archivedRows += statement.rows
        }
        return records
    }

    /// Where each reserved trail goes on: the last seq and hash of its newest archived segment.
    /// (A session's trail moves whole; a session row after a segment is a trail broken.)
    func liveContinuations() async throws -> [String: Head] {
        var heads: [String: Head] = [:]
        for trail in [AuditTrails.apiSession, AuditTrails.operatorSession] {
            if let head = try await AuditChains.archivedHead(of: trail, on: connection) {
                heads[trail] = Head(seq: head.seq, hash: head.hash)
            }
        }
        return heads
    }

    /// Checkpoint heads of trails with no live rows at that seq: each must lie in an archived
    /// segment (and, at a segment's end, have its hash). Reads the segments once, in order.
    func resolveArchived(_ covered: CoveredHeads) async throws {
        try await connection.forEachRow(
            "SELECT trail, first_seq, last_seq, last_hash FROM audit_archived_trails ORDER BY trail, first_seq"
        ) { row in
            let segment = try AuditArchiveSegment.segment(row)
            guard let signed = try await covered.get(segment.trail), signed.seq >= segment.firstSeq, signed.seq <= segment.lastSeq else { return }
            if signed.seq == segment.lastSeq, signed.hash != segment.lastHash {
                throw Failure(problem: AuditChains.Problem(
                    sessionID: segment.trail,
                    reason: "its archived segment ends with a hash other than the one checkpoint \(signed.checkpoint) signed at seq \(signed.seq)"))
            }
            try await covered.remove(segment.trail)
        }
    }

    /// The archive files, checked with the live database as one history: each file's statement
    /// is one this database recorded (same hash, so not another database's or altered), every
    /// recorded archive is given, and each file's rows — read in (trail, seq) order, archive
    /// after archive — are whole, chained (a reserved trail from where the previous archive left
    /// it), hashed over their contents, match what checkpoints signed, and are exactly the rows
    /// its statement's digest signed. Returns where the reserved trails end in the archives.
    func checkArchiveFiles(
        _ records: [Int: ArchiveRecord], covered: CoveredHeads, verification: inout AuditChains.Verification
    ) async throws -> [String: Head] {
        guard let openArchive else { return [:] }
        var files: [Int: String] = [:]
        for path in archivePaths {
            let file = try openArchive(path)
            let columns = (try? await AuditArchiveFile.hasSessionColumns(file)) == true ? AuditArchiveStatement.columns : AuditArchiveStatement.version1Columns
            guard let row = try? await file.queryOne("SELECT \(raw: columns) FROM archive"),
                  let statement = try? AuditArchiveStatement.statement(row)
            else {
                throw Failure(problem: AuditChains.Problem(reason: "\(path) is not a finished archive (it holds no signed statement)"))
            }
            guard let record = records[statement.number] else {
                throw archiveFailure(statement.number, "\(path) says it is archive \(statement.number), which this database never finished: an archive of another database")
            }
            guard record.statement == statement else {
                throw archiveFailure(statement.number, "\(path) is not this database's archive \(statement.number): its signed statement differs from the one this database recorded (hash \(record.statement.hash.prefix(16))…); an archive of another database, or altered")
            }
            if let other = files[statement.number] { throw archiveFailure(statement.number, "given twice: \(other) and \(path)") }
            files[statement.number] = path
        }
        if let missing = records.keys.sorted().first(where: { files[$0] == nil }), let record = records[missing] {
            throw archiveFailure(missing, "is missing (written to \(record.path), rows before \(record.statement.before)): give it with --archive")
        }
        var carried: [String: Head] = [:]
        for number in files.keys.sorted() {
            guard let path = files[number], let statement = records[number]?.statement else { continue }
            let file = try openArchive(path)
            verification.archiveRowsChecked += try await checkArchiveRows(file, path: path, statement: statement, carried: &carried, covered: covered)
            var segments = AuditArchiveDigest()
            try await file.forEachRow("SELECT trail, first_seq, last_seq, last_hash FROM audit_archived_trails ORDER BY trail, first_seq") {
                segments.add(segment: try AuditArchiveSegment.segment($0))
            }
            guard segments.count == statement.segments, segments.hex == statement.segmentsDigest else {
                throw archiveFailure(number, "\(path): its segments are not those its statement signed (altered)")
            }
            if let signedSessions = statement.sessionsDigest {
                let sessions = try await AuditArchiveFile.sessionsDigest(file)
                guard sessions.count == statement.sessions, sessions.hex == signedSessions else {
                    throw archiveFailure(
                        number, "\(path): its sessions are not those its statement signed (\(sessions.count) sessions, the statement says \(statement.sessions ?? 0): a session was altered, added or deleted)")
                }
            } else {
                verification.archivesWithUnsignedSessions.append(number)
            }
            verification.archivesChecked += 1
        }
        return carried
    }

    private func checkArchiveRows(
        _ file: any DatabaseConnection, path: String, statement: AuditArchiveStatement,
        carried: inout [String: Head], covered: CoveredHeads
    ) async throws -> Int {
        // Rows from before name commitments whose name an erasure removed: their hash cannot be
        // recomputed; each listing must name a user the live database has erased.
        var redacted = Redactions(boundID: try await redactionBound())
        try await file.forEachRow("SELECT event_id, user_id FROM audit_redactions") { row in
            redacted.listed[try row.int64("event_id")] = try row.int64("user_id")
        }
        for user in Set(redacted.listed.values) {
            guard try await connection.queryOne("SELECT 1 FROM users WHERE id = \(user) AND erased_at IS NOT NULL") != nil else {
                throw archiveFailure(statement.number, "\(path) lists a row as redacted for user \(user), who is not erased")
            }
        }
        var digest = AuditArchiveDigest()
        var trail: String?
        var last = Head(seq: 0, hash: AuditChains.genesisHash)
        var checked = 0
        var created: [(user: Int64, recorded: String?, detail: String)] = []
        let number = statement.number
        var signedHere: Covered?
        func finishTrail() throws {
            guard let trail else { return }
            if AuditTrails.isReserved(trail) {
                carried[trail] = last
            } else if let signed = signedHere, signed.seq > last.seq {
                throw Failure(problem: AuditChains.Problem(
                    sessionID: trail, reason: "ends at seq \(last.seq) in archive \(number) but checkpoint \(signed.checkpoint) signed it up to seq \(signed.seq) (its newest rows were removed)"))
            }
        }
        try await file.forEachRow(
            "SELECT \(raw: AuditArchiver.ArchivedRow.columns) FROM audit_events ORDER BY session_id, seq"
        ) { row in
            let rowTrail = try row.string("session_id")
            if rowTrail != trail {
                try finishTrail()
                trail = rowTrail
                signedHere = try await covered.get(rowTrail)
                last = carried[rowTrail] ?? Head(seq: 0, hash: AuditChains.genesisHash)
            }
            let seq = try row.int("seq")
            let hash = try row.string("hash")
            func fail(_ reason: String) -> Failure {
                Failure(problem: AuditChains.Problem(rowID: try? row.optionalInt64("id"), sessionID: rowTrail, seq: seq, reason: "in archive \(number) (\(path)): \(reason)"))
            }
            guard seq == last.seq + 1 else { throw fail("seq \(seq) follows \(last.seq) (a row was deleted or inserted)") }
            guard try row.string("prev_hash") == last.hash else { throw fail("prev_hash does not match the trail's row before it (a row was deleted, inserted or moved)") }
            let skipsHash: Bool
            do { skipsHash = try redacted.skipsContentHash(row) } catch let failure as Failure { throw fail(failure.problem.reason) }
            if !skipsHash, try hash != Self.fields(row).hash(previous: last.hash) {
                throw fail("hash does not match the row's contents (the row was altered)")
            }
            if let signed = signedHere, signed.seq == seq {
                guard hash == signed.hash else { throw fail("differs from what checkpoint \(signed.checkpoint) signed") }
                try await covered.remove(rowTrail)
            }
            if try row.string("step") == "user.created", let user = try row.optionalInt64("user_id") {
                created.append((user, try row.optionalString("username"), try row.string("detail")))
            }
            digest.add(trail: rowTrail, seq: seq, hash: hash)
            last = Head(seq: seq, hash: hash)
            checked += 1
        }
        try finishTrail()
        // The names of users whose user.created step is archived, as the live check does for
        // the others.
        for (user, recorded, detail) in created {
            guard let live = try await connection.queryOne("SELECT username, name_salt FROM users WHERE id = \(user) AND erased_at IS NULL") else { continue }
            try Self.checkName(userID: user, name: try live.string("username"), salt: try live.optionalString("name_salt"), recorded: recorded, detail: detail)
        }
        guard digest.count == statement.rows, digest.hex == statement.rowsDigest else {
            throw archiveFailure(number, "\(path): its rows are not those its statement signed (\(digest.count) rows, the statement says \(statement.rows): rows were deleted, inserted or altered)")
        }
        return checked
    }
}
