import Foundation

extension ActionBody {
    /// Reads the common shape of an action body without `JSONDecoder`, or returns nil.
    ///
    /// Every action request goes through here, and Foundation's decoder was a tenth of an
    /// action's CPU on the event loop. This accepts only a strict subset of JSON: one flat
    /// object whose keys and string values are printable ASCII without escapes, whose numbers
    /// are plain integers (no sign but `-`, no leading zero, no fraction or exponent, at most
    /// 18 digits) and whose other values are `null`, each key at most once. Anything else —
    /// including every malformed body — returns nil and goes to `JSONDecoder`, which also
    /// writes the error messages; so this path never accepts what the decoder would refuse,
    /// and the tests hold the two to the same result on every body this one accepts.
    static func fastParse(_ bytes: UnsafeRawBufferPointer) -> ActionBody? {
        var parser = FlatJSONParser(bytes)
        var action: String?
        var photoId: Int64?
        var username: String?
        var password: String?
        var expectVersion: Int64?
        var tab: String?
        var link: String?
        var seen: Set<String> = []
        guard parser.skipSpace(), parser.consume(UInt8(ascii: "{")) else { return nil }
        parser.skipSpaceOnly()
        if !parser.consume(UInt8(ascii: "}")) {
            repeat {
                parser.skipSpaceOnly()
                guard let key = parser.string() else { return nil }
                parser.skipSpaceOnly()
                guard parser.consume(UInt8(ascii: ":")) else { return nil }
                parser.skipSpaceOnly()
                guard let value = parser.value(), seen.insert(key).inserted else { return nil }
                switch (key, value) {
                case ("action", .string(let text)): action = text
                case ("photoId", .integer(let number)): photoId = number
                case ("username", .string(let text)): username = text
                case ("password", .string(let text)): password = text
                case ("expectVersion", .integer(let number)): expectVersion = number
                case ("tab", .string(let text)): tab = text
                case ("link", .string(let text)): link = text
                case ("photoId", .null), ("username", .null), ("password", .null), ("expectVersion", .null), ("tab", .null), ("link", .null): break
                case ("action", _), ("photoId", _), ("username", _), ("password", _), ("expectVersion", _), ("tab", _), ("link", _):
                    return nil  // a wrong type: the decoder names it
                default: break  // unknown keys are ignored, as by Decodable
                }
                parser.skipSpaceOnly()
            } while parser.consume(UInt8(ascii: ","))
            guard parser.consume(UInt8(ascii: "}")) else { return nil }
        }
        parser.skipSpaceOnly()
        guard parser.atEnd, let action else { return nil }
        return ActionBody(
            action: action, photoId: photoId, username: username, password: password, expectVersion: expectVersion.map { Int($0) },
            tab: tab, link: link)
    }
}

/// The byte scanner behind `ActionBody.fastParse`.
private struct FlatJSONParser {
    enum Value { case string(String), integer(Int64), null }

    let bytes: UnsafeRawBufferPointer
    var index = 0

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    var atEnd: Bool { index == bytes.count }

    mutating func consume(_ byte: UInt8) -> Bool {
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    /// Skips JSON whitespace; always true (for use in a guard chain).
    mutating func skipSpace() -> Bool {
        skipSpaceOnly()
        return true
    }

    mutating func skipSpaceOnly() {
        while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09 {
            index += 1
        }
    }

    /// A string of printable ASCII without escapes.
    mutating func string() -> String? {
        guard consume(UInt8(ascii: "\"")) else { return nil }
        let start = index
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
                index += 1
                return text
            }
            guard byte >= 0x20, byte < 0x7F, byte != UInt8(ascii: "\\") else { return nil }
            index += 1
        }
        return nil
    }

    mutating func value() -> Value? {
        guard index < bytes.count else { return nil }
        switch bytes[index] {
        case UInt8(ascii: "\""):
            return string().map { .string($0) }
        case UInt8(ascii: "n"):
            guard bytes.count - index >= 4, bytes[index + 1] == UInt8(ascii: "u"), bytes[index + 2] == UInt8(ascii: "l"), bytes[index + 3] == UInt8(ascii: "l") else { return nil }
            index += 4
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return integer().map { .integer($0) }
        default:
            return nil
        }
    }

    /// `-?(0|[1-9][0-9]{0,17})`, not followed by a fraction or an exponent.
    mutating func integer() -> Int64? {
        let negative = consume(UInt8(ascii: "-"))
        let start = index
        var value: Int64 = 0
        while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
            // 18 digits always fit in an Int64; a 19th might not.
            guard index - start < 18 else { return nil }
            value = value * 10 + Int64(bytes[index] - UInt8(ascii: "0"))
            index += 1
        }
        let digits = index - start
        guard digits > 0, !(digits > 1 && bytes[start] == UInt8(ascii: "0")) else { return nil }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") || bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            return nil
        }
        return negative ? -value : value
    }
}
