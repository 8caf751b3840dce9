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
}

/// A flat JSON object with sorted keys.
public typealias JSONObject = [String: JSONValue]

extension Dictionary where Key == String, Value == JSONValue {
    /// The JSON text, keys sorted. Written on every audit row, so built as bytes in one buffer.
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
