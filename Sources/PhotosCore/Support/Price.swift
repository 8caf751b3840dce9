import Foundation

/// Prices: decimal currency units in (`"2.50"`), integer cents stored, parsed exactly.
public enum Price {
    /// The largest accepted price, in cents (one million currency units).
    public static let maximumCents = 100_000_000

    /// Parses `"2"`, `"2.5"` or `"2.50"` into cents without floating point.
    /// Throws `bad_request` for anything else: signs, more than two decimals, letters, too large.
    public static func cents(from text: String) throws -> Int {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let parts = trimmed.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let units = parts[0]
        let fraction = parts.count > 1 ? parts[1] : ""
        guard !units.isEmpty, units.count <= 7, units.allSatisfy(\.isASCIIDigit),
              parts.count == 1 || (1...2).contains(fraction.count), fraction.allSatisfy(\.isASCIIDigit)
        else {
            throw PhotosError.badRequest("invalid price \"\(text.prefix(40))\": expected a decimal amount like 2.50")
        }
        var cents = (Int(units) ?? 0) * 100
        if !fraction.isEmpty {
            let padded = fraction.count == 1 ? fraction + "0" : fraction
            cents += Int(padded) ?? 0
        }
        guard cents <= maximumCents else {
            throw PhotosError.badRequest("invalid price \"\(text.prefix(40))\": more than \(maximumCents / 100)")
        }
        return cents
    }

    /// Formats cents as `"2.50"`.
    public static func format(cents: Int) -> String {
        let fraction = cents % 100
        return "\(cents / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }
}

extension Character {
    var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
