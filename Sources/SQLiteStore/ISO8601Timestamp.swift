import Foundation

/// ISO-8601 UTC timestamps with milliseconds (`2026-11-21T23:44:15.123Z`), the form every
/// table and the `audit_trail` view use. Sorting the text sorts the times.
public enum ISO8601Timestamp {
    /// The timestamp for `date`.
    public static func string(from date: Date) -> String {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        var seconds = time_t(milliseconds / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let ms = Int(milliseconds % 1000)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
            Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday),
            Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec), ms)
    }

    /// The timestamp for now.
    public static func now() -> String { string(from: Date()) }
}
