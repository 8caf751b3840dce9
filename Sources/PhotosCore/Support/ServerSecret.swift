import AuditTrail
import Crypto
import Foundation
import PhotosModel

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
        let bytes = try SecretFile.loadOrCreate(path: path, what: "server secret", count: 32) {
            SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }
        }
        return ServerSecret(key: SymmetricKey(data: bytes))
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
        return Hex.encode(hmac.finalize())
    }

    /// A key for `purpose`, derived with HKDF from the secret and `context`.
    public func derivedKey(_ purpose: String, context: String...) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(
            inputKeyMaterial: key, salt: Data(purpose.utf8),
            info: Data(context.joined(separator: "\u{0}").utf8), outputByteCount: 32)
    }
}
