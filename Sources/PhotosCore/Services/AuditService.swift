import DatabaseAccess
import Foundation
import PhotosModel

/// Checkpoints and verification of the audit trail, with the signing key from its file.
public struct AuditService: Sendable {
    let database: any DatabaseStore
    /// `audit.signingKeyPath`.
    public let signingKeyPath: String
    let now: @Sendable () -> Date
    /// One checkpoint at a time from this process (they would only race for the same number).
    private let oneAtATime = AsyncSlots(count: 1)

    /// Creates the service; the key file is read (or created) when first needed.
    public init(database: any DatabaseStore, signingKeyPath: String, now: @escaping @Sendable () -> Date = Date.init) {
        self.database = database
        self.signingKeyPath = signingKeyPath
        self.now = now
    }

    /// The signing key, created (0600) on first use — but only for a database whose checkpoints
    /// it signed, or that has none yet. A new key for a database with checkpoints would sign the
    /// next one with a key verify does not trust, and verify would report tampering that never
    /// happened: that is refused, naming the key the checkpoints need. So is a key file that
    /// holds another key than the one the newest checkpoint was signed with.
    public func checkedSigningKey() async throws -> AuditSigningKey {
        let newest = try await database.read { connection in
            try await connection.queryOne("SELECT number, public_key FROM audit_checkpoints ORDER BY number DESC LIMIT 1")
                .map { (number: try $0.int64(0), publicKey: try $0.string(1)) }
        }
        if let newest, !FileManager.default.fileExists(atPath: signingKeyPath) {
            throw PhotosError.badRequest(
                "the audit signing key \(signingKeyPath) does not exist, and this database's checkpoints (newest: \(newest.number)) are signed by the key "
                + "with public key \(newest.publicKey); set audit.signingKeyPath to that key's file (a relative path is resolved against the database's directory) rather than starting a new key")
        }
        let key = try AuditSigningKey.loadOrCreate(path: signingKeyPath)
        if let newest, newest.publicKey != key.publicKeyHex {
            throw PhotosError.badRequest(
                "the audit signing key \(signingKeyPath) (public key \(key.publicKeyHex)) did not sign this database's checkpoints (newest: \(newest.number), "
                + "public key \(newest.publicKey)); set audit.signingKeyPath to that key's file")
        }
        return key
    }

    /// Writes a checkpoint of the trails that changed since the last one (always one with
    /// `always`, even if nothing changed); nil when there was nothing to write.
    @discardableResult
    public func checkpoint(always: Bool = false) async throws -> AuditCheckpoint? {
        let key = try await checkedSigningKey()
        await oneAtATime.acquire()
        do {
            let written = try await checkpoint(signedWith: key, always: always)
            await oneAtATime.release()
            return written
        } catch {
            await oneAtATime.release()
            throw error
        }
    }

    private func checkpoint(signedWith key: AuditSigningKey, always: Bool) async throws -> AuditCheckpoint? {
        // Read on a snapshot, write one row: the writer is held for the INSERT only. Another
        // process's checkpoint in between (photos-admin beside photosd, another instance) means
        // reading again; the last try reads inside the write transaction, which nothing can
        // overtake (on PostgreSQL it holds the append lock while it reads: the last resort).
        for attempt in 1...3 {
            let at = ISO8601Timestamp.string(from: now())
            if attempt == 3 {
                return try await database.write { connection in
                    let changes = try await AuditCheckpoints.changes(on: connection)
                    guard always || !changes.heads.isEmpty else { return nil }
                    return try await AuditCheckpoints.write(changes, signedWith: key, at: at, on: connection)
                }
            }
            let changes = try await AuditLog.readSettled(database) { try await AuditCheckpoints.changes(on: $0, settledUntil: $1) }
            guard always || !changes.heads.isEmpty else { return nil }
            if let written = try await database.write({ try await AuditCheckpoints.write(changes, signedWith: key, at: at, on: $0) }) {
                return written
            }
        }
        return nil
    }

    /// The key checkpoints must be signed with: `explicit` (hex) if given, else the public half
    /// of the signing key file if it exists, else nil.
    public func trustedKey(explicit: String?) throws -> AuditPublicKey? {
        try Self.trustedKey(explicit: explicit, signingKeyPath: signingKeyPath)
    }

    /// `trustedKey(explicit:)` without a database.
    public static func trustedKey(explicit: String?, signingKeyPath: String) throws -> AuditPublicKey? {
        if let explicit { return try AuditPublicKey(hex: explicit) }
        guard FileManager.default.fileExists(atPath: signingKeyPath) else { return nil }
        return AuditPublicKey(of: try AuditSigningKey.load(path: signingKeyPath))
    }

    /// Re-checks the whole trail and its checkpoints in one snapshot (see `AuditVerifier`).
    /// With `archives` (files opened by `openArchive`), checks them and the live rows as one
    /// history.
    public func verify(
        publicKey: AuditPublicKey?, against: AuditCheckpoint? = nil,
        archives: [String] = [], openArchive: (@Sendable (String) throws -> any DatabaseConnection)? = nil,
        openScratch: (@Sendable () throws -> any DatabaseConnection)? = nil,
        progress: (@Sendable (Int) -> Void)? = nil
    ) async throws -> AuditLog.Verification {
        try await database.read {
            try await AuditLog.verify(
                on: $0, publicKey: publicKey, against: against, archives: archives, openArchive: openArchive, openScratch: openScratch, progress: progress)
        }
    }

    /// Moves the trails that ended before `before` (and reserved-trail rows written before it)
    /// to a new archive at `path` (see `AuditArchiver`), after finishing an interrupted one.
    public func archive(
        before: Date, to path: String, openFile: @escaping AuditArchiver.OpenFile,
        configure: (inout AuditArchiver) -> Void = { _ in }
    ) async throws -> [AuditArchiver.Report] {
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
