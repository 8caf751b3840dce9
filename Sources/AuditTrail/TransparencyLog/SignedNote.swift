import Crypto
import Foundation

/// A C2SP `signed-note`: a text (UTF-8, ending in a newline) and Ed25519 signatures of it, each on
/// a line `— <key name> <base64(key id ‖ signature)>` after a blank line. The key id is the
/// first four bytes of SHA-256(key name ‖ 0x0A ‖ 0x01 ‖ public key). The format of the Go
/// checksum database (`golang.org/x/mod/sumdb/note`) and of every C2SP transparency log.
public struct SignedNote: Sendable, Equatable {
    /// The signed text, its final newline included.
    public var text: String
    /// The signatures, in order.
    public var signatures: [Signature]

    /// A note of `text` with `signatures`.
    public init(text: String, signatures: [Signature]) {
        self.text = text
        self.signatures = signatures
    }

    /// One signature line.
    public struct Signature: Sendable, Equatable {
        /// The signing key's name (for a checkpoint: the log's origin).
        public var keyName: String
        /// The key's id.
        public var keyID: UInt32
        /// The signature's bytes after the key id: 64 for an Ed25519 note signature; another
        /// length for another algorithm (a C2SP cosignature: 8 bytes of time and 64 of signature).
        public var signature: [UInt8]

        /// One signature line without its newline, `— <key name> <base64(4-byte key id ‖
        /// signature)>`; nil for anything else.
        public init?(line: some StringProtocol) {
            let fields = line.split(separator: " ", omittingEmptySubsequences: false)
            guard fields.count == 3, fields[0] == "\u{2014}", SignedNote.isKeyName(String(fields[1])),
                  let bytes = Data(base64Encoded: String(fields[2])), bytes.count > 4 else { return nil }
            keyName = String(fields[1])
            keyID = bytes.prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            signature = Array(bytes.dropFirst(4))
        }

        /// A signature of `keyName`'s key `keyID`.
        public init(keyName: String, keyID: UInt32, signature: [UInt8]) {
            self.keyName = keyName
            self.keyID = keyID
            self.signature = signature
        }
    }

    /// A note's verifier key: a name and an Ed25519 public key, written
    /// `<name>+<8 hex key id>+<base64(0x01 ‖ public key)>`.
    public struct VerifierKey: Sendable, Equatable, CustomStringConvertible {
        /// The key's name.
        public var name: String
        /// The raw Ed25519 public key (32 bytes).
        public var publicKey: [UInt8]

        /// The key named `name`.
        public init(name: String, publicKey: [UInt8]) {
            self.name = name
            self.publicKey = publicKey
        }

        /// Parses `<name>+<hex id>+<base64>`; nil for anything else (a wrong id, another algorithm).
        /// Only the first two `+` separate: base64 has `+` of its own.
        public init?(_ text: String) {
            guard let (name, publicKey) = SignedNote.parseKey(text, type: 0x01) else { return nil }
            self.init(name: name, publicKey: publicKey)
        }

        /// The key id: SHA-256(name ‖ 0x0A ‖ 0x01 ‖ public key), first four bytes, big-endian.
        public var keyID: UInt32 { SignedNote.keyID(name: name, type: 0x01, publicKey: publicKey) }

        /// `<name>+<hex id>+<base64(0x01 ‖ key)>`.
        public var description: String {
            SignedNote.keyText(name: name, type: 0x01, publicKey: publicKey)
        }

        /// Whether `signature` is this key's over `text`.
        func verifies(_ signature: [UInt8], of text: String) -> Bool {
            guard signature.count == 64, let key = try? Curve25519.Signing.PublicKey(rawRepresentation: publicKey) else { return false }
            return key.isValidSignature(signature, for: Array(text.utf8))
        }
    }

    /// A verifier key's id: SHA-256(name ‖ 0x0A ‖ type ‖ public key), first four bytes,
    /// big-endian (type 0x01: a note signer; 0x04: a cosigner, C2SP tlog-cosignature).
    static func keyID(name: String, type: UInt8, publicKey: [UInt8]) -> UInt32 {
        var hasher = SHA256()
        hasher.update(data: Array(name.utf8) + [0x0A, type] + publicKey)
        return Array(hasher.finalize()).prefix(4).reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// `<name>+<8 hex key id>+<base64(type ‖ public key)>`.
    static func keyText(name: String, type: UInt8, publicKey: [UInt8]) -> String {
        name + "+" + String(format: "%08x", keyID(name: name, type: type, publicKey: publicKey)) + "+" + Data([type] + publicKey).base64EncodedString()
    }

    /// The name and Ed25519 public key of a verifier key of `type` written as `keyText` does;
    /// nil for anything else (another type, a wrong id, not an Ed25519 key's length). Only the
    /// first two `+` separate: base64 has `+` of its own.
    static func parseKey(_ text: String, type: UInt8) -> (name: String, publicKey: [UInt8])? {
        let parts = text.split(separator: "+", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, isKeyName(String(parts[0])), parts[1].count == 8, let id = UInt32(parts[1], radix: 16),
              let encoded = Data(base64Encoded: String(parts[2])), encoded.count == 33, encoded.first == type else { return nil }
        let name = String(parts[0]), publicKey = Array(encoded.dropFirst())
        guard keyID(name: name, type: type, publicKey: publicKey) == id else { return nil }
        return (name, publicKey)
    }

    /// Whether `name` may name a key: not empty, no spaces, no `+`.
    public static func isKeyName(_ name: String) -> Bool {
        !name.isEmpty && !name.unicodeScalars.contains { $0 == "+" || $0.properties.isWhitespace }
    }

    /// `text` signed by each of `keys` (name, private key), in order.
    public static func sign(_ text: String, with keys: [(name: String, key: Curve25519.Signing.PrivateKey)]) throws -> SignedNote {
        let signatures = try keys.map { name, key in
            let verifier = VerifierKey(name: name, publicKey: Array(key.publicKey.rawRepresentation))
            return Signature(keyName: name, keyID: verifier.keyID, signature: Array(try key.signature(for: Array(text.utf8))))
        }
        return SignedNote(text: text, signatures: signatures)
    }

    /// The note as text: the text, a blank line, a line per signature.
    public var encoded: String {
        text + "\n" + signatures.map(Self.line).joined()
    }

    /// One signature line, `— <key name> <base64(key id ‖ signature)>` and its newline.
    public static func line(_ signature: Signature) -> String {
        let id = withUnsafeBytes(of: signature.keyID.bigEndian) { Array($0) }
        return "\u{2014} \(signature.keyName) \(Data(id + signature.signature).base64EncodedString())\n"
    }

    /// Why a note's text could not be read or verified.
    public struct Problem: Error, Equatable, CustomStringConvertible {
        public let description: String
    }

    /// The most signature lines a note may carry (C2SP signed-note; Go's `sumdb/note` too).
    public static let maxSignatures = 100

    /// Reads an encoded note as C2SP `signed-note` says: UTF-8 text without control characters
    /// but the newline, ending in a newline; a blank line; then 1 to 100 signature lines `— <key
    /// name> <base64(4-byte key id ‖ signature)>`. Signatures of any key and any algorithm are kept
    /// (a witness's 72-byte cosignature among them): only the ones a verifier knows are checked.
    /// Throws for a note that is not one (no blank line before the signatures, a malformed
    /// signature line, text not ending in a newline, a control character, too many signatures).
    public init(parsing encoded: String) throws {
        if let bad = encoded.unicodeScalars.first(where: { $0 != "\n" && $0.properties.generalCategory == .control }) {
            throw Problem(description: "a control character (U+\(String(format: "%04X", bad.value))) in the note")
        }
        guard let split = encoded.range(of: "\n\n", options: .backwards) else { throw Problem(description: "no blank line before the signatures") }
        let text = String(encoded[..<split.lowerBound]) + "\n"
        let lines = encoded[split.upperBound...].split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.last == "" else { throw Problem(description: "the signatures do not end with a newline") }
        guard lines.count - 1 <= Self.maxSignatures else { throw Problem(description: "more than \(Self.maxSignatures) signatures") }
        var signatures: [Signature] = []
        for line in lines.dropLast() {
            guard let signature = Signature(line: line) else { throw Problem(description: "a malformed signature line") }
            signatures.append(signature)
        }
        guard !signatures.isEmpty else { throw Problem(description: "no signature") }
        self.init(text: text, signatures: signatures)
    }

    /// Whether `key` signed the note: a signature line with its name and id whose signature verifies.
    public func isSigned(by key: VerifierKey) -> Bool {
        signatures.contains { $0.keyName == key.name && $0.keyID == key.keyID && key.verifies($0.signature, of: text) }
    }
}

/// A C2SP `tlog-checkpoint`: the body of a log's signed note — its origin, its size and the base64
/// of its root hash, one per line.
public struct LogCheckpoint: Sendable, Equatable {
    /// The log's name (`audit.logOrigin`).
    public var origin: String
    /// How many leaves the tree has.
    public var size: Int64
    /// The tree's root hash.
    public var root: MerkleTree.Hash
    /// Extension lines after the root, in order (photosd writes `key <verifier key>` on a key
    /// rotation and `previous <origin> <size> <base64 root>` on a new log's first checkpoint).
    public var extensions: [String]

    /// A checkpoint.
    public init(origin: String, size: Int64, root: MerkleTree.Hash, extensions: [String] = []) {
        self.origin = origin
        self.size = size
        self.root = root
        self.extensions = extensions
    }

    /// `<origin>\n<size>\n<base64 root>\n`, then each extension line.
    public var body: String { "\(origin)\n\(size)\n\(Data(root).base64EncodedString())\n" + extensions.map { $0 + "\n" }.joined() }

    /// The new verifier key of a rotation's checkpoint (its `key` extension line), if any.
    public var nextKey: SignedNote.VerifierKey? {
        extensions.lazy.compactMap { line in line.hasPrefix("key ") ? SignedNote.VerifierKey(String(line.dropFirst(4))) : nil }.first
    }

    /// Reads a checkpoint's body (extension lines after the third are kept).
    public init(parsing body: String) throws {
        let lines = body.split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count >= 4, lines.last == "", let size = Int64(lines[1]), size >= 0, String(size) == lines[1],
              let rootData = Data(base64Encoded: String(lines[2])), let root = MerkleTree.Hash(rootData), !lines[0].isEmpty else {
            throw SignedNote.Problem(description: "not a checkpoint: origin, size and root hash, one per line")
        }
        let extensions = lines.dropFirst(3).dropLast().map(String.init)
        guard !extensions.contains(where: \.isEmpty) else { throw SignedNote.Problem(description: "not a checkpoint: an empty extension line") }
        self.init(origin: String(lines[0]), size: size, root: root, extensions: extensions)
    }
}

/// The text of `GET /v1/log/rotations`: the rotation checkpoints' signed notes, oldest first, a
/// blank line between two.
public enum RotationNotes {
    /// The notes in `text`: a note ends with its last signature line, and the next begins after
    /// the blank line that follows it.
    public static func split(_ text: String) -> [String] {
        var notes: [String] = []
        var current = ""
        var inSignatures = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if inSignatures, line.isEmpty {
                notes.append(current)
                current = ""
                inSignatures = false
                continue
            }
            if line.isEmpty, !current.isEmpty { inSignatures = true }
            current += line + "\n"
        }
        // The last note's text ends with its last signature line's newline: the split left an
        // empty line after it.
        if current.hasSuffix("\n\n") { current.removeLast() }
        if !current.trimmingCharacters(in: .newlines).isEmpty { notes.append(current) }
        return notes
    }
}
