/// Finds a key that appears twice in one JSON object.
///
/// Parsers disagree on `{"username": "alice", "username": "bob"}`: Foundation's keeps the first,
/// many others the last, so a proxy that checks one and photosd that acts on the other would
/// see different requests. Bodies with a repeated key are refused instead (`400`), before any
/// parser reads them.
enum JSONDuplicateKeys {
    /// The first key repeated within one object (with escapes decoded, so `"a"` and `"\u0061"`
    /// are the same key), or nil. Malformed JSON gives nil: the decoder reports it.
    static func first(in bytes: UnsafeRawBufferPointer) -> String? {
        // One entry per open container: the keys seen so far for an object, nil for an array.
        var open: [Set<[UInt8]>?] = []
        var expectingKey = false
        var index = 0
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "{"):
                open.append([])
                expectingKey = true
            case UInt8(ascii: "["):
                open.append(nil)
                expectingKey = false
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                _ = open.popLast()
                expectingKey = false
            case UInt8(ascii: ","):
                expectingKey = open.last.map { $0 != nil } ?? false
            case UInt8(ascii: "\""):
                guard let (text, end) = string(in: bytes, from: index) else { return nil }
                if expectingKey, let keys = open.last, var seen = keys {
                    if !seen.insert(text).inserted { return String(decoding: text, as: UTF8.self) }
                    open[open.count - 1] = seen
                    expectingKey = false
                }
                index = end
                continue
            default:
                break
            }
            index += 1
        }
        return nil
    }

    /// The string starting at the quote at `start`, its escapes decoded, and the index after
    /// its closing quote; nil when it does not end.
    private static func string(in bytes: UnsafeRawBufferPointer, from start: Int) -> ([UInt8], Int)? {
        var text: [UInt8] = []
        var index = start + 1
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") { return (text, index + 1) }
            guard byte == UInt8(ascii: "\\") else {
                text.append(byte)
                index += 1
                continue
            }
            guard index + 1 < bytes.count else { return nil }
            let escaped = bytes[index + 1]
            switch escaped {
            case UInt8(ascii: "u"):
                guard var scalar = hex4(bytes, index + 2) else { return nil }
                index += 6
                // A surrogate pair: the low half follows as another \u escape.
                if (0xD800...0xDBFF).contains(scalar), index + 5 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
                   bytes[index + 1] == UInt8(ascii: "u"), let low = hex4(bytes, index + 2), (0xDC00...0xDFFF).contains(low) {
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    index += 6
                }
                text += Array(String(Character(Unicode.Scalar(scalar) ?? "\u{FFFD}")).utf8)
            case UInt8(ascii: "n"): text.append(0x0A); index += 2
            case UInt8(ascii: "t"): text.append(0x09); index += 2
            case UInt8(ascii: "r"): text.append(0x0D); index += 2
            case UInt8(ascii: "b"): text.append(0x08); index += 2
            case UInt8(ascii: "f"): text.append(0x0C); index += 2
            default: text.append(escaped); index += 2  // \" \\ \/
            }
        }
        return nil
    }

    private static func hex4(_ bytes: UnsafeRawBufferPointer, _ start: Int) -> UInt32? {
        guard start + 4 <= bytes.count else { return nil }
        var value: UInt32 = 0
        for offset in 0..<4 {
            let byte = bytes[start + offset]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: return nil
            }
            value = value << 4 | digit
        }
        return value
    }
}
