import Crypto
import Foundation

/// The server's own secret: 32 random bytes in a file outside the database, created with mode
/// 0600 on first use (`auth.secretKeyPath`, by default `photosd-secret.key` beside the
/// database file).
///
/// What is derived from it (the names under which idempotency keys are stored, the keys that
/// seal a retried sign-in's token) cannot be recomputed from the database alone: someone who
/// copies the database but not this file learns nothing from those columns.
public struct ServerSecret: Sendable {
    /// The key material (kept as bytes: `SymmetricKey` is not `Sendable`).
    private let bytes: [UInt8]

    /// The key material as a key.
    public var key: SymmetricKey { SymmetricKey(data: bytes) }

    /// Wraps key material (tests; everything else loads a file).
    public init(key: SymmetricKey) {
        self.bytes = key.withUnsafeBytes { Array($0) }
    }

    /// The secret in `path`, created (0600, 32 random bytes) if the file does not exist.
    /// Refuses a file of another size or one that others may read.
    public static func loadOrCreate(path: String) throws -> ServerSecret {
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty, !FileManager.default.fileExists(atPath: directory) {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        let created = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if created >= 0 {
            let bytes = SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }
            let written = bytes.withUnsafeBytes { write(created, $0.baseAddress, $0.count) }
            let synced = fsync(created) == 0
            close(created)
            guard written == bytes.count, synced else {
                unlink(path)
                throw PhotosError.badRequest("cannot write the server secret \(path)")
            }
        } else if errno != EEXIST {
            throw PhotosError.badRequest("cannot create the server secret \(path): \(String(cString: strerror(errno)))")
        }
        var info = stat()
        guard stat(path, &info) == 0 else { throw PhotosError.badRequest("cannot read the server secret \(path)") }
        guard info.st_mode & 0o077 == 0 else {
            throw PhotosError.badRequest("the server secret \(path) may be read by others (mode \(String(info.st_mode & 0o777, radix: 8))); chmod 600 it")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw PhotosError.badRequest("cannot read the server secret \(path)")
        }
        guard data.count == 32 else {
            throw PhotosError.badRequest("the server secret \(path) holds \(data.count) bytes, not 32")
        }
        return ServerSecret(key: SymmetricKey(data: data))
    }

    /// Hex HMAC-SHA256 of `parts` (joined with NUL bytes, so no two lists join alike) under
    /// the secret and a purpose label.
    public func mac(_ purpose: String, _ parts: String...) -> String {
        var hmac = HMAC<SHA256>(key: key)
        hmac.update(data: Array(purpose.utf8))
        for part in parts {
            hmac.update(data: [0])
            hmac.update(data: Array(part.utf8))
        }
        return Data(hmac.finalize()).map { String(format: "%02x", $0) }.joined()
    }

    /// A key for `purpose`, derived with HKDF from the secret and `context`.
    public func derivedKey(_ purpose: String, context: String...) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(
            inputKeyMaterial: key, salt: Data(purpose.utf8),
            info: Data(context.joined(separator: "\u{0}").utf8), outputByteCount: 32)
    }
}
