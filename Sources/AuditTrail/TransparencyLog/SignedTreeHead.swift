import Foundation
import PhotosModel

/// The newest tree head the signing key signed: a size, a root and the checkpoint that signed it.
///
/// Kept twice: in the database (the newest checkpoint's tree) and outside it, beside the signing
/// key (`SignedTreeHeadFile`). The copy outside is what tells a database that went back in time
/// (a restored backup, a promoted standby that lost rows, rows rolled back by someone who can
/// write the database) from one that only moved on: no checkpoint is signed over a tree that
/// does not extend it (`LogFork`).
public struct SignedTreeHead: Sendable, Equatable, CustomStringConvertible {
    /// The tree's size (leaves).
    public var size: Int64
    /// The tree's root hash (32 bytes).
    public var root: MerkleTree.Hash
    /// The checkpoint that signed it.
    public var checkpoint: Int

    /// A head.
    public init(size: Int64, root: MerkleTree.Hash, checkpoint: Int) {
        self.size = size
        self.root = root
        self.checkpoint = checkpoint
    }

    /// `size <n>, root <base64>` as messages say it.
    public var description: String { "size \(size), root \(Data(root).base64EncodedString())" }

    /// The file's one line: `<size> <base64 root> <checkpoint number>`.
    var line: String { "\(size) \(Data(root).base64EncodedString()) \(checkpoint)\n" }

    /// Reads the file's line; nil for anything else.
    init?(line: String) {
        let fields = line.trimmingCharacters(in: .newlines).split(separator: " ", omittingEmptySubsequences: false)
        guard fields.count == 3, let size = Int64(fields[0]), size >= 0, String(size) == fields[0],
              let rootData = Data(base64Encoded: String(fields[1])), let root = MerkleTree.Hash(rootData),
              let checkpoint = Int(fields[2]), checkpoint > 0, String(checkpoint) == fields[2] else { return nil }
        self.init(size: size, root: root, checkpoint: checkpoint)
    }
}

/// `<audit.signingKeyPath>.signed`: the newest tree head the key signed, outside the database
/// (mode 0600, one line `<size> <base64 root> <checkpoint number>`). Replaced atomically (a new
/// file renamed over it) after each checkpoint's note is committed, read at start and before
/// each signature.
///
/// Several processes may sign with one key file (photosd and photos-admin on one machine): the
/// file is replaced under an advisory lock on the key file, and never by a smaller tree, so a
/// signer that commits first and writes last does not move it back. Only a new log (`audit log
/// restart`) replaces it whatever it holds.
public enum SignedTreeHeadFile {
    /// The file beside `keyPath`.
    public static func path(forKey keyPath: String) -> String { keyPath + ".signed" }

    /// The head in the file beside `keyPath`; nil when there is none yet (before the first
    /// checkpoint signed since this version). A file that is not one is an error, never "none":
    /// a damaged file must not open the way to signing anything.
    public static func read(keyPath: String) throws -> SignedTreeHead? {
        let path = path(forKey: keyPath)
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw PhotosError.badRequest("cannot read the signed tree head \(path): \(String(cString: strerror(errno)))")
        }
        guard let head = SignedTreeHead(line: String(decoding: data, as: UTF8.self)) else {
            throw PhotosError.badRequest(
                "the signed tree head \(path) is not one line '<size> <base64 root> <checkpoint number>': restore it from the backup taken with the key")
        }
        return head
    }

    /// Records `head` as the newest the key signed, unless the file holds a larger tree already
    /// (another signer's, written after). With `replacing`, whatever the file holds (a new log).
    public static func record(_ head: SignedTreeHead, keyPath: String, replacing: Bool = false) throws {
        let path = path(forKey: keyPath)
        // The key file's lock: every signer with this key has it, and it is never renamed over
        // while it is held (a rotation renames the key; a signer holding the old file's lock
        // then only orders itself against signers of the same generation, which is enough: the
        // rotation's own checkpoint is recorded before the rename).
        let lock = open(keyPath, O_RDONLY | O_CLOEXEC)
        guard lock >= 0 else { throw PhotosError.badRequest("cannot open \(keyPath) to lock it: \(String(cString: strerror(errno)))") }
        defer { close(lock) }
        guard flock(lock, LOCK_EX) == 0 else { throw PhotosError.badRequest("cannot lock \(keyPath): \(String(cString: strerror(errno)))") }
        if !replacing, let current = try read(keyPath: keyPath), current.size > head.size || current == head { return }
        let temporary = path + ".new-" + UUID().uuidString
        let created = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard created >= 0 else { throw PhotosError.badRequest("cannot write \(temporary): \(String(cString: strerror(errno)))") }
        let bytes = Array(head.line.utf8)
        let written = bytes.withUnsafeBytes { write(created, $0.baseAddress, $0.count) }
        let synced = fsync(created) == 0
        close(created)
        guard written == bytes.count, synced else {
            unlink(temporary)
            throw PhotosError.badRequest("cannot write \(temporary)")
        }
        do {
            try AuditArchiver.rename(temporary, to: path)
        } catch {
            unlink(temporary)
            throw error
        }
    }
}
