import Crypto
import Foundation

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
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty, !FileManager.default.fileExists(atPath: directory) {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        let created = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if created >= 0 {
            let bytes = Array(Curve25519.Signing.PrivateKey().rawRepresentation)
            let written = bytes.withUnsafeBytes { write(created, $0.baseAddress, $0.count) }
            let synced = fsync(created) == 0
            close(created)
            guard written == bytes.count, synced else {
                unlink(path)
                throw PhotosError.badRequest("cannot write the audit signing key \(path)")
            }
        } else if errno != EEXIST {
            throw PhotosError.badRequest("cannot create the audit signing key \(path): \(String(cString: strerror(errno)))")
        }
        return try load(path: path)
    }

    /// The key in `path`, which must exist.
    public static func load(path: String) throws -> AuditSigningKey {
        var info = stat()
        guard stat(path, &info) == 0 else { throw PhotosError.notFound("no audit signing key at \(path)") }
        guard info.st_mode & 0o077 == 0 else {
            throw PhotosError.badRequest("the audit signing key \(path) may be read by others (mode \(String(info.st_mode & 0o777, radix: 8))); chmod 600 it")
        }
        guard let data = FileManager.default.contents(atPath: path), data.count == 32,
              let key = try? Curve25519.Signing.PrivateKey(rawRepresentation: data)
        else { throw PhotosError.badRequest("the audit signing key \(path) is not a 32-byte Ed25519 key") }
        return AuditSigningKey(key)
    }

    private var key: Curve25519.Signing.PrivateKey {
        // 32 bytes read back from a key made by this type: cannot fail.
        (try? Curve25519.Signing.PrivateKey(rawRepresentation: raw)) ?? Curve25519.Signing.PrivateKey()
    }

    /// The public key, hex: what `photos-admin audit key` prints and `audit verify --public-key` takes.
    public var publicKeyHex: String { Hex.encode(key.publicKey.rawRepresentation) }

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

    /// True when `signatureHex` is this key's signature of `message`.
    func isValidSignature(_ signatureHex: String, for message: [UInt8]) -> Bool {
        guard let signature = Hex.decode(signatureHex), let key = try? Curve25519.Signing.PublicKey(rawRepresentation: raw) else { return false }
        return key.isValidSignature(signature, for: message)
    }
}

/// Lowercase hex.
enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    static func encode(_ bytes: some DataProtocol) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func decode(_ text: String) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        func value(_ c: UInt8) -> UInt8? {
            switch c {
            case 0x30...0x39: c - 0x30
            case 0x61...0x66: c - 0x61 + 10
            case 0x41...0x46: c - 0x41 + 10
            default: nil
            }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count / 2)
        var index = 0
        while index < utf8.count {
            guard let high = value(utf8[index]), let low = value(utf8[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }
}
