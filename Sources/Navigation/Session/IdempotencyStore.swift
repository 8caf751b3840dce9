import Crypto
import Foundation
import PhotosCore
import SQLiteStore

/// Remembers the answer to each action sent with an `Idempotency-Key`, so that a retry returns
/// the first answer and changes nothing.
///
/// The key is stored only as its SHA-256. A sign-in's token cannot be stored in clear, so it
/// is kept encrypted (AES-GCM) under a key derived from the idempotency key, which only the
/// client has: a retry can decrypt it, a reader of the database cannot.
enum IdempotencyStore {
    static func lookup(key: String, sessionID: String, fingerprint: String, on connection: Connection) throws -> ActionResult? {
        guard let row = try connection.queryOne(
            "SELECT request_hash, response FROM idempotency_keys WHERE session_id = ? AND key = ?",
            sessionID, SecureToken.sha256Hex(key))
        else { return nil }
        guard row.string(0) == SecureToken.sha256Hex(fingerprint) else {
            throw PhotosError(.conflict, "this Idempotency-Key was used for a different request")
        }
        let stored = try JSONDecoder().decode(StoredResult.self, from: Data(row.string(1).utf8))
        var result = stored.result
        if let sealed = stored.sealedToken {
            let box = try AES.GCM.SealedBox(combined: Data(base64Encoded: sealed) ?? Data())
            result.token = String(decoding: try AES.GCM.open(box, using: symmetricKey(key, sessionID)), as: UTF8.self)
        }
        return result
    }

    static func save(_ result: ActionResult, key: String, sessionID: String, fingerprint: String, on connection: Connection) throws {
        var stored = StoredResult(result: result, sealedToken: nil)
        if let token = result.token {
            stored.result.token = nil
            stored.sealedToken = try AES.GCM.seal(Data(token.utf8), using: symmetricKey(key, sessionID)).combined?.base64EncodedString()
        }
        try connection.execute(
            "INSERT INTO idempotency_keys (session_id, key, request_hash, response, created_at) VALUES (?, ?, ?, ?, ?)",
            sessionID, SecureToken.sha256Hex(key), SecureToken.sha256Hex(fingerprint),
            String(decoding: try JSONEncoder().encode(stored), as: UTF8.self), ISO8601Timestamp.now())
    }

    private static func symmetricKey(_ key: String, _ sessionID: String) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: Data(key.utf8)), salt: Data(sessionID.utf8),
            info: Data("photosd idempotent token".utf8), outputByteCount: 32)
    }

    struct StoredResult: Codable {
        var result: ActionResult
        var sealedToken: String?
    }
}
