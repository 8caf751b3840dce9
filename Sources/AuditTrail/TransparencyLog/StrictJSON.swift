import Foundation

/// A JSON text read strictly, for documents whose every byte is evidence (a receipt): the
/// grammar of RFC 8259 and no object with the same key twice — parsers disagree on which of two
/// they keep (Swift's the first; jq, Python, node and Go the last), so a document that says two
/// things is refused rather than read as one of them.
public enum StrictJSON {
    /// Why a text was refused.
    public struct Problem: Error, Equatable, CustomStringConvertible {
        public let description: String
    }

    /// Throws unless `data` is one JSON value with no duplicate key in any object.
    public static func check(_ data: Data) throws {
        var reader = Reader(bytes: Array(data))
        reader.skipSpace()
        try reader.value(path: "$")
        reader.skipSpace()
        guard reader.index == reader.bytes.count else { throw Problem(description: "text after the JSON value at byte \(reader.index)") }
    }

    private struct Reader {
        let bytes: [UInt8]
        var index = 0

        mutating func skipSpace() {
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }

        func fail(_ what: String) -> Problem { Problem(description: "\(what) at byte \(index)") }

        mutating func value(path: String) throws {
            guard index < bytes.count else { throw fail("a value expected") }
            switch bytes[index] {
            case UInt8(ascii: "{"): try object(path: path)
            case UInt8(ascii: "["): try array(path: path)
            case UInt8(ascii: "\""): _ = try string()
            case UInt8(ascii: "t"): try literal("true")
            case UInt8(ascii: "f"): try literal("false")
            case UInt8(ascii: "n"): try literal("null")
            default: try number()
            }
        }

        mutating func literal(_ word: String) throws {
            let expected = Array(word.utf8)
            guard index + expected.count <= bytes.count, Array(bytes[index..<index + expected.count]) == expected else { throw fail("not JSON") }
            index += expected.count
        }

        mutating func number() throws {
            let start = index
            if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
            func digits() -> Int {
                let from = index
                while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
                return index - from
            }
            let whole = index
            guard digits() > 0 else { throw fail("not JSON") }
            if bytes[whole] == UInt8(ascii: "0"), index - whole > 1 { throw fail("a number with a leading zero") }
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                index += 1
                guard digits() > 0 else { throw fail("a number without digits after the point") }
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
                guard digits() > 0 else { throw fail("a number without exponent digits") }
            }
            guard index > start else { throw fail("not JSON") }
        }

        /// A string's decoded text (escapes resolved, so that `"a"` and `"\u0061"` are one key).
        mutating func string() throws -> String {
            index += 1
            var scalars = String.UnicodeScalarView()
            var raw: [UInt8] = []
            func flush() throws {
                guard !raw.isEmpty else { return }
                guard let text = String(validating: raw, as: UTF8.self) else { throw fail("a string that is not UTF-8") }
                scalars.append(contentsOf: text.unicodeScalars)
                raw.removeAll()
            }
            while true {
                guard index < bytes.count else { throw fail("an unterminated string") }
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    index += 1
                    try flush()
                    return String(scalars)
                }
                guard byte >= 0x20 else { throw fail("a control character in a string") }
                if byte != UInt8(ascii: "\\") {
                    raw.append(byte)
                    index += 1
                    continue
                }
                try flush()
                index += 1
                guard index < bytes.count else { throw fail("an unterminated escape") }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""): scalars.append("\"")
                case UInt8(ascii: "\\"): scalars.append("\\")
                case UInt8(ascii: "/"): scalars.append("/")
                case UInt8(ascii: "b"): scalars.append("\u{8}")
                case UInt8(ascii: "f"): scalars.append("\u{C}")
                case UInt8(ascii: "n"): scalars.append("\n")
                case UInt8(ascii: "r"): scalars.append("\r")
                case UInt8(ascii: "t"): scalars.append("\t")
                case UInt8(ascii: "u"):
                    var unit = try hex4()
                    if (0xD800...0xDBFF).contains(unit), index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") {
                        index += 2
                        let low = try hex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw fail("a lone surrogate") }
                        unit = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let scalar = Unicode.Scalar(unit) else { throw fail("a lone surrogate") }
                    scalars.append(scalar)
                default:
                    throw fail("an unknown escape")
                }
            }
        }

        mutating func hex4() throws -> UInt32 {
            guard index + 4 <= bytes.count, let value = UInt32(String(decoding: bytes[index..<index + 4], as: UTF8.self), radix: 16) else {
                throw fail("a bad \\u escape")
            }
            index += 4
            return value
        }

        mutating func object(path: String) throws {
            index += 1
            skipSpace()
            var keys = Set<String>()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                index += 1
                return
            }
            while true {
                skipSpace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw fail("a key expected") }
                let key = try string()
                guard keys.insert(key).inserted else { throw Problem(description: "the key \"\(key)\" twice in \(path)") }
                skipSpace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw fail("':' expected") }
                index += 1
                skipSpace()
                try value(path: path + "." + key)
                skipSpace()
                guard index < bytes.count else { throw fail("an unterminated object") }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                guard bytes[index] == UInt8(ascii: "}") else { throw fail("',' or '}' expected") }
                index += 1
                return
            }
        }

        mutating func array(path: String) throws {
            index += 1
            skipSpace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                index += 1
                return
            }
            var position = 0
            while true {
                skipSpace()
                try value(path: "\(path)[\(position)]")
                position += 1
                skipSpace()
                guard index < bytes.count else { throw fail("an unterminated array") }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                guard bytes[index] == UInt8(ascii: "]") else { throw fail("',' or ']' expected") }
                index += 1
                return
            }
        }
    }
}
