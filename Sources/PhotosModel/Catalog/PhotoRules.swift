import Foundation

/// The rules every new photo passes, whichever way it enters the catalogue (`photos add`, a
/// CSV or JSON import, anything later): one implementation, on UTF-8 bytes, so a title or URL
/// gets the same verdict everywhere. The 1 M-row CSV import calls it per row, so the common
/// case (ASCII) is a single pass over the bytes.
///
/// - Title: white space (Unicode's, line breaks included) trimmed from both ends; then 1–200
///   characters (grapheme clusters, as a reader counts them) with no control character inside
///   (no tab, line break, NUL, …).
/// - URL: optional (white space trimmed; empty means "derive one from the title"); otherwise an
///   absolute `http` or `https` URL with a host and no user information, at most 2,000 bytes, in
///   the characters RFC 3986 allows (ASCII; `%` followed by two hex digits).
/// - Price: 0 to `Price.maximumCents`.
public enum PhotoRules {
    /// The longest title, in characters.
    public static let maximumTitleCharacters = 200
    /// The longest URL, in bytes.
    public static let maximumURLBytes = 2_000

    /// The range of `bytes` that is the title once trimmed, or a `bad_request` naming the rule.
    public static func checkTitle(_ bytes: UnsafeBufferPointer<UInt8>) throws -> Range<Int> {
        if bytes.allSatisfy({ $0 < 0x80 }) {
            // ASCII: trim, then every remaining byte must be printable.
            let range = trimmedASCII(bytes)
            guard (1...maximumTitleCharacters).contains(range.count) else { throw titleLength }
            for index in range where bytes[index] < 0x20 || bytes[index] == 0x7F { throw titleControl }
            return range
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw PhotosError.badRequest("invalid title: not valid UTF-8")
        }
        let scalars = text.unicodeScalars
        var start = scalars.startIndex, end = scalars.endIndex
        while start < end, isSpace(scalars[start]) { start = scalars.index(after: start) }
        while end > start, isSpace(scalars[scalars.index(before: end)]) { end = scalars.index(before: end) }
        let trimmed = text[start..<end]
        guard (1...maximumTitleCharacters).contains(trimmed.count) else { throw titleLength }
        if trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) { throw titleControl }
        // Bidirectional overrides and isolates make a title read differently from what it is
        // (and from how it sorts): refused, as Trojan Source's advisories recommend.
        if trimmed.unicodeScalars.contains(where: { (0x202A...0x202E).contains($0.value) || (0x2066...0x2069).contains($0.value) }) {
            throw PhotosError.badRequest("invalid title: bidirectional control characters (U+202A–U+202E, U+2066–U+2069) are not allowed")
        }
        let utf8 = text.utf8
        return utf8.distance(from: utf8.startIndex, to: start)..<utf8.distance(from: utf8.startIndex, to: end)
    }

    /// The range of `bytes` that is the URL once trimmed; nil when none was given (empty or
    /// white space), or a `bad_request`.
    public static func checkURL(_ bytes: UnsafeBufferPointer<UInt8>) throws -> Range<Int>? {
        let range = trimmedASCII(bytes)
        guard !range.isEmpty else { return nil }
        let url = UnsafeBufferPointer(rebasing: bytes[range])
        func refuse() -> PhotosError {
            PhotosError.badRequest("invalid url \"\(String(decoding: url.prefix(60), as: UTF8.self))\": expected an absolute http(s) URL")
        }
        guard url.count <= maximumURLBytes else { throw refuse() }
        // Scheme (case-insensitive), "://", then a host: not empty, not a path, query or fragment.
        let schemeLength: Int
        if hasPrefix(url, "https://") {
            schemeLength = 8
        } else if hasPrefix(url, "http://") {
            schemeLength = 7
        } else {
            throw refuse()
        }
        // The authority: up to the first "/", "?" or "#"; a host is required, and user
        // information ("https://trusted.example@elsewhere.example/") is refused.
        let authorityEnd = url[schemeLength...].firstIndex { "/?#".utf8.contains($0) } ?? url.count
        let authority = url[schemeLength..<authorityEnd]
        guard let first = authority.first, first != UInt8(ascii: ":"), !authority.contains(UInt8(ascii: "@")) else { throw refuse() }
        var index = schemeLength
        while index < url.count {
            let byte = url[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < url.count, isHexDigit(url[index + 1]), isHexDigit(url[index + 2]) else { throw refuse() }
                index += 3
                continue
            }
            guard byte < 0x80, allowedInURL[Int(byte)] else { throw refuse() }
            index += 1
        }
        return range
    }

    /// The catalogue's URL for a photo given none: `https://photos.example.com/<slug>.jpg`, the
    /// slug being the title's first 80 Unicode scalars, ASCII letters and digits lowercased and
    /// anything else a dash.
    public static func defaultURL(title: UnsafeBufferPointer<UInt8>, into url: inout [UInt8]) {
        url.removeAll(keepingCapacity: true)
        url.append(contentsOf: "https://photos.example.com/".utf8)
        var written = 0
        for byte in title {
            if byte & 0xC0 == 0x80 { continue }  // continues a scalar already counted
            guard written < 80 else { break }
            switch byte {
            case 0x30...0x39, 0x61...0x7A: url.append(byte)
            case 0x41...0x5A: url.append(byte + 0x20)
            default: url.append(UInt8(ascii: "-"))
            }
            written += 1
        }
        url.append(contentsOf: ".jpg".utf8)
    }

    /// Throws `bad_request` for a price out of range.
    public static func checkPrice(cents: Int) throws {
        guard (0...Price.maximumCents).contains(cents) else {
            throw PhotosError.badRequest("invalid price: must be between 0 and \(Price.format(cents: Price.maximumCents))")
        }
    }

    /// `photo` checked, trimmed, and with its URL filled in.
    public static func checked(_ photo: NewPhoto) throws -> NewPhoto {
        try checkPrice(cents: photo.priceCents)
        var title = photo.title
        return try title.withUTF8 { titleBytes in
            let titleRange = try checkTitle(titleBytes)
            let checkedTitle = UnsafeBufferPointer(rebasing: titleBytes[titleRange])
            var given = photo.url ?? ""
            var url = try given.withUTF8 { bytes in try checkURL(bytes).map { Array(bytes[$0]) } } ?? []
            if url.isEmpty { defaultURL(title: checkedTitle, into: &url) }
            return NewPhoto(title: String(decoding: checkedTitle, as: UTF8.self), url: String(decoding: url, as: UTF8.self), priceCents: photo.priceCents)
        }
    }

    // MARK: Helpers

    private static let titleLength = PhotosError.badRequest("invalid title: use 1 to \(maximumTitleCharacters) characters")
    private static let titleControl = PhotosError.badRequest("invalid title: control characters (tabs, line breaks) are not allowed")

    /// White space as `CharacterSet.whitespacesAndNewlines` has it.
    private static func isSpace(_ scalar: Unicode.Scalar) -> Bool {
        CharacterSet.whitespacesAndNewlines.contains(scalar)
    }

    /// `bytes` without ASCII white space (space, tab, line feed, vertical tab, form feed,
    /// carriage return) at either end. For ASCII text this is exactly `isSpace` trimming.
    private static func trimmedASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Range<Int> {
        func space(_ byte: UInt8) -> Bool { byte == 0x20 || (0x09...0x0D).contains(byte) }
        var start = 0, end = bytes.count
        while start < end, space(bytes[start]) { start += 1 }
        while end > start, space(bytes[end - 1]) { end -= 1 }
        return start..<end
    }

    private static func hasPrefix(_ bytes: UnsafeBufferPointer<UInt8>, _ prefix: StaticString) -> Bool {
        guard bytes.count >= prefix.utf8CodeUnitCount else { return false }
        for offset in 0..<prefix.utf8CodeUnitCount {
            // ASCII letters compare without case (`HTTPS://` is a scheme too).
            if !ASCII.matchesIgnoringCase(bytes[offset], lowercase: prefix.utf8Start[offset]) { return false }
        }
        return true
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
    }

    /// RFC 3986's unreserved and reserved characters (`%` is handled apart).
    private static let allowedInURL: [Bool] = (0..<128).map { code in
        let byte = UInt8(code)
        if (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) { return true }
        return "-._~:/?#[]@!$&'()*+,;=".utf8.contains(byte)
    }
}
