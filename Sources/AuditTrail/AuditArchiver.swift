import DatabaseAccess
import Foundation
import PhotosModel

/// Moves old trails out of the live database into an archive file (`photos-admin audit
/// archive`): the trails of sessions that ended before a time, and the rows of the reserved
/// trails (`operator`, `api`) written before it.
///
/// The move goes in small steps, so that photosd keeps serving while it runs: each step copies a
/// few trails into the archive file and commits there, then, in one transaction of the live
/// database, records their segments in `audit_archived_trails` and deletes their rows (and the
/// ended sessions' rows). The live database is the record of what moved: a step killed between
/// the two commits leaves trails in the file that the live database still holds and does not
/// list, and the next run removes them from the file before going on. The file is written as
/// `FILE.partial`; at the end the archive's statement is signed and stored in both databases,
/// and the file is renamed to `FILE`.
///
/// One archive at a time per database (a lease in `maintenance_leases`); an interrupted one is
/// finished before a new one starts.
public struct AuditArchiver: Sendable {
    /// Opens an archive file read-write (`create`: a new file with `AuditArchiveFile.schema`,
    /// refusing one that exists).
    public typealias OpenFile = @Sendable (_ path: String, _ create: Bool) throws -> any DatabaseConnection

    let database: any DatabaseStore
    let key: AuditSigningKey
    let openFile: OpenFile
    let now: @Sendable () -> Date
    /// Session trails per step.
    public var sessionsPerStep = 200
    /// Reserved-trail rows per step.
    public var rowsPerStep = 5_000
    /// Told after each step how many rows have moved so far.
    public var progress: (@Sendable (Int) -> Void)?
    /// Who holds the lease: host, process id, and a random part.
    let holder = "\(ProcessInfo.processInfo.hostName):\(ProcessInfo.processInfo.processIdentifier):\(UUID().uuidString.prefix(8))"

    /// The lease's name in `maintenance_leases`.
    static let lease = "audit-archive"
    /// How long the lease lasts without a step renewing it.
    static let leaseSeconds: TimeInterval = 120

    /// Creates an archiver of `database`'s trails, signing with `key`.
    public init(database: any DatabaseStore, key: AuditSigningKey, openFile: @escaping OpenFile, now: @escaping @Sendable () -> Date = Date.init) {
        self.database = database
        self.key = key
        self.openFile = openFile
        self.now = now
    }

    /// What one archive holds.
    public struct Report: Sendable, Equatable, Codable {
        /// Its number (1, 2, 3 …).
        public var number: Int
        /// The file.
        public var path: String
        /// What it moved ended, or was written, before this.
        public var before: String
        /// Session trails it holds.
        public var sessions: Int
        /// Rows it holds.
        public var rows: Int
        /// Trail segments it holds.
        public var segments: Int
        /// True when it was an interrupted archive, finished now.
        public var resumed: Bool
        /// Its signed statement's hash.
        public var hash: String
        /// Whether the space the rows held went back (false: reused by new rows instead).
        public var spaceReclaimed = true
    }

    /// Finishes an interrupted archive if there is one, then archives what ended before `before`
    /// into `path` (absolute; must not exist, nor `path.partial`). Returns what each archive holds.
    public func archive(before: Date, to path: String) async throws -> [Report] {
        let beforeText = ISO8601Timestamp.string(from: before)
        guard before <= now() else { throw PhotosError.badRequest("--before \(beforeText) is in the future: only what ended before now can move") }
        try await takeLease()
        do {
            var reports: [Report] = []
            if let renamed = try await finishRename() { reports.append(renamed) }
            if let pending = try await pendingArchive() {
                reports.append(try await move(pending, resumed: true))
            }
            // The same command run again after it was stopped: finishing was all it had left
            // (at most the space to give back, which was the last thing it did).
            if !reports.contains(where: { $0.path == path }), let newest = try await newestFinished(), newest.path == path,
               FileManager.default.fileExists(atPath: path)
            {
                var finished = newest
                finished.spaceReclaimed = await reclaimSpace()
                reports.append(finished)
            }
            if reports.contains(where: { $0.path == path }) {
                try await releaseLease()
                return reports
            }
            for existing in [path, path + ".partial"] where FileManager.default.fileExists(atPath: existing) {
                throw PhotosError(.conflict, "\(existing) already exists; choose a new path (an archive never overwrites a file)")
            }
            // The file first, then the record: a directory that does not exist, or a link at
            // FILE.partial, stops the command with nothing recorded.
            let file = try openFile(path + ".partial", true)
            let record: Pending
            do {
                record = try await database.write { connection in
                    let number = (try await connection.queryOne("SELECT coalesce(max(number), 0) AS newest FROM audit_archives")?.int("newest") ?? 0) + 1
                    try await connection.execute(
                        "INSERT INTO audit_archives (number, path, before, started_at) VALUES (\(number), \(path), \(beforeText), \(ISO8601Timestamp.string(from: now())))")
                    return Pending(number: number, path: path, before: beforeText)
                }
            } catch {
                try? FileManager.default.removeItem(atPath: path + ".partial")
                throw error
            }
            reports.append(try await move(record, resumed: false, file: file))
            try await releaseLease()
            return reports
        } catch {
            try? await releaseLease()
            throw error
        }
    }

    // MARK: The move

    /// An archive being written.
    struct Pending: Sendable {
        var number: Int
        var path: String
        var before: String
    }

    private func pendingArchive() async throws -> Pending? {
        try await database.read { connection in
            try await connection.queryOne("SELECT number, path, before FROM audit_archives WHERE finished_at IS NULL ORDER BY number LIMIT 1")
                .map { Pending(number: try $0.int("number"), path: try $0.string("path"), before: try $0.string("before")) }
        }
    }

    /// The newest archive finished in both databases but stopped before its file was renamed:
    /// renamed now.
    private func finishRename() async throws -> Report? {
        guard let record = try await newestFinished() else { return nil }
        let partial = record.path + ".partial"
        guard !FileManager.default.fileExists(atPath: record.path), FileManager.default.fileExists(atPath: partial) else { return nil }
        var report = record
        report.sessions = try await openFile(partial, false).queryOne("SELECT count(*) AS sessions FROM sessions")?.int("sessions") ?? 0
        try Self.rename(partial, to: record.path)
        return report
    }

    /// The newest finished archive, as a report of a resumed run (its sessions not counted).
    private func newestFinished() async throws -> Report? {
        try await database.read { connection in
            try await connection.queryOne(
                "SELECT number, path, before, rows, segments, hash FROM audit_archives WHERE finished_at IS NOT NULL ORDER BY number DESC LIMIT 1"
            ).map { row in
                Report(
                    number: try row.int("number"), path: try row.string("path"), before: try row.string("before"), sessions: 0, rows: try row.int("rows"),
                    segments: try row.int("segments"), resumed: true, hash: try row.string("hash"))
            }
        }
    }

    /// Gives the space the moved rows held back: on SQLite with incremental auto-vacuum, the
    /// free pages to the file system and the WAL emptied; PostgreSQL vacuums the tables. False
    /// when that could not be done now (readers on old snapshots kept the WAL): the archive is
    /// complete all the same, and the free pages are reused by new rows.
    private func reclaimSpace() async -> Bool {
        do {
            try await database.purgeDeletedContent(tables: ["audit_events", "sessions", "audit_redactions", "idempotency_keys", "audit_archived_trails"])
            return true
        } catch {
            return false
        }
    }

    private func move(_ archive: Pending, resumed: Bool, file opened: (any DatabaseConnection)? = nil) async throws -> Report {
        let partial = archive.path + ".partial"
        var startsAfresh = !resumed
        if resumed, !FileManager.default.fileExists(atPath: partial) {
            // Nothing moved yet (interrupted before its first step, or its file made where it
            // could not be): the file is made again and the archive goes on, as if new.
            let moved = try await database.read { connection in
                try await connection.queryOne("SELECT 1 FROM audit_archived_trails WHERE archive = \(archive.number) LIMIT 1") != nil
            }
            guard !moved else {
                throw PhotosError(.conflict, """
                    archive \(archive.number) was interrupted, and its file \(partial), which holds the trails already moved out of this \
                    database, is missing: put it back and run photos-admin audit archive again
                    """)
            }
            startsAfresh = true
        }
        let file = try opened ?? openFile(partial, startsAfresh)
        if !startsAfresh { try await discardUnrecorded(in: file, archive: archive.number) }
        let cutover = try await database.read { connection in
            try await connection.tableExists("audit_chain_cutover")
                ? try await connection.queryOne("SELECT global_chain_until_id FROM audit_chain_cutover")?.int64("global_chain_until_id") ?? 0 : 0
        }
        var moved = 0
        var afterSession = ""
        while let page = try await sessionPage(endedBefore: archive.before, after: afterSession, cutover: cutover) {
            afterSession = page.last
            moved += try await step(page.batch, archive: archive, into: file)
            progress?(moved)
        }
        for trail in [AuditTrails.apiSession, AuditTrails.operatorSession] {
            while let batch = try await reservedBatch(trail, before: archive.before, cutover: cutover) {
                moved += try await step(batch, archive: archive, into: file)
                progress?(moved)
            }
        }
        var report = try await finish(archive, file: file, resumed: resumed)
        try Self.rename(partial, to: archive.path)
        report.spaceReclaimed = await reclaimSpace()
        return report
    }

    /// What one step moves: rows of whole trails (or a reserved trail's next seqs), their
    /// redaction listings, and the ended sessions' rows.
    struct Batch: Sendable {
        var rows: [ArchivedRow] = []
        var redactions: [(eventID: Int64, userID: Int64, at: String)] = []
        var sessions: [[DatabaseValue]] = []
        var sessionIDs: [String] = []
        var segments: [AuditArchiveSegment] = []
    }

    /// An audit row as stored, every column.
    struct ArchivedRow: Sendable {
        var values: [DatabaseValue]
        var id: Int64
        var trail: String
        var seq: Int
        var prevHash: String
        var hash: String

        static let columns = "id, session_id, seq, at, actor, user_id, username, coordinator, step, screen, detail, prev_hash, hash"

        init(_ row: Row) throws {
            values = row.values
            id = try row.int64("id")
            trail = try row.string("session_id")
            seq = try row.int("seq")
            prevHash = try row.string("prev_hash")
            hash = try row.string("hash")
        }
    }

    /// The next sessions (in id order after `after`) that ended before `before`, with their
    /// trails; nil when there are none left. A trail with a row from the first version's single
    /// chain (ids up to the cut-over) stays: that chain is checked whole.
    private func sessionPage(endedBefore before: String, after: String, cutover: Int64) async throws -> (batch: Batch, last: String)? {
        let limit = sessionsPerStep
        return try await database.read { connection in
            let sessions = try await connection.query(
                "SELECT id, user_id, layout, created_at, updated_at, ended_at FROM sessions WHERE id > \(after) AND ended_at IS NOT NULL AND ended_at < \(before) ORDER BY id LIMIT \(limit)")
            guard let last = try sessions.last?.string("id") else { return nil }
            var ids = try sessions.map { try $0.string("id") }
            if cutover > 0 {
                let old = Set(try await connection.query(
                    "SELECT DISTINCT session_id FROM audit_events WHERE id <= \(cutover) AND session_id IN (\(list: ids))"
                ).map { try $0.string("session_id") })
                ids.removeAll { old.contains($0) }
            }
            var batch = Batch()
            batch.sessionIDs = ids
            guard !ids.isEmpty else { return (batch, last) }
            batch.sessions = sessions.filter { (try? ids.contains($0.string("id"))) == true }.map(\.values)
            batch.rows = try await connection.query(
                "SELECT \(raw: ArchivedRow.columns) FROM audit_events WHERE session_id IN (\(list: ids)) ORDER BY session_id, seq"
            ).map(ArchivedRow.init)
            try await Self.addRedactions(to: &batch, on: connection)
            batch.segments = try Self.segments(of: batch.rows, startingAfter: [:])
            return (batch, last)
        }
    }

    /// The reserved trail's next rows written before `before` (at most `rowsPerStep`), going on
    /// from its last archived segment; nil when there are none.
    private func reservedBatch(_ trail: String, before: String, cutover: Int64) async throws -> Batch? {
        let limit = rowsPerStep
        return try await database.read { connection in
            if cutover > 0, try await connection.queryOne("SELECT 1 FROM audit_events WHERE session_id = \(trail) AND id <= \(cutover) LIMIT 1") != nil {
                return nil
            }
            let archived = try await AuditChains.archivedHead(of: trail, on: connection)
            let from = archived?.seq ?? 0
            // Rows of one trail are written in seq order, but on PostgreSQL not always in `at`
            // order: move only the seqs before the first row at or after `before`.
            let firstKept = try await connection.queryOne(
                "SELECT min(seq) AS first_kept FROM audit_events WHERE session_id = \(trail) AND at >= \(before)")?.optionalInt("first_kept")
            var upTo = from + limit
            if let firstKept { upTo = min(upTo, firstKept - 1) }
            guard upTo > from else { return nil }
            var batch = Batch()
            batch.rows = try await connection.query(
                "SELECT \(raw: ArchivedRow.columns) FROM audit_events WHERE session_id = \(trail) AND seq > \(from) AND seq <= \(upTo) ORDER BY seq"
            ).map(ArchivedRow.init)
            guard !batch.rows.isEmpty else { return nil }
            try await Self.addRedactions(to: &batch, on: connection)
            batch.segments = try Self.segments(of: batch.rows, startingAfter: archived.map { [trail: $0] } ?? [:])
            return batch
        }
    }

    private static func addRedactions(to batch: inout Batch, on connection: any DatabaseConnection) async throws {
        guard try await connection.queryOne("SELECT 1 FROM audit_redactions LIMIT 1") != nil else { return }
        for ids in batch.rows.map(\.id).chunked(500) {
            batch.redactions += try await connection.query(
                "SELECT event_id, user_id, at FROM audit_redactions WHERE event_id IN (\(list: ids))"
            ).map { (try $0.int64("event_id"), try $0.int64("user_id"), try $0.string("at")) }
        }
    }

    /// The segments of `rows` (in trail, seq order): each trail's rows must be whole from seq 1
    /// (or from the seq after its archived part) and chained, or the move stops — a broken
    /// trail is for `audit verify` to name, not for an archive to hide.
    static func segments(of rows: [ArchivedRow], startingAfter archived: [String: (seq: Int, hash: String)]) throws -> [AuditArchiveSegment] {
        var segments: [AuditArchiveSegment] = []
        for row in rows {
            let prevHash = row.prevHash
            if var last = segments.last, last.trail == row.trail {
                guard row.seq == last.lastSeq + 1, prevHash == last.lastHash else { throw brokenTrail(row) }
                last.lastSeq = row.seq
                last.lastHash = row.hash
                segments[segments.count - 1] = last
            } else {
                let start = archived[row.trail] ?? (0, AuditChains.genesisHash)
                guard row.seq == start.seq + 1, prevHash == start.hash else { throw brokenTrail(row) }
                segments.append(AuditArchiveSegment(trail: row.trail, firstSeq: row.seq, lastSeq: row.seq, lastHash: row.hash))
            }
        }
        return segments
    }

    private static func brokenTrail(_ row: ArchivedRow) -> PhotosError {
        PhotosError(.conflict, "trail \(row.trail) is not whole at seq \(row.seq) (row id \(row.id)): run photos-admin audit verify; nothing was archived from it")
    }

    /// One step: into the file (committed), then out of the live database (committed). Returns
    /// the rows moved.
    private func step(_ batch: Batch, archive: Pending, into file: any DatabaseConnection) async throws -> Int {
        let (number, before) = (archive.number, archive.before)
        guard !batch.rows.isEmpty || !batch.sessionIDs.isEmpty else { return 0 }
        try await file.execute("BEGIN IMMEDIATE")
        do {
            for row in batch.rows {
                try await file.execute("INSERT INTO audit_events (\(raw: ArchivedRow.columns)) VALUES (\(list: row.values))")
            }
            for redaction in batch.redactions {
                try await file.execute("INSERT INTO audit_redactions (event_id, user_id, at) VALUES (\(redaction.eventID), \(redaction.userID), \(redaction.at))")
            }
            for session in batch.sessions {
                try await file.execute("INSERT INTO sessions (id, user_id, layout, created_at, updated_at, ended_at) VALUES (\(list: session))")
            }
            for segment in batch.segments {
                try await file.execute(
                    "INSERT INTO audit_archived_trails (trail, first_seq, last_seq, last_hash) VALUES (\(segment.trail), \(segment.firstSeq), \(segment.lastSeq), \(segment.lastHash))")
            }
            try await file.execute("COMMIT")
        } catch {
            _ = try? await file.execute("ROLLBACK")
            throw error
        }
        let leaseUntil = ISO8601Timestamp.string(from: now().addingTimeInterval(Self.leaseSeconds))
        let holder = self.holder
        try await database.write { connection in
            guard try await connection.execute(
                "UPDATE maintenance_leases SET until = \(leaseUntil) WHERE name = \(Self.lease) AND holder = \(holder)") == 1
            else {
                throw PhotosError(.conflict, "this archive's lease was taken over (the run stalled for over \(Int(Self.leaseSeconds)) s); run photos-admin audit archive again to finish it")
            }
            for segment in batch.segments {
                try await connection.execute(
                    "INSERT INTO audit_archived_trails (trail, first_seq, last_seq, last_hash, archive) VALUES (\(segment.trail), \(segment.firstSeq), \(segment.lastSeq), \(segment.lastHash), \(number))")
            }
            var deleted = 0
            for segment in batch.segments {
                deleted += try await connection.execute(
                    "DELETE FROM audit_events WHERE session_id = \(segment.trail) AND seq >= \(segment.firstSeq) AND seq <= \(segment.lastSeq)")
            }
            guard deleted == batch.rows.count else {
                throw PhotosError(.conflict, "the trails changed while they were being archived (\(deleted) rows found of \(batch.rows.count)); run photos-admin audit archive again")
            }
            for ids in batch.redactions.map(\.eventID).chunked(500) {
                try await connection.execute("DELETE FROM audit_redactions WHERE event_id IN (\(list: ids))")
            }
            for ids in batch.sessionIDs.chunked(500) {
                try await connection.execute("DELETE FROM idempotency_keys WHERE session_id IN (\(list: ids))")
                let ended = try await connection.execute(
                    "DELETE FROM sessions WHERE ended_at IS NOT NULL AND ended_at < \(before) AND id IN (\(list: ids))")
                guard ended == ids.count else {
                    throw PhotosError(.conflict, "a session changed while it was being archived; run photos-admin audit archive again")
                }
            }
        }
        return batch.rows.count
    }

    /// After an interrupted run: removes from the file the segments (with their rows, listings
    /// and sessions) that the live database does not list for this archive — the last step's,
    /// whose live half never committed.
    private func discardUnrecorded(in file: any DatabaseConnection, archive number: Int) async throws {
        try await file.execute("DELETE FROM archive")
        var after = (trail: "", firstSeq: 0)
        while true {
            let page = try await file.query(
                "SELECT trail, first_seq, last_seq, last_hash FROM audit_archived_trails WHERE trail > \(after.trail) OR (trail = \(after.trail) AND first_seq > \(after.firstSeq)) ORDER BY trail, first_seq LIMIT 500"
            ).map(AuditArchiveSegment.segment)
            guard let last = page.last else { return }
            after = (last.trail, last.firstSeq)
            let trails = Array(Set(page.map(\.trail)))
            let recorded = try await database.read { connection in
                Set(try await connection.query(
                    "SELECT trail, first_seq FROM audit_archived_trails WHERE archive = \(number) AND trail IN (\(list: trails))"
                ).map { "\(try $0.int("first_seq")) \(try $0.string("trail"))" })
            }
            let unrecorded = page.filter { !recorded.contains("\($0.firstSeq) \($0.trail)") }
            guard !unrecorded.isEmpty else { continue }
            try await file.execute("BEGIN IMMEDIATE")
            for segment in unrecorded {
                try await file.execute(
                    "DELETE FROM audit_redactions WHERE event_id IN (SELECT id FROM audit_events WHERE session_id = \(segment.trail) AND seq >= \(segment.firstSeq) AND seq <= \(segment.lastSeq))")
                try await file.execute("DELETE FROM audit_events WHERE session_id = \(segment.trail) AND seq >= \(segment.firstSeq) AND seq <= \(segment.lastSeq)")
                try await file.execute("DELETE FROM sessions WHERE id = \(segment.trail)")
                try await file.execute("DELETE FROM audit_archived_trails WHERE trail = \(segment.trail) AND first_seq = \(segment.firstSeq)")
            }
            try await file.execute("COMMIT")
        }
    }

    /// Signs the archive's statement (digests read back from the file, checked against the live
    /// database's segments) and stores it in both.
    private func finish(_ archive: Pending, file: any DatabaseConnection, resumed: Bool) async throws -> Report {
        var rows = AuditArchiveDigest()
        try await file.forEachRow("SELECT session_id, seq, hash FROM audit_events ORDER BY session_id, seq") { row in
            rows.add(trail: try row.string("session_id"), seq: try row.int("seq"), hash: try row.string("hash"))
        }
        var segments = AuditArchiveDigest()
        try await file.forEachRow("SELECT trail, first_seq, last_seq, last_hash FROM audit_archived_trails ORDER BY trail, first_seq") { row in
            segments.add(segment: try AuditArchiveSegment.segment(row))
        }
        let sessions = try await AuditArchiveFile.sessionsDigest(file)
        let number = archive.number
        let (live, previous) = try await database.read { connection in
            var live = AuditArchiveDigest()
            try await connection.forEachRow(
                "SELECT trail, first_seq, last_seq, last_hash FROM audit_archived_trails WHERE archive = \(number) ORDER BY trail, first_seq"
            ) { live.add(segment: try AuditArchiveSegment.segment($0)) }
            let previous = try await connection.queryOne("SELECT hash FROM audit_archives WHERE number = \(number - 1)")?.string("hash")
            return (live.hex, previous)
        }
        guard live == segments.hex else {
            throw PhotosError(.internal, "archive \(number): the segments in \(archive.path).partial differ from those this database recorded; nothing more was changed")
        }
        var statement = AuditArchiveStatement(
            number: number, at: ISO8601Timestamp.string(from: now()), before: archive.before, prevHash: previous ?? AuditChains.genesisHash,
            rows: rows.count, rowsDigest: rows.hex, segments: segments.count, segmentsDigest: segments.hex,
            sessions: sessions.count, sessionsDigest: sessions.hex,
            publicKey: "", signature: "", hash: "")
        try statement.sign(with: key)
        try await AuditArchiveFile.addSessionColumns(file)
        try await file.execute("BEGIN IMMEDIATE")
        try await file.execute("DELETE FROM archive")
        try await file.execute(
            "INSERT INTO archive (\(raw: AuditArchiveStatement.columns)) VALUES (\(list: statement.values))")
        try await file.execute("COMMIT")
        // One file to keep: the WAL folded in and gone.
        _ = try await file.query("PRAGMA journal_mode = DELETE")
        let finished = statement
        try await database.write { connection in
            let updated = try await connection.execute(
                """
                UPDATE audit_archives SET finished_at = \(finished.at), rows = \(finished.rows), segments = \(finished.segments), rows_digest = \(finished.rowsDigest), segments_digest = \(finished.segmentsDigest),
                    sessions = \(finished.sessions), sessions_digest = \(finished.sessionsDigest), prev_hash = \(finished.prevHash), public_key = \(finished.publicKey), signature = \(finished.signature), hash = \(finished.hash)
                WHERE number = \(finished.number) AND finished_at IS NULL
                """)
            guard updated == 1 else { throw PhotosError(.conflict, "archive \(finished.number) was finished by another run") }
        }
        return Report(
            number: number, path: archive.path, before: archive.before, sessions: sessions.count, rows: rows.count, segments: segments.count,
            resumed: resumed, hash: statement.hash)
    }

    // MARK: Lease and files

    private func takeLease() async throws {
        let nowDate = now()
        let lease = MaintenanceLease(database: database, name: Self.lease)
        let until = nowDate.addingTimeInterval(Self.leaseSeconds)
        if try await lease.take(holder: holder, now: nowDate, until: until) { return }
        // A run on this machine that was stopped (killed, the machine's power) leaves its lease
        // until it times out: take it over at once when its process is gone.
        if let current = try await lease.holder(), Self.isGoneLocally(current),
           try await lease.take(holder: holder, replacing: current, until: until)
        {
            return
        }
        throw PhotosError(.conflict, "another photos-admin audit archive is running on this database; try again when it has finished")
    }

    /// Whether `holder` (`host:pid:…`) names a process of this host that no longer runs.
    static func isGoneLocally(_ holder: String) -> Bool {
        let parts = holder.split(separator: ":")
        guard parts.count >= 3, String(parts[0]) == ProcessInfo.processInfo.hostName, let pid = Int32(parts[1]) else { return false }
        return kill(pid, 0) != 0 && errno == ESRCH
    }

    private func releaseLease() async throws {
        try await MaintenanceLease(database: database, name: Self.lease).release(holder: holder)
    }

    /// Renames `from` to `to` and makes the rename durable (the directory synced).
    static func rename(_ from: String, to: String) throws {
        guard Foundation.rename(from, to) == 0 else {
            throw PhotosError(.internal, "cannot rename \(from) to \(to): \(String(cString: strerror(errno)))")
        }
        let directory = (to as NSString).deletingLastPathComponent
        let descriptor = open(directory.isEmpty ? "." : directory, O_RDONLY)
        if descriptor >= 0 {
            fsync(descriptor)
            close(descriptor)
        }
    }

}

extension Array {
    /// The array in consecutive pieces of at most `size` elements.
    func chunked(_ size: Int) -> [ArraySlice<Element>] {
        stride(from: 0, to: count, by: size).map { self[$0..<Swift.min($0 + size, count)] }
    }
}
