import Crypto
import Foundation

/// A witness's cosignature on a checkpoint (C2SP `tlog-cosignature`, Ed25519, `cosignature/v1`):
/// a signed-note signature line whose bytes after the key id are an 8-byte big-endian POSIX time
/// and an Ed25519 signature over `cosignature/v1\ntime <t>\n` followed by the checkpoint's body.
/// It says: as of that time, the largest consistent tree the witness saw for the log has this root.
public enum Cosignature {
    /// The message a cosignature at `time` signs for a checkpoint whose note text is `body`.
    public static func message(time: UInt64, body: String) -> [UInt8] {
        Array("cosignature/v1\ntime \(time)\n".utf8) + Array(body.utf8)
    }

    /// `key`'s cosignature at `time` on the note text `body`, named `name`.
    public static func sign(body: String, name: String, key: Curve25519.Signing.PrivateKey, time: UInt64) throws -> SignedNote.Signature {
        let cosigner = CosignerKey(name: name, publicKey: Array(key.publicKey.rawRepresentation))
        let signature = try key.signature(for: message(time: time, body: body))
        let timeBytes = withUnsafeBytes(of: time.bigEndian) { Array($0) }
        return SignedNote.Signature(keyName: name, keyID: cosigner.keyID, signature: timeBytes + Array(signature))
    }
}

/// A cosigner's (a witness's) verifier key: a name and an Ed25519 public key, written
/// `<name>+<8 hex key id>+<base64(0x04 ‖ public key)>`; the key id is the first four bytes of
/// SHA-256(name ‖ 0x0A ‖ 0x04 ‖ public key).
public struct CosignerKey: Sendable, Equatable, Hashable, CustomStringConvertible {
    public var name: String
    /// The raw Ed25519 public key (32 bytes).
    public var publicKey: [UInt8]

    /// The key named `name`.
    public init(name: String, publicKey: [UInt8]) {
        self.name = name
        self.publicKey = publicKey
    }

    /// Parses `<name>+<hex id>+<base64(0x04 ‖ key)>`; nil for anything else (another type, a
    /// wrong id, not an Ed25519 key).
    public init?(_ text: String) {
        guard let (name, publicKey) = SignedNote.parseKey(text, type: 0x04),
              (try? Curve25519.Signing.PublicKey(rawRepresentation: publicKey)) != nil else { return nil }
        self.init(name: name, publicKey: publicKey)
    }

    /// SHA-256(name ‖ 0x0A ‖ 0x04 ‖ public key), first four bytes, big-endian.
    public var keyID: UInt32 { SignedNote.keyID(name: name, type: 0x04, publicKey: publicKey) }

    /// `<name>+<hex id>+<base64(0x04 ‖ key)>`.
    public var description: String { SignedNote.keyText(name: name, type: 0x04, publicKey: publicKey) }

    /// The time of this key's cosignature on the note `note`, if the note carries a valid one.
    public func cosignedTime(of note: SignedNote) -> UInt64? {
        guard let key = try? Curve25519.Signing.PublicKey(rawRepresentation: publicKey) else { return nil }
        for line in note.signatures where line.keyName == name && line.keyID == keyID && line.signature.count == 72 {
            let time = line.signature.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            guard time <= UInt64(Int64.max) else { continue }
            if key.isValidSignature(Array(line.signature.dropFirst(8)), for: Cosignature.message(time: time, body: note.text)) { return time }
        }
        return nil
    }
}
