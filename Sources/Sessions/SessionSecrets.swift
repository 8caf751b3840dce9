import Crypto
import Foundation
import PhotosModel
import Synchronization

/// Sessions' secrets: made at creation, kept as SHA-256, checked on every client request.
///
/// The session id names a session in URLs, which proxies and load balancers log; the secret
/// (`Authorization: Session <secret>`) is what lets a client act on it. This keeps the hashes
/// this process has seen, so that checking one costs a hash and a lookup, not a read: a session's
/// hash never changes once the row is written, so a cached one cannot go stale.
final class SessionSecrets: Sendable {
    /// The digests, as bytes (a check hashes the secret given and compares bytes: no hex).
    private let hashes = Mutex([String: [UInt8]]())
    /// Bound on cached hashes; past it the cache starts over (cheap, and rare).
    private let capacity: Int

    init(capacity: Int = 50_000) {
        self.capacity = capacity
    }

    /// A new secret: 32 random bytes, base64url (43 characters).
    static func make() -> String {
        SecureToken.random(byteCount: 32)
    }

    /// How a secret is stored: its SHA-256 in hex.
    static func hash(_ secret: String) -> String {
        SecureToken.sha256Hex(secret)
    }

    /// Whether `secret` hashes to `digest` (the stored hash's bytes), compared in time that does
    /// not depend on where they differ.
    static func matches(_ secret: String, digest: [UInt8]) -> Bool {
        var secret = secret
        let given = secret.withUTF8 { SHA256.hash(data: $0) }
        return given.withUnsafeBytes { given in
            guard given.count == digest.count else { return false }
            var difference: UInt8 = 0
            for index in 0..<given.count { difference |= given[index] ^ digest[index] }
            return difference == 0
        }
    }

    /// The cached digest of `sessionID`'s secret, if this process has seen it.
    func digest(of sessionID: String) -> [UInt8]? {
        hashes.withLock { $0[sessionID] }
    }

    /// Keeps `hash` (hex, as stored) for `sessionID` and returns its bytes; nil for a session
    /// without a secret (not kept: it is refused anyway, and keeping nothing lets a later read
    /// see it again) or a stored text that is not hex (which no secret matches).
    @discardableResult
    func remember(_ sessionID: String, hash: String?) -> [UInt8]? {
        guard let hash, let digest = Hex.decode(hash), digest.count == SHA256.byteCount else { return nil }
        hashes.withLock { hashes in
            if hashes.count >= capacity { hashes.removeAll(keepingCapacity: true) }
            hashes[sessionID] = digest
        }
        return digest
    }
}
