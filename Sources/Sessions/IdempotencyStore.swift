import Crypto
import DatabaseAccess
import Foundation
import Navigation
import PhotosCore
import PhotosModel
import Synchronization

/// Remembers the answer to each action sent with an `Idempotency-Key`, so that a retry within
/// the retention period returns the first answer and changes nothing.
///
/// Nothing in the table can be read back without the server secret (a file outside the
/// database): the key is stored as an HMAC under that secret, and a sign-in's token — which
/// must not be stored in clear — is sealed (AES-GCM) under a key derived from the secret, the
/// session and the idempotency key. A retry, which brings the idempotency key, can unseal it; a
/// copy of the database cannot, however guessable the client's keys are.
public struct IdempotencyStore: Sendable {
    private let secretSource: SecretSource
    /// How long an answer is kept; older ones are ignored, and pruned by `prune`.
    public let retention: TimeInterval

    /// Creates the store over a secret in hand.
    public init(secret: ServerSecret, retentionSeconds: Int) {
        self.secretSource = SecretSource(secret: secret, path: nil)
        self.retention = TimeInterval(retentionSeconds)
    }

    /// Creates the store over the secret in the file at `secretPath`, read (or created) when
    /// first needed: a command that never meets an `Idempotency-Key` (`photos-admin audit
    /// verify` of a backup on a read-only disk, say) never touches the file.
    public init(secretPath: String, retentionSeconds: Int) {
        self.secretSource = SecretSource(secret: nil, path: secretPath)
        self.retention = TimeInterval(retentionSeconds)
    }

    /// Reads (or creates) the secret now; `photosd` does at start, so that a bad file stops it.
    public func loadSecret() throws {
        _ = try secretSource.secret()
    }

    /// The oldest `created_at` still answered at `now`.
    func cutoff(now: Date) -> String {
        ISO8601Timestamp.string(from: now.addingTimeInterval(-retention))
    }

    /// `key` as the table stores it (an HMAC under the server secret).
    func storedKey(_ key: String, sessionID: String) throws -> String {
        storedKey(key, sessionID, try secretSource.secret())
    }

    /// The first answer, from its stored row. Throws `conflict` when the key was used for a
    /// different request, or the answer cannot be unsealed any more.
    func answer(_ stored: StoredAnswerRecord, key: String, sessionID: String, fingerprint: String) throws -> ActionResult {
        let (requestHash, response) = (stored.requestHash, stored.response)
        let secret = try secretSource.secret()
        guard requestHash == secret.mac("idempotent request", sessionID, key, fingerprint) else {
            throw PhotosError(.conflict, "this Idempotency-Key was used for a different request")
        }
        let stored = try JSONDecoder().decode(StoredResult.self, from: Data(response.utf8))
        var result = stored.result
        result.isReplay = true
        if let sealed = stored.sealedToken {
            do {
                let box = try AES.GCM.SealedBox(combined: Data(base64Encoded: sealed) ?? Data())
                result.token = String(decoding: try AES.GCM.open(box, using: sealingKey(key, sessionID, secret)), as: UTF8.self)
            } catch {
                throw PhotosError(.conflict, "the first answer to this Idempotency-Key cannot be read any more (the server secret changed); sign in again")
            }
        }
        return result
    }

    /// `result` as the answer to `key`, ready to store (its token sealed).
    func storedAnswer(_ result: ActionResult, key: String, sessionID: String, fingerprint: String, now: Date) throws -> AnswerRecord {
        let secret = try secretSource.secret()
        var stored = StoredResult(result: result, sealedToken: nil)
        if let token = result.token {
            stored.result.token = nil
            stored.sealedToken = try AES.GCM.seal(Data(token.utf8), using: sealingKey(key, sessionID, secret)).combined?.base64EncodedString()
        }
        return AnswerRecord(
            key: storedKey(key, sessionID, secret), requestHash: secret.mac("idempotent request", sessionID, key, fingerprint),
            response: stored.jsonText, createdAt: ISO8601Timestamp.string(from: now))
    }

    /// Deletes the answers older than the retention period from `database`; returns how many.
    public func prune(now: Date, in database: any DatabaseStore) async throws -> Int {
        try await database.pruneAnswers(storedAtOrBefore: cutoff(now: now))
    }

    private func storedKey(_ key: String, _ sessionID: String, _ secret: ServerSecret) -> String {
        secret.mac("idempotency key", sessionID, key)
    }

    private func sealingKey(_ key: String, _ sessionID: String, _ secret: ServerSecret) -> SymmetricKey {
        secret.derivedKey("photosd idempotent token", context: sessionID, key)
    }

    /// An answer as stored: the action's answer without its token, and the token sealed.
    struct StoredResult: Decodable {
        var result: ActionResult
        var sealedToken: String?

        /// `{"result":…,"sealedToken":…}`, by the answer's own writer.
        var jsonText: String {
            var json = JSONBuilder(capacity: 2_048)
            json.beginObject()
            json.key("result")
            result.write(to: &json)
            json.field("sealedToken", sealedToken)
            json.endObject()
            return json.text
        }
    }
}

/// The server secret, given or read from its file on first use (then kept).
private final class SecretSource: Sendable {
    private let path: String?
    private let loaded: Mutex<ServerSecret?>

    init(secret: ServerSecret?, path: String?) {
        self.path = path
        self.loaded = Mutex(secret)
    }

    func secret() throws -> ServerSecret {
        try loaded.withLock { loaded in
            if let loaded { return loaded }
            let secret = try ServerSecret.loadOrCreate(path: path ?? "")
            loaded = secret
            return secret
        }
    }
}
