import Foundation

/// ISO-8601 UTC timestamps with milliseconds (`2026-11-21T23:44:15.123Z`), the form every
/// table and the `audit_trail` view use. Sorting the text sorts the times.
///
/// The form has four digits of year and no sign, and the stores compare it as text: it can say
/// the times from 1970-01-01 to 9999-12-31 (`representable`). What it cannot say is refused when
/// parsed (`parse`, `date(from:)`) and clamped when written (`string(from:)`), never a crash.
public enum ISO8601Timestamp {
    /// The first and the last millisecond this form writes.
    public static let representable: ClosedRange<Date> =
        Date(timeIntervalSince1970: 0)...Date(timeIntervalSince1970: 253_402_300_799.999)

    /// The timestamp for `date`, clamped to `representable` (a cutoff such as "now minus a
    /// retention of 100 years" is the form's first millisecond, which sorts first as it should).
    public static func string(from date: Date) -> String {
        let since1970 = date.timeIntervalSince1970.isNaN ? 0 : date.timeIntervalSince1970
        let clamped = min(max(since1970, representable.lowerBound.timeIntervalSince1970), representable.upperBound.timeIntervalSince1970)
        let milliseconds = Int64((clamped * 1000).rounded(.down))
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

    /// The date of a timestamp in this form (`2026-11-21T23:44:15.123Z`), nil for anything else.
    public static func date(from text: String) -> Date? {
        guard text.utf8.count == 24 else { return nil }
        return parse(text)
    }

    /// The one parser of times typed by people and read from the stores: a UTC date
    /// (`2026-11-23`, its first millisecond), a time to the second (`2026-11-23T10:00:00Z`) or to
    /// the millisecond (`2026-11-23T10:00:00.000Z`). Nil for anything else: another form, a day
    /// that does not exist (`2026-02-30`), or a time outside `representable` (`0000-01-01`,
    /// `1969-12-31T23:59:59.500Z`).
    public static func parse(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for index in range {
                let byte = bytes[index]
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        func byte(_ index: Int, is character: Unicode.Scalar) -> Bool { bytes[index] == UInt8(ascii: character) }
        guard [10, 20, 24].contains(bytes.count), byte(4, is: "-"), byte(7, is: "-"),
              let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              (1970...9999).contains(year), (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day)
        else { return nil }
        var (hour, minute, second, millisecond) = (0, 0, 0, 0)
        if bytes.count > 10 {
            guard byte(10, is: "T"), byte(13, is: ":"), byte(16, is: ":"), byte(bytes.count - 1, is: "Z"),
                  let h = number(11..<13), let m = number(14..<16), let s = number(17..<19), h < 24, m < 60, s < 60
            else { return nil }
            (hour, minute, second) = (h, m, s)
            if bytes.count == 24 {
                guard byte(19, is: "."), let fraction = number(20..<23) else { return nil }
                millisecond = fraction
            }
        }
        let days = daysSince1970(year: year, month: month, day: day)
        let seconds = ((days * 24 + hour) * 60 + minute) * 60 + second
        return Date(timeIntervalSince1970: Double(seconds) + Double(millisecond) / 1000)
    }

    /// The days of `month` in `year` (Gregorian).
    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 to a Gregorian date (Howard Hinnant's `days_from_civil`).
    private static func daysSince1970(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = y / 400  // y ≥ 1969 here: no negative division
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
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
