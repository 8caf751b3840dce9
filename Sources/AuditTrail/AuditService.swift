import DatabaseAccess
import Foundation
import PhotosModel

/// Checkpoints and verification of the audit trail, with the signing key from its file.
public struct AuditService: Sendable {
    let database: any DatabaseStore
    /// `audit.signingKeyPath`.
    public let signingKeyPath: String
    let now: @Sendable () -> Date
    /// `audit.logOrigin`: the name the log's checkpoints carry (nil: the database's own, made by
    /// migration 0020).
    public let logOrigin: String?
    /// `audit.witnesses` and `audit.witnessQuorum`: the cosignatures a checkpoint needs before
    /// it is served (nil: none, the newest checkpoint is served).
    public let witnesses: WitnessPolicy?
    /// One checkpoint at a time from this process (they would only race for the same number).
    private let oneAtATime = AsyncSlots(count: 1)

    /// Creates the service; the key file is read (or created) when first needed.
    public init(
        database: any DatabaseStore, signingKeyPath: String, logOrigin: String? = nil, witnesses: WitnessPolicy? = nil,
        now: @escaping @Sendable () -> Date = Date.init
    ) {
        self.database = database
        self.signingKeyPath = signingKeyPath
        self.logOrigin = logOrigin
        self.witnesses = witnesses
        self.now = now
    }

    /// The signing key, created (0600) on first use — but only for a database whose checkpoints
    /// it signs, or that has none yet. A new key for a database with checkpoints would sign the
    /// next one with a key verify does not trust, and verify would report tampering that never
    /// happened: that is refused, naming the key the checkpoints need. So is a key file that
    /// holds another key than the one the newest checkpoint names (its signer, or after a
    /// rotation the key it rotated to). Read at every checkpoint: photosd takes a rotated key
    /// from the file without a restart.
    public func checkedSigningKey() async throws -> AuditSigningKey {
        let newest = try await database.read { try await AuditCheckpoints.newest(on: $0, withHeads: false) }
        if let newest, !FileManager.default.fileExists(atPath: signingKeyPath) {
            throw PhotosError.badRequest(
                "the audit signing key \(signingKeyPath) does not exist, and this database's checkpoints (newest: \(newest.number)) need the key "
                + "with public key \(newest.nextSigner); set audit.signingKeyPath to that key's file (a relative path is resolved against the database's directory) rather than starting a new key")
        }
        let key = try AuditSigningKey.loadOrCreate(path: signingKeyPath)
        if let newest, newest.nextSigner != key.publicKeyHex {
            throw PhotosError.badRequest("the audit signing key \(signingKeyPath) does not fit: " + AuditCheckpoints.keyMismatch(newest, held: key.publicKeyHex))
        }
        return key
    }

    /// How the signing key's file stands to this database (`photos-admin check`).
    public enum SigningKeyFit: Sendable, Equatable {
        /// The key the newest checkpoint says signs next (or any key, before the first checkpoint).
        case fits
        /// No file: photosd would make one for a database without checkpoints, and refuses to
        /// start for one with checkpoints (`needs`: the public key they need).
        case missing(needs: String?)
        /// Another key — a backup's key restored from before a rotation: photosd refuses to start.
        case misfit(String)
    }

    /// Whether the signing key's file fits this database, read-only (nothing is created).
    public func signingKeyFit() async throws -> SigningKeyFit {
        let newest = try await database.read { try await AuditCheckpoints.newest(on: $0, withHeads: false) }
        guard FileManager.default.fileExists(atPath: signingKeyPath) else { return .missing(needs: newest?.nextSigner) }
        let key = try AuditSigningKey.load(path: signingKeyPath)
        guard let newest, newest.nextSigner != key.publicKeyHex else { return .fits }
        return .misfit(
            "the audit signing key \(signingKeyPath) does not fit: " + AuditCheckpoints.keyMismatch(newest, held: key.publicKeyHex)
                + " (a key file restored from before a rotation? restore the key and its .history from after it)")
    }

    /// The file beside the signing key that keeps, oldest first, the public keys it held before
    /// each rotation: the first is the key `audit verify` trusts when none is given.
    public var keyHistoryPath: String { signingKeyPath + ".history" }
    /// Where a rotation writes the new key before the checkpoint that names it is committed.
    var nextKeyPath: String { signingKeyPath + ".next" }

    /// What `rotateKey` did.
    public struct Rotation: Sendable {
        /// The checkpoint that names the new key (signed by the old one).
        public var checkpoint: Int
        public var oldPublicKey: String
        public var newPublicKey: String
        /// True when it finished a rotation stopped after its checkpoint (nothing new made).
        public var finishedInterrupted: Bool
    }

    /// Rotates the signing key: a new key (made in `signingKeyPath.next`), a checkpoint signed by
    /// the old key that names the new public key, the old public key appended to
    /// `keyHistoryPath`, and the new key renamed over the old file. From then on checkpoints are
    /// signed by the new key (photosd reads the file at its next checkpoint). Stopped midway,
    /// running it again finishes it: a checkpoint that names a key waiting in `.next` is the
    /// rotation it finishes.
    public func rotateKey() async throws -> Rotation {
        if let newest = try await database.read({ try await AuditCheckpoints.newest(on: $0, withHeads: false) }), let next = newest.nextPublicKey,
           FileManager.default.fileExists(atPath: nextKeyPath), try AuditSigningKey.load(path: nextKeyPath).publicKeyHex == next {
            try Self.replace(signingKeyPath, with: nextKeyPath)
            return Rotation(checkpoint: newest.number, oldPublicKey: newest.publicKey, newPublicKey: next, finishedInterrupted: true)
        }
        let old = try await checkedSigningKey()
        try? FileManager.default.removeItem(atPath: nextKeyPath)  // a new key of a rotation that never reached its checkpoint
        let new = try AuditSigningKey.loadOrCreate(path: nextKeyPath)
        try Self.append(old.publicKeyHex, toHistory: keyHistoryPath)
        guard let checkpoint = try await checkpoint(always: true, rotatingTo: new) else {
            throw PhotosError(.internal, "the rotation's checkpoint was not written")
        }
        try Self.replace(signingKeyPath, with: nextKeyPath)
        return Rotation(checkpoint: checkpoint.number, oldPublicKey: old.publicKeyHex, newPublicKey: new.publicKeyHex, finishedInterrupted: false)
    }

    /// Renames `source` over `target` (atomic on one file system), durably: the archiver's rename.
    static func replace(_ target: String, with source: String) throws {
        try AuditArchiver.rename(source, to: target)
    }

    /// Appends `publicKey` to the history file (created 0600), unless it is its last line already.
    static func append(_ publicKey: String, toHistory path: String) throws {
        let existing = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        let lines = existing.split(separator: "\n").map(String.init)
        guard lines.last != publicKey else { return }
        let text = (lines + [publicKey]).joined(separator: "\n") + "\n"
        guard FileManager.default.createFile(atPath: path + ".tmp", contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]) else {
            throw PhotosError.badRequest("cannot write \(path).tmp")
        }
        try replace(path, with: path + ".tmp")
    }

    /// Writes a checkpoint of the trails that changed since the last one (always one with
    /// `always`, even if nothing changed); nil when there was nothing to write. Throws `LogFork`
    /// (signing nothing) when the tree does not extend the newest head the key signed.
    @discardableResult
    public func checkpoint(always: Bool = false) async throws -> AuditCheckpoint? {
        try await checkpoint(always: always, rotatingTo: nil)
    }

    /// `<audit.signingKeyPath>.signed`: the newest tree head the key signed (`SignedTreeHeadFile`).
    public var signedHeadPath: String { SignedTreeHeadFile.path(forKey: signingKeyPath) }

    /// Starts a new log named `origin` over the database's tree (`photos-admin audit log
    /// restart`): the way on when the database is not the one the key signed (a restored backup,
    /// a promoted standby that lost rows). Its first checkpoint, signed now, carries the old log's
    /// last signed head as `previous <old origin> <size> <base64 root>`; from then on checkpoints
    /// are held to the new log's heads, and the old log's notes and receipts stay checkable
    /// offline under the old name.
    public func restartLog(origin newOrigin: String) async throws -> AuditCheckpoint {
        guard newOrigin.utf8.count <= 200, SignedNote.isKeyName(newOrigin) else {
            throw PhotosError.badRequest("--origin must be at most 200 bytes with no spaces and no '+' (it names the log's key)")
        }
        if let logOrigin, logOrigin != newOrigin {
            throw PhotosError.badRequest(
                "configuration audit.logOrigin is \(logOrigin): set it to \(newOrigin) (or remove it) for the new log, or the next process would refuse it")
        }
        guard let written = try await checkpoint(always: true, rotatingTo: nil, newLog: newOrigin) else {
            throw PhotosError(.internal, "the new log's first checkpoint was not written")
        }
        return written
    }

    private func checkpoint(always: Bool, rotatingTo next: AuditSigningKey?, newLog: String? = nil) async throws -> AuditCheckpoint? {
        let key = try await checkedSigningKey()
        await oneAtATime.acquire()
        do {
            let written = try await checkpoint(signedWith: key, always: always, rotatingTo: next, newLog: newLog)
            await oneAtATime.release()
            return written
        } catch {
            await oneAtATime.release()
            throw error
        }
    }

    private func checkpoint(signedWith key: AuditSigningKey, always: Bool, rotatingTo next: AuditSigningKey?, newLog: String?) async throws -> AuditCheckpoint? {
        // Read before each signature: another signer with this key (photos-admin beside photosd)
        // may have moved it on.
        let signed = AuditCheckpoints.SigningGuard(
            outside: try SignedTreeHeadFile.read(keyPath: signingKeyPath), outsidePath: signedHeadPath, newLog: newLog)
        // Read on a snapshot, write one row: the writer is held for the INSERT only. Another
        // process's checkpoint in between (photos-admin beside photosd, another instance) means
        // reading again; the last try reads inside the write transaction, which nothing can
        // overtake (on PostgreSQL it holds the append lock while it reads: the last resort).
        for attempt in 1...3 {
            let at = ISO8601Timestamp.string(from: now())
            var written: AuditCheckpoint?
            if attempt == 3 {
                written = try await database.write { connection in
                    let changes = try await AuditCheckpoints.changes(on: connection)
                    guard always || !changes.heads.isEmpty else { return nil }
                    return try await AuditCheckpoints.write(
                        changes, signedWith: key, at: at, rotatingTo: next, origin: logOrigin, guardedBy: signed, on: connection)
                }
                if written == nil { return nil }
            } else {
                let changes = try await AuditChains.readSettled(database) { try await AuditCheckpoints.changes(on: $0, settledUntil: $1) }
                guard always || !changes.heads.isEmpty else { return nil }
                try await integrate(until: changes.newestID)
                written = try await database.write {
                    try await AuditCheckpoints.write(changes, signedWith: key, at: at, rotatingTo: next, origin: logOrigin, guardedBy: signed, on: $0)
                }
            }
            if let written, let head = SignedTreeHead(of: written) {
                // Committed: the head goes outside the database before the checkpoint is returned
                // (and so before photosd counts it written or serves it as its own).
                try SignedTreeHeadFile.record(head, keyPath: signingKeyPath, replacing: newLog != nil)
                return written
            }
        }
        return nil
    }

    /// Whether the database's log extends every head the key signed — the one in the file beside
    /// the key and the newest checkpoint's — in one snapshot, writing nothing; nil when it does.
    /// What `check`, `audit verify` and photosd's start ask (a checkpoint asks it again itself).
    public func logFork() async throws -> LogFork? {
        let outside = try SignedTreeHeadFile.read(keyPath: signingKeyPath)
        let path = signedHeadPath
        return try await database.read { connection in
            let head = try await AuditLogTree.head(on: connection)
            let newest = try await AuditCheckpoints.newest(on: connection, withHeads: false)
            return try await AuditLogTree.fork(size: head.size, outside: outside, outsidePath: path, newest: newest, on: connection)
        }
    }

    /// What a live session's receipt depends on (`AuditReceipts.Stamp`); nil without a session row.
    public func receiptStamp(sessionID: String) async throws -> AuditReceipts.Stamp? {
        try await database.read { try await AuditReceipts.stamp(sessionID: sessionID, witnessed: witnesses, on: $0) }
    }

    /// The receipt of a live session (`GET /v1/sessions/{id}/receipt`): rows `range`.
    public func receipt(sessionID: String, range: AuditReceipts.Range = .newest) async throws -> AuditReceipts.Outcome {
        try await database.read { try await AuditReceipts.receipt(sessionID: sessionID, range: range, witnessed: witnesses, on: $0) }
    }

    /// The receipt of a session from its rows in an archive file (`AuditReceipts.archivedRows`),
    /// proven against this database's log.
    public func receipt(sessionID: String, archived: AuditReceipts.ArchivedRows) async throws -> AuditReceipts.Outcome {
        try await database.read { try await AuditReceipts.receipt(sessionID: sessionID, archived: archived, witnessed: witnesses, log: $0) }
    }

    /// The served checkpoint's signed note with its cosignatures (`GET /v1/log/checkpoint`): the
    /// newest, or with witnesses the newest with their quorum; nil before the first.
    public func newestCheckpointNote() async throws -> String? {
        try await database.read { try await AuditCosignatures.served(witnesses, on: $0)?.note }
    }

    /// The key rotations' signed notes, oldest first (`GET /v1/log/rotations`).
    public func rotationNotes() async throws -> [String] {
        try await database.read { try await AuditReceipts.rotationNotes(on: $0) }
    }

    /// The consistency proof between two tree sizes (`GET /v1/log/consistency`).
    public func consistency(from old: Int64, to new: Int64) async throws -> [MerkleTree.Hash] {
        try await database.read { try await AuditReceipts.consistency(from: old, to: new, on: $0) }
    }

    /// The log's origin: the one its checkpoints are signed under, else `audit.logOrigin`, else
    /// the database's own.
    /// Refused when `audit.logOrigin` names another log than the one the checkpoints are signed
    /// under (`AuditLogTree.origin`).
    public func origin() async throws -> String {
        try await database.read { connection in
            try AuditLogTree.origin(
                configured: logOrigin, newest: try await AuditCheckpoints.newest(on: connection, withHeads: false),
                head: try await AuditLogTree.head(on: connection))
        }
    }

    /// Makes leaves of the settled rows up to `settledUntil` in steps of `AuditLogTree.batchRows`
    /// rows, so that the checkpoint's own transaction, which holds the writer while it signs, has
    /// only what came since left to add. Each step is computed on a reader (rows, hashes) and only
    /// written by the writer, which is held for the inserts alone.
    func integrate(until settledUntil: Int64) async throws {
        while true {
            let step = try await database.read { try await AuditLogTree.prepare(until: settledUntil, on: $0) }
            if step.isEmpty { return }
            // nil: another process integrated meanwhile; compute the step again from its head.
            guard try await database.write({ try await AuditLogTree.apply(step, on: $0) }) != nil else { continue }
            if !step.more { return }
        }
    }

    /// The key the first checkpoint must be signed with (later ones follow the chain of keys):
    /// `explicit` (hex) if given, else the first key of the key history (after a rotation), else
    /// the public half of the signing key file if it exists, else nil.
    public func trustedKey(explicit: String?) throws -> AuditPublicKey? {
        try Self.trustedKey(explicit: explicit, signingKeyPath: signingKeyPath)
    }

    /// `trustedKey(explicit:)` without a database.
    public static func trustedKey(explicit: String?, signingKeyPath: String) throws -> AuditPublicKey? {
        try trustedKeyAndSource(explicit: explicit, signingKeyPath: signingKeyPath)?.key
    }

    /// The trusted key and where it came from, in words `audit verify` prints: the history file
    /// and the key file sit beside each other, and whoever can replace both can make a key of
    /// their own the first; only a key the operator recorded elsewhere (`--public-key`) rules that out.
    public static func trustedKeyAndSource(explicit: String?, signingKeyPath: String) throws -> (key: AuditPublicKey, source: String)? {
        if let explicit { return (try AuditPublicKey(hex: explicit), "given with --public-key") }
        if let history = try? String(contentsOfFile: signingKeyPath + ".history", encoding: .utf8),
           let first = history.split(separator: "\n").first {
            return (try AuditPublicKey(hex: String(first)),
                    "the first line of \(signingKeyPath).history, unchecked: give --public-key with the key recorded before any rotation to trust only that")
        }
        guard FileManager.default.fileExists(atPath: signingKeyPath) else { return nil }
        return (AuditPublicKey(of: try AuditSigningKey.load(path: signingKeyPath)),
                "the public half of \(signingKeyPath): give --public-key with a key recorded elsewhere to trust only that")
    }

    /// Re-checks the whole trail and its checkpoints in one snapshot (see `AuditVerifier`).
    /// With `archives` (files opened by `openArchive`), checks them and the live rows as one
    /// history.
    public func verify(
        publicKey: AuditPublicKey?, against: AuditCheckpoint? = nil,
        archives: [String] = [], openArchive: (@Sendable (String) throws -> any DatabaseConnection)? = nil,
        openScratch: (@Sendable () throws -> any DatabaseConnection)? = nil,
        progress: (@Sendable (Int) -> Void)? = nil
    ) async throws -> AuditChains.Verification {
        var verification = try await database.read {
            try await AuditChains.verify(
                on: $0, publicKey: publicKey, against: against, archives: archives, openArchive: openArchive, openScratch: openScratch, progress: progress)
        }
        // The key this database signs with now must be where the checkpoints' chain of keys,
        // from the trusted key, ends: a key history whose first line was replaced (and the
        // checkpoints that would contradict it deleted) leads somewhere else.
        // (A rotation stopped between its checkpoint and its rename leaves the new key in
        // `.next`: `audit key --rotate` finishes it, and the check waits for that.)
        if verification.isIntact, let reached = verification.currentKey, FileManager.default.fileExists(atPath: signingKeyPath),
           !FileManager.default.fileExists(atPath: nextKeyPath),
           let signing = try? AuditSigningKey.load(path: signingKeyPath), AuditPublicKey(of: signing) != reached {
            verification.problem = AuditChains.Problem(reason: """
                the signing key \(signingKeyPath) (\(AuditPublicKey(of: signing).hex.prefix(16))…) is not the key the checkpoints lead to from \
                the trusted key (\(reached.hex.prefix(16))…): the key history, the key file or the checkpoints were replaced
                """)
        }
        // The database is the one the key signed: its log extends the head kept beside the key
        // (a restored backup or a promoted standby verifies by itself, and is still a fork).
        // (Asked even when something else failed first: `check` names both. When the stored tree
        // cannot even give its root at the signed size — a tile cut, a node removed — the
        // problem found first names that.)
        let fork: LogFork?
        do {
            fork = try await logFork()
        } catch where !verification.isIntact {
            fork = nil
        }
        if let fork {
            verification.logFork = fork
            if verification.isIntact { verification.problem = AuditChains.Problem(reason: "the transparency log: \(fork)") }
        }
        return verification
    }

    /// Moves the trails that ended before `before` (and reserved-trail rows written before it)
    /// to a new archive at `path` (see `AuditArchiver`), after finishing an interrupted one.
    public func archive(
        before: Date, to path: String, openFile: @escaping AuditArchiver.OpenFile,
        configure: (inout AuditArchiver) -> Void = { _ in }
    ) async throws -> [AuditArchiver.Report] {
        // Every row that moves is a leaf of the log first (and signed): an archived session's
        // receipt is proven against the live log, which keeps the leaves (`audit prove --archive`).
        try await checkpoint()
        var archiver = AuditArchiver(database: database, key: try await checkedSigningKey(), openFile: openFile, now: now)
        configure(&archiver)
        return try await archiver.archive(before: before, to: path)
    }

    /// Reads an exported checkpoint (`audit checkpoint --export`).
    public static func readExport(path: String) throws -> AuditCheckpoint {
        guard let data = FileManager.default.contents(atPath: path) else { throw PhotosError.notFound("\(path): no such file") }
        do {
            return try JSONDecoder().decode(AuditCheckpoint.self, from: data)
        } catch {
            throw PhotosError.badRequest("\(path): not an exported checkpoint (photos-admin audit checkpoint --export writes one)")
        }
    }
}
