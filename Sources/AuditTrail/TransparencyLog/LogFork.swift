import DatabaseAccess
import Foundation
import PhotosModel

/// A tree the key must not sign: it does not extend a tree head the key signed before. Signing it
/// would put two trees under one name and one key that no consistency proof joins — a fork,
/// which any witness or customer holding the earlier note can show to anyone.
///
/// Thrown by `AuditCheckpoints.write` (nothing is signed) and returned by `AuditService.logFork()`
/// (`photos-admin check`, `audit verify`, photosd's start and `/readyz`).
public struct LogFork: Error, Sendable, Equatable, CustomStringConvertible {
    /// The head the key signed.
    public var signed: SignedTreeHead
    /// Where that head was read: the file beside the key, or the database's newest checkpoint.
    public var signedIn: String
    /// The database's tree: its size…
    public var size: Int64
    /// …and its root at the signed size (nil: the tree is smaller than that).
    public var rootAtSignedSize: MerkleTree.Hash?

    /// Whether the database holds fewer leaves than were signed: it went back in time.
    public var isBehind: Bool { rootAtSignedSize == nil }

    /// One line naming both sizes and roots.
    public var description: String {
        let signedText = "checkpoint \(signed.checkpoint) signed \(signed) (\(signedIn))"
        guard let rootAtSignedSize else {
            return "the database's log holds \(size) leaves, fewer than the \(signed.size) the key signed: \(signedText)"
        }
        return "the database's log (\(size) leaves) has root \(Data(rootAtSignedSize).base64EncodedString()) at size \(signed.size), "
            + "not the signed one: \(signedText)"
    }

    /// What an operator can do, for `check` and the start's error.
    public static let waysOn = """
        the database is not the one the key signed (a restored backup, a promoted standby that lost rows, or rows altered or rolled back): \
        restore a newer backup (one taken after that checkpoint), or start a new log that names the old one's last signed head: \
        photos-admin audit log restart --origin NEW
        """
}

extension AuditLogTree {
    /// Whether the stored tree, of `size` leaves, extends `signed`: at least as large, and its root
    /// at the signed size (recomputed from the stored nodes) the signed root. nil when it does.
    static func fork(from signed: SignedTreeHead, signedIn: String, size: Int64, on connection: any DatabaseConnection) async throws -> LogFork? {
        guard size >= signed.size else { return LogFork(signed: signed, signedIn: signedIn, size: size, rootAtSignedSize: nil) }
        // An empty tree's root is SHA-256 of nothing; no checkpoint signs one, but a head of 0 is
        // extended by every tree.
        guard signed.size > 0 else { return nil }
        let root = try await AuditLogTree.root(size: signed.size, on: connection)
        return root == signed.root ? nil : LogFork(signed: signed, signedIn: signedIn, size: size, rootAtSignedSize: root)
    }

    /// The first of the heads the key signed — the one outside the database (`outside`, read from
    /// `outsidePath`) and the database's newest checkpoint's tree (`newest`) — that a tree of
    /// `size` leaves does not extend.
    static func fork(
        size: Int64, outside: SignedTreeHead?, outsidePath: String, newest: AuditCheckpoint?, on connection: any DatabaseConnection
    ) async throws -> LogFork? {
        if let outside, let fork = try await fork(from: outside, signedIn: outsidePath, size: size, on: connection) { return fork }
        if let newest, let treeSize = newest.treeSize, let hex = newest.treeRoot, let root = Hex.decode(hex).flatMap(MerkleTree.Hash.init) {
            let head = SignedTreeHead(size: treeSize, root: root, checkpoint: newest.number)
            if head != outside, let fork = try await fork(from: head, signedIn: "the database's newest checkpoint", size: size, on: connection) { return fork }
        }
        return nil
    }
}

extension SignedTreeHead {
    /// The tree `checkpoint` signed; nil for one written before the log (migration 0020).
    init?(of checkpoint: AuditCheckpoint) {
        guard let size = checkpoint.treeSize, let hex = checkpoint.treeRoot, let root = Hex.decode(hex).flatMap(MerkleTree.Hash.init) else { return nil }
        self.init(size: size, root: root, checkpoint: checkpoint.number)
    }
}

extension AuditLogTree {
    /// The origin the log's checkpoints are signed under: the newest checkpoint's note's (nil
    /// before the first note).
    static func signedOrigin(of newest: AuditCheckpoint?) throws -> String? {
        guard let text = newest?.note else { return nil }
        guard let body = try? LogCheckpoint(parsing: SignedNote(parsing: text).text) else {
            throw PhotosError(.internal, "checkpoint \(newest?.number ?? 0)'s note is not a log checkpoint (run photos-admin audit verify)")
        }
        return body.origin
    }

    /// The origin to sign under. The log's name is fixed at its first checkpoint: after it, a
    /// process configured with `configured` (`audit.logOrigin`) signs only if that is the name;
    /// a process without the setting uses the stored one. Before it, `configured`, else the
    /// database's own (made by migration 0020).
    static func origin(configured: String?, newest: AuditCheckpoint?, head: Head) throws -> String {
        let stored = try signedOrigin(of: newest)
        if let configured, let stored, configured != stored {
            throw PhotosError.badRequest(
                "configuration audit.logOrigin is \(configured), but this database's log is named \(stored) (its checkpoints are signed under that name, "
                + "and every receipt and witness knows it by it): remove the setting or set it to \(stored); a new name starts a new log (photos-admin audit log restart --origin NEW)")
        }
        return configured ?? stored ?? head.origin
    }
}
