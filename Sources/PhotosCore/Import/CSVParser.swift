import PhotosModel
/// A streaming RFC 4180 CSV parser over bytes: feed it chunks, it hands back each complete
/// record as its fields' bytes (buffers reused from record to record, so a million rows do
/// not mean millions of allocations).
///
/// Handles quoted fields with commas, doubled quotes and line breaks, and both `\n` and `\r\n`.
public struct CSVByteParser {
    private var fields: [[UInt8]] = [[]]
    private var fieldCount = 0
    private var inQuotes = false
    private var quoteJustClosed = false
    private var pendingCR = false
    private var recordLine = 1
    private var line = 1
    private var fieldHasContent = false
    /// How many bytes of a UTF-8 byte-order mark (EF BB BF) opened the input so far; -1 once
    /// past the start. A leading mark (Excel writes one) is skipped.
    private var byteOrderMarkSeen = 0

    /// Creates a parser.
    public init() {}

    /// A malformed input, with its line.
    public struct ParseError: Error, CustomStringConvertible {
        public let line: Int
        public let message: String
        public var description: String { "line \(line): \(message)" }
    }

    private mutating func append(_ byte: UInt8) {
        fields[fieldCount].append(byte)
        fieldHasContent = true
    }

    private mutating func endField() {
        fieldCount += 1
        if fields.count == fieldCount { fields.append([]) }
        fields[fieldCount].removeAll(keepingCapacity: true)
        quoteJustClosed = false
        fieldHasContent = false
    }

    private mutating func endRecord(_ onRecord: (ArraySlice<[UInt8]>, Int) throws -> Void) throws {
        // A blank line is no record (a line holding just "" is one empty field).
        let blank = fieldCount == 0 && !fieldHasContent
        endField()
        let count = fieldCount
        let start = recordLine
        fieldCount = 0
        if !blank { try onRecord(fields[0..<count], start) }
        fields[0].removeAll(keepingCapacity: true)
    }

    /// Parses `bytes`, calling `onRecord(fields, line)` for each complete record. The fields
    /// are valid only during the call.
    public mutating func feed(_ bytes: UnsafeRawBufferPointer, onRecord: (ArraySlice<[UInt8]>, Int) throws -> Void) throws {
        for byte in bytes {
            if byteOrderMarkSeen >= 0 {
                let mark: [UInt8] = [0xEF, 0xBB, 0xBF]
                if byte == mark[byteOrderMarkSeen] {
                    byteOrderMarkSeen += 1
                    if byteOrderMarkSeen == mark.count { byteOrderMarkSeen = -1 }
                    continue
                }
                // Not a mark after all: what was held back is content.
                for held in mark[0..<byteOrderMarkSeen] { append(held) }
                byteOrderMarkSeen = -1
            }
            if pendingCR {
                pendingCR = false
                if byte == 0x0A { continue }
            }
            if inQuotes {
                if byte == 0x22 {
                    inQuotes = false
                    quoteJustClosed = true
                } else {
                    if byte == 0x0A { line += 1 }
                    append(byte)
                }
                continue
            }
            switch byte {
            case 0x22:  // "
                if quoteJustClosed {
                    append(byte)  // "" inside a quoted field
                    inQuotes = true
                    quoteJustClosed = false
                } else if !fieldHasContent {
                    inQuotes = true
                    fieldHasContent = true
                } else {
                    throw ParseError(line: line, message: "unexpected quote inside an unquoted field")
                }
            case 0x2C:  // ,
                endField()
            case 0x0A, 0x0D:
                try endRecord(onRecord)
                line += 1
                recordLine = line
                pendingCR = byte == 0x0D
            default:
                if quoteJustClosed { throw ParseError(line: line, message: "text after a closing quote") }
                append(byte)
            }
        }
    }

    /// Ends the input: hands back the last record if the file did not end with a line break.
    public mutating func finish(onRecord: (ArraySlice<[UInt8]>, Int) throws -> Void) throws {
        if inQuotes { throw ParseError(line: recordLine, message: "unterminated quoted field") }
        if fieldHasContent || fieldCount > 0 || quoteJustClosed {
            try endRecord(onRecord)
        }
    }
}

/// The same parser handing back fields as strings (checked UTF-8), for small files and tests.
public struct CSVParser {
    private var parser = CSVByteParser()

    /// Creates a parser.
    public init() {}

    /// A malformed input, with its line.
    public typealias ParseError = CSVByteParser.ParseError

    /// Parses `bytes`, calling `onRecord(fields, line)` for each complete record.
    public mutating func feed(_ bytes: some Sequence<UInt8>, onRecord: ([String], Int) throws -> Void) throws {
        let array = Array(bytes)
        try array.withUnsafeBytes { buffer in
            try parser.feed(buffer) { fields, line in try onRecord(try Self.strings(fields, line), line) }
        }
    }

    /// Ends the input.
    public mutating func finish(onRecord: ([String], Int) throws -> Void) throws {
        try parser.finish { fields, line in try onRecord(try Self.strings(fields, line), line) }
    }

    static func strings(_ fields: ArraySlice<[UInt8]>, _ line: Int) throws -> [String] {
        try fields.map { bytes in
            guard let text = String(validating: bytes, as: UTF8.self) else { throw ParseError(line: line, message: "invalid UTF-8") }
            return text
        }
    }
}
