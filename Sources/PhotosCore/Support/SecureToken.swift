import Crypto
import Foundation

/// Random secrets and their hashes.
public enum SecureToken {
    /// `byteCount` bytes from the system's cryptographic random source, base64url without padding.
    ///
    /// It never starts with `-` or `_`: a session id or token starting with `-` would read as an
    /// option on a command line (`photos-admin purchase --session -x…`). Redrawing those costs
    /// less than 0.05 of the bits.
    public static func random(byteCount: Int = 32) -> String {
        var generator = SystemRandomNumberGenerator()
        while true {
            let bytes = (0..<byteCount).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
            let text = Data(bytes).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            if let first = text.first, first != "-" && first != "_" { return text }
        }
    }

    /// Hex SHA-256 of `text`: how tokens are stored.
    public static func sha256Hex(_ text: String) -> String {
        sha256Hex(Array(text.utf8))
    }

    /// Hex SHA-256 of `bytes`.
    public static func sha256Hex(_ bytes: [UInt8]) -> String {
        let digest = SHA256.hash(data: bytes)
        var hex = [UInt8](repeating: 0, count: 64)
        var index = 0
        for byte in digest {
            hex[index] = hexDigits[Int(byte >> 4)]
            hex[index + 1] = hexDigits[Int(byte & 0x0F)]
            index += 2
        }
        return String(decoding: hex, as: UTF8.self)
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)
}
