import Foundation

/// Session ids that grow with time and keep all their random bits.
///
/// An id is 9 base-36 digits of the milliseconds since 1970 (lower-case letters and digits, so
/// that it sorts the same in SQLite's byte order and in any PostgreSQL collation), then 144 random
/// bits (`SecureToken.random(byteCount: 18)`, 24 base64url characters): 33 characters. A random
/// id landed on a random leaf of the `sessions` key and of the audit trail's `(session_id, seq)`
/// index, so a database of a million sessions needed its whole index in memory to create one;
/// ids that grow with time put new rows on the right-hand pages. Knowing when a session was
/// created helps no one guess its id: the random part is as long as before.
public enum SessionID {
    /// Digits of the time prefix: enough until the year 5138.
    static let timeDigits = 9
    private static let alphabet = Array("0123456789abcdefghijklmnopqrstuvwxyz".utf8)

    /// A new id, for a session created at `now`.
    public static func make(now: Date = Date()) -> String {
        timePrefix(now) + SecureToken.random(byteCount: 18)
    }

    /// The time prefix of `date`: its milliseconds since 1970 in base 36, 9 digits.
    public static func timePrefix(_ date: Date) -> String {
        var value = UInt64(max(0, (date.timeIntervalSince1970 * 1_000).rounded(.down)))
        var digits = [UInt8](repeating: alphabet[0], count: timeDigits)
        for index in stride(from: timeDigits - 1, through: 0, by: -1) {
            digits[index] = alphabet[Int(value % 36)]
            value /= 36
        }
        return String(decoding: digits, as: UTF8.self)
    }
}
