/// Builds JSON text by hand, for the few shapes written on every request (session state,
/// action results, log lines), where Foundation's `JSONEncoder` was most of the writer's time
/// (34 % fewer actions per second with it: docs/benchmarks.md).
///
/// Commas are placed automatically; keys are written in the order given (the writers give them
/// sorted). Tests read what the writers write back into the same values, and check it against
/// `JSONSerialization`'s canonical form.
public struct JSONBuilder {
    /// The text so far, as UTF-8.
    public private(set) var bytes: [UInt8] = []
    /// Per open container: whether the next element needs a comma before it.
    private var needsComma: [Bool] = [false]
    /// True right after a key: the value that follows takes no comma.
    private var afterKey = false

    /// Creates an empty builder.
    public init(capacity: Int = 1_024) {
        bytes.reserveCapacity(capacity)
    }

    /// The text.
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    /// Called before every value and every key.
    private mutating func separate() {
        if afterKey {
            afterKey = false
            return
        }
        if needsComma[needsComma.count - 1] { bytes.append(UInt8(ascii: ",")) }
        needsComma[needsComma.count - 1] = true
    }

    /// `{`
    public mutating func beginObject() {
        separate()
        bytes.append(UInt8(ascii: "{"))
        needsComma.append(false)
    }

    /// `}`
    public mutating func endObject() {
        needsComma.removeLast()
        bytes.append(UInt8(ascii: "}"))
    }

    /// `[`
    public mutating func beginArray() {
        separate()
        bytes.append(UInt8(ascii: "["))
        needsComma.append(false)
    }

    /// `]`
    public mutating func endArray() {
        needsComma.removeLast()
        bytes.append(UInt8(ascii: "]"))
    }

    /// `"key":` — a value must follow.
    public mutating func key(_ key: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        key.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        afterKey = true
    }

    /// `"key":` for a key known only at run time (a column name), escaped — a value must follow.
    public mutating func key(_ key: String) {
        separate()
        Self.appendQuoted(key, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        afterKey = true
    }

    /// A string value, escaped.
    public mutating func string(_ value: String) {
        separate()
        Self.appendQuoted(value, to: &bytes)
    }

    /// A finite floating-point value, in Swift's shortest form (`1.5`, `1e-05`: both JSON).
    public mutating func number(_ value: Double) {
        separate()
        bytes.append(contentsOf: (value.isFinite ? String(value) : "null").utf8)
    }

    /// An integer value.
    public mutating func int<T: BinaryInteger>(_ value: T) {
        separate()
        bytes.append(contentsOf: String(value).utf8)
    }

    /// `true` or `false`.
    public mutating func bool(_ value: Bool) {
        separate()
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    /// A value that is JSON text already (another builder's `text`), appended as it is.
    public mutating func json(_ text: String) {
        separate()
        bytes.append(contentsOf: text.utf8)
    }

    /// `null`.
    public mutating func null() {
        separate()
        bytes.append(contentsOf: "null".utf8)
    }

    /// `"key":"value"`, or nothing when `value` is nil.
    public mutating func field(_ name: StaticString, _ value: String?) {
        guard let value else { return }
        key(name)
        string(value)
    }

    /// `"key":123`, or nothing when `value` is nil.
    public mutating func field<T: BinaryInteger>(_ name: StaticString, _ value: T?) {
        guard let value else { return }
        key(name)
        int(value)
    }

    static func appendQuoted(_ text: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(UInt8(ascii: "\\")); bytes.append(byte)
            case UInt8(ascii: "\\"): bytes.append(UInt8(ascii: "\\")); bytes.append(byte)
            case 0x0A: bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "n"))
            case 0x0D: bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "r"))
            case 0x09: bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "t"))
            case 0..<0x20:
                bytes.append(contentsOf: "\\u00".utf8)
                bytes.append(hexDigits[Int(byte >> 4)])
                bytes.append(hexDigits[Int(byte & 0xF)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)
}
