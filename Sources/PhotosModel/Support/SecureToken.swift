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
        Hex.encode(SHA256Digest.hash(bytes))
    }
}
