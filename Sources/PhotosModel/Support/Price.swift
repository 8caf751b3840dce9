import Foundation

/// Prices: decimal currency units in (`"2.50"`), integer cents stored, parsed exactly.
public enum Price {
    /// The largest accepted price, in cents (one million currency units).
    public static let maximumCents = 100_000_000

    /// Parses `"2"`, `"2.5"` or `"2.50"` into cents without floating point.
    /// Throws `bad_request` for anything else: signs, more than two decimals, letters, too large.
    public static func cents(from text: String) throws -> Int {
        try cents(from: Array(text.utf8))
    }

    /// `cents(from:)` on UTF-8 bytes (a CSV field).
    public static func cents(from bytes: [UInt8]) throws -> Int {
        switch parse(bytes) {
        case .cents(let cents): return cents
        case .malformed: throw PhotosError.badRequest("invalid price \"\(String(decoding: bytes.prefix(40), as: UTF8.self))\": expected a decimal amount like 2.50")
        case .tooLarge: throw PhotosError.badRequest("invalid price \"\(String(decoding: bytes.prefix(40), as: UTF8.self))\": more than \(maximumCents / 100)")
        }
    }

    /// What `parse` found.
    enum Parsed: Equatable {
        case cents(Int)
        case malformed
        case tooLarge
    }

    /// The one price parser, on bytes (the CSV importer calls it per row): optional spaces or
    /// tabs, 1–7 digits, optionally `.` and 1–2 digits.
    static func parse(_ raw: [UInt8]) -> Parsed {
        var start = 0, end = raw.count
        while start < end, raw[start] == 0x20 || raw[start] == 0x09 { start += 1 }
        while end > start, raw[end - 1] == 0x20 || raw[end - 1] == 0x09 { end -= 1 }
        var index = start
        var units = 0
        while index < end, (0x30...0x39).contains(raw[index]) {
            units = units * 10 + Int(raw[index] - 0x30)
            index += 1
            if index - start > 7 { return .malformed }
        }
        guard index > start else { return .malformed }
        var cents = units * 100
        if index < end {
            guard raw[index] == 0x2E else { return .malformed }
            index += 1
            let fraction = end - index
            guard (1...2).contains(fraction), raw[index..<end].allSatisfy({ (0x30...0x39).contains($0) }) else { return .malformed }
            cents += Int(raw[index] - 0x30) * 10 + (fraction == 2 ? Int(raw[index + 1] - 0x30) : 0)
        }
        return cents <= maximumCents ? .cents(cents) : .tooLarge
    }

    /// Formats cents as `"2.50"`.
    public static func format(cents: Int) -> String {
        let fraction = cents % 100
        return "\(cents / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }
}
