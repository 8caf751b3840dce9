import Crypto
import Foundation
import PhotosModel

/// The Ed25519 key that signs audit checkpoints: a file outside the database
/// (`audit.signingKeyPath`), created with mode 0600 on first use and never logged. Whoever can
/// write the database but not read this file cannot make a checkpoint that verifies.
public struct AuditSigningKey: Sendable {
    /// The raw private key (`Curve25519.Signing.PrivateKey` is not `Sendable`).
    private let raw: [UInt8]

    /// Wraps a private key (tests; everything else loads a file).
    public init(_ key: Curve25519.Signing.PrivateKey) {
        raw = Array(key.rawRepresentation)
    }

    /// The key in `path`, created (0600) if the file does not exist. Refuses a file of another
    /// size or one that others may read.
    public static func loadOrCreate(path: String) throws -> AuditSigningKey {
        try key(SecretFile.loadOrCreate(path: path, what: "audit signing key", count: 32) {
            Array(Curve25519.Signing.PrivateKey().rawRepresentation)
        }, path: path)
    }

    /// The key in `path`, which must exist.
    public static func load(path: String) throws -> AuditSigningKey {
        try key(SecretFile.load(path: path, what: "audit signing key", count: 32), path: path)
    }

    private static func key(_ bytes: [UInt8], path: String) throws -> AuditSigningKey {
        guard let key = try? Curve25519.Signing.PrivateKey(rawRepresentation: bytes) else {
            throw PhotosError.badRequest("the audit signing key \(path) is not an Ed25519 key")
        }
        return AuditSigningKey(key)
    }

    /// The private key, for the signed notes of checkpoints (`SignedNote.sign`).
    var privateKey: Curve25519.Signing.PrivateKey { key }

    private var key: Curve25519.Signing.PrivateKey {
        // 32 bytes read back from a key made by this type: cannot fail.
        (try? Curve25519.Signing.PrivateKey(rawRepresentation: raw)) ?? Curve25519.Signing.PrivateKey()
    }

    /// The public key, hex: what `photos-admin audit key` prints and `audit verify --public-key` takes.
    public var publicKeyHex: String { Hex.encode(key.publicKey.rawRepresentation) }

    /// The note verifier key of this key for the log named `origin` (`audit key --note`).
    public func noteVerifierKey(origin: String) -> SignedNote.VerifierKey {
        SignedNote.VerifierKey(name: origin, publicKey: Array(key.publicKey.rawRepresentation))
    }

    /// This key as a witness's cosigner key named `name` (`audit witness key`).
    public func cosignerKey(name: String) -> CosignerKey {
        CosignerKey(name: name, publicKey: Array(key.publicKey.rawRepresentation))
    }

    /// The hex signature of `message`.
    func signatureHex(_ message: [UInt8]) throws -> String {
        Hex.encode(try key.signature(for: message))
    }
}

/// A trusted Ed25519 public key, to check checkpoint signatures without the private key.
public struct AuditPublicKey: Sendable, Equatable {
    /// Hex, 64 digits.
    public let hex: String
    private let raw: [UInt8]

    /// Parses the hex form `photos-admin audit key` prints.
    public init(hex: String) throws {
        let trimmed = hex.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
        guard let raw = Hex.decode(trimmed), raw.count == 32, (try? Curve25519.Signing.PublicKey(rawRepresentation: raw)) != nil else {
            throw PhotosError.badRequest("not an Ed25519 public key (expected 64 hex digits, as photos-admin audit key prints)")
        }
        self.hex = trimmed
        self.raw = raw
    }

    /// The public half of `key`.
    public init(of key: AuditSigningKey) {
        // The hex of a real key always parses.
        self = (try? AuditPublicKey(hex: key.publicKeyHex)) ?? AuditPublicKey(unchecked: key.publicKeyHex)
    }

    private init(unchecked hex: String) {
        self.hex = hex
        self.raw = Hex.decode(hex) ?? []
    }

    /// The raw 32 bytes.
    var rawBytes: [UInt8] { raw }

    /// True when `signatureHex` is this key's signature of `message`.
    func isValidSignature(_ signatureHex: String, for message: [UInt8]) -> Bool {
        guard let signature = Hex.decode(signatureHex), let key = try? Curve25519.Signing.PublicKey(rawRepresentation: raw) else { return false }
        return key.isValidSignature(signature, for: message)
    }
}
