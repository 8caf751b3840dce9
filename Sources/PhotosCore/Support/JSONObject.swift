/// A small JSON value for audit details: deterministic text (keys sorted), so the audit hash
/// chain does not depend on dictionary order.
public enum JSONValue: Sendable, Equatable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral {
    case string(String)
    case int(Int64)
    case bool(Bool)
    case null

    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }

    /// The JSON text of this value.
    public var jsonText: String {
        switch self {
        case .string(let text): JSONValue.quote(text)
        case .int(let number): String(number)
        case .bool(let flag): flag ? "true" : "false"
        case .null: "null"
        }
    }

    /// `text` as a JSON string literal.
    public static func quote(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

/// A flat JSON object with sorted keys.
public typealias JSONObject = [String: JSONValue]

extension Dictionary where Key == String, Value == JSONValue {
    /// The JSON text, keys sorted. Written on every audit row, so built as bytes in one
    /// buffer; the same text as quoting each key and value with `JSONValue.quote`.
    public var jsonText: String {
        if isEmpty { return "{}" }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16 + count * 24)
        bytes.append(UInt8(ascii: "{"))
        func member(_ key: String, _ value: JSONValue) {
            JSONBuilder.appendQuoted(key, to: &bytes)
            bytes.append(UInt8(ascii: ":"))
            switch value {
            case .string(let text): JSONBuilder.appendQuoted(text, to: &bytes)
            case .int(let number): bytes.append(contentsOf: String(number).utf8)
            case .bool(let flag): bytes.append(contentsOf: (flag ? "true" : "false").utf8)
            case .null: bytes.append(contentsOf: "null".utf8)
            }
        }
        if count == 1, let only = first {
            member(only.key, only.value)
        } else {
            for (index, key) in keys.sorted().enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                if let value = self[key] { member(key, value) }
            }
        }
        bytes.append(UInt8(ascii: "}"))
        return String(decoding: bytes, as: UTF8.self)
    }
}
