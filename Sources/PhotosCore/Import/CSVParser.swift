/// A streaming RFC 4180 CSV parser: feed it bytes in chunks, it hands back complete records.
///
/// Handles quoted fields with commas, doubled quotes and line breaks, and both `\n` and `\r\n`.
public struct CSVParser {
    private var field: [UInt8] = []
    private var record: [String] = []
    private var inQuotes = false
    private var quoteJustClosed = false
    private var pendingCR = false
    /// The 1-based line where the record being read started.
    public private(set) var recordLine = 1
    private var line = 1

    /// Creates a parser.
    public init() {}

    /// A malformed input, with its line.
    public struct ParseError: Error, CustomStringConvertible {
        public let line: Int
        public let message: String
        public var description: String { "line \(line): \(message)" }
    }

    /// Parses `bytes`, calling `onRecord(fields, line)` for each complete record.
    public mutating func feed(_ bytes: some Sequence<UInt8>, onRecord: ([String], Int) throws -> Void) throws {
        for byte in bytes {
            if pendingCR {
                pendingCR = false
                if byte == UInt8(ascii: "\n") { continue }
            }
            if inQuotes {
                if byte == UInt8(ascii: "\"") {
                    inQuotes = false
                    quoteJustClosed = true
                } else {
                    if byte == UInt8(ascii: "\n") { line += 1 }
                    field.append(byte)
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""):
                if quoteJustClosed {
                    field.append(byte)  // "" inside a quoted field
                    inQuotes = true
                    quoteJustClosed = false
                } else if field.isEmpty {
                    inQuotes = true
                } else {
                    throw ParseError(line: line, message: "unexpected quote inside an unquoted field")
                }
            case UInt8(ascii: ","):
                try endField()
            case UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                try endField()
                let fields = record
                let start = recordLine
                record = []
                line += 1
                recordLine = line
                pendingCR = byte == UInt8(ascii: "\r")
                if !(fields.count == 1 && fields[0].isEmpty) { try onRecord(fields, start) }
            default:
                if quoteJustClosed { throw ParseError(line: line, message: "text after a closing quote") }
                field.append(byte)
            }
        }
    }

    /// Ends the input: hands back the last record if the file did not end with a line break.
    public mutating func finish(onRecord: ([String], Int) throws -> Void) throws {
        if inQuotes { throw ParseError(line: recordLine, message: "unterminated quoted field") }
        if !field.isEmpty || !record.isEmpty || quoteJustClosed {
            try endField()
            let fields = record
            record = []
            try onRecord(fields, recordLine)
        }
    }

    private mutating func endField() throws {
        guard let text = String(validating: field, as: UTF8.self) else {
            throw ParseError(line: line, message: "invalid UTF-8")
        }
        record.append(text)
        field.removeAll(keepingCapacity: true)
        quoteJustClosed = false
    }
}
