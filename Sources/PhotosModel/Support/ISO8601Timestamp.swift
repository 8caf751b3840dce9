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
        // Written digit by digit: String(format:) was a visible share of every write.
        var bytes = [UInt8](repeating: 0, count: 24)
        func put(_ value: Int, at offset: Int, width: Int) {
            var value = value
            for index in stride(from: offset + width - 1, through: offset, by: -1) {
                bytes[index] = UInt8(ascii: "0") + UInt8(value % 10)
                value /= 10
            }
        }
        put(Int(parts.tm_year) + 1900, at: 0, width: 4)
        bytes[4] = UInt8(ascii: "-")
        put(Int(parts.tm_mon) + 1, at: 5, width: 2)
        bytes[7] = UInt8(ascii: "-")
        put(Int(parts.tm_mday), at: 8, width: 2)
        bytes[10] = UInt8(ascii: "T")
        put(Int(parts.tm_hour), at: 11, width: 2)
        bytes[13] = UInt8(ascii: ":")
        put(Int(parts.tm_min), at: 14, width: 2)
        bytes[16] = UInt8(ascii: ":")
        put(Int(parts.tm_sec), at: 17, width: 2)
        bytes[19] = UInt8(ascii: ".")
        put(Int(milliseconds % 1000), at: 20, width: 3)
        bytes[23] = UInt8(ascii: "Z")
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The timestamp for now.
    public static func now() -> String { string(from: Date()) }

    /// The date of a timestamp in this form, nil for anything else.
    public static func date(from text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text)
    }

    /// A stored timestamp (`2026-11-23T16:40:29.123Z`) as the API writes its `date-time` fields:
    /// RFC 3339 in UTC with whole seconds (`2026-11-23T16:40:29Z`), rounded down, the form that
    /// Foundation's `.iso8601` decoding and generated OpenAPI clients' default transcoder read
    /// (both refuse fractional seconds). Text in any other form is returned as it is.
    public static func wholeSeconds(_ stored: String) -> String {
        let utf8 = Array(stored.utf8)
        guard utf8.count == 24, utf8[19] == UInt8(ascii: "."), utf8[23] == UInt8(ascii: "Z") else { return stored }
        return String(decoding: utf8[0..<19] + [UInt8(ascii: "Z")], as: UTF8.self)
    }
}
