import Foundation
import SQLiteStore

/// Imports photos from a file in one transaction, all or nothing.
///
/// CSV is parsed while it streams from disk, inside the writer's transaction, checked and bound
/// field by field as bytes with one prepared statement: no array of a million photos, no
/// string per field. (JSON files are read whole; they are for small catalogues.)
public enum PhotoImporter {
    /// Imports `path` (`.csv` or `.json`) and records one `photo.added` step with the count.
    /// Throws `bad_request` naming the file and line (or element) of the first problem, and then
    /// nothing is written.
    public static func importFile(_ path: String, into database: SQLiteDatabase, actor: Actor, progress: (@Sendable (Int) -> Void)? = nil) async throws -> Int {
        guard FileManager.default.fileExists(atPath: path) else {
            throw PhotosError.badRequest("\(path): no such file")
        }
        switch (path as NSString).pathExtension.lowercased() {
        case "csv":
            guard FileManager.default.isReadableFile(atPath: path) else { throw PhotosError.badRequest("\(path): cannot open") }
            return try await database.write { connection in
                let count = try importCSV(path, on: connection, progress: progress)
                try audit(count: count, actor: actor, on: connection)
                return count
            }
        case "json":
            let photos = try PhotoFile.readJSON(path: path)
            return try await CatalogService(database: database).importPhotos(photos, actor: actor, progress: progress).count
        default:
            throw PhotosError.badRequest("\(path): expected a .csv or .json file")
        }
    }

    static func audit(count: Int, actor: Actor, on connection: Connection) throws {
        guard count > 0 else { throw PhotosError.badRequest("no photos to add") }
        try AuditLog.append([AuditEntry(sessionID: actor.outOfSessionID, actor: actor, step: .photoAdded, detail: ["count": .int(Int64(count))])], on: connection)
    }

    /// The column positions, from the header.
    struct Columns {
        var title: Int
        var url: Int?
        var price: Int
        var needed: Int { max(title, price, url ?? 0) + 1 }
    }

    static func importCSV(_ path: String, on connection: Connection, progress: (@Sendable (Int) -> Void)?) throws -> Int {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw PhotosError.badRequest("\(path): cannot open") }
        defer { try? handle.close() }
        let insert = try connection.prepare("INSERT INTO photos (title, url, price_cents, created_at) VALUES (?, ?, ?, ?)")
        let createdAt = ISO8601Timestamp.now()
        var parser = CSVByteParser()
        var columns: Columns?
        var count = 0
        var slug: [UInt8] = []
        func fail(_ line: Int, _ message: String) -> PhotosError { PhotosError.badRequest("\(path):\(line): \(message)") }

        func take(_ fields: ArraySlice<[UInt8]>, _ line: Int) throws {
            guard let known = columns else {
                let names = try CSVParser.strings(fields, line).map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
                guard let title = names.firstIndex(of: "title"), let price = names.firstIndex(of: "price") else {
                    throw fail(line, "the header must name the columns title,url,price")
                }
                columns = Columns(title: title, url: names.firstIndex(of: "url"), price: price)
                return
            }
            guard fields.count >= known.needed else { throw fail(line, "expected \(known.needed) fields, found \(fields.count)") }
            let base = fields.startIndex
            let cents = try ImportField.cents(fields[base + known.price]) ?? { throw fail(line, "invalid price \"\(String(decoding: fields[base + known.price].prefix(40), as: UTF8.self))\": expected a decimal amount like 2.50") }()
            try ImportField.trimmed(fields[base + known.title]).withUnsafeBufferPointer { title in
                guard ImportField.isValidUTF8(title) else { throw fail(line, "invalid UTF-8 in title") }
                let length = ImportField.characterCount(title)
                guard (1...200).contains(length) else { throw fail(line, "invalid title: use 1 to 200 characters") }
                try insert.bindText(title, at: 1)
                let url = known.url.map { ImportField.trimmed(fields[base + $0]) } ?? []
                if url.isEmpty {
                    ImportField.defaultURL(title: title, into: &slug)
                    try slug.withUnsafeBufferPointer { try insert.bindText($0, at: 2) }
                } else {
                    guard ImportField.isValidURL(url) else {
                        throw fail(line, "invalid url \"\(String(decoding: url.prefix(60), as: UTF8.self))\": expected an http(s) URL")
                    }
                    try url.withUnsafeBufferPointer { try insert.bindText($0, at: 2) }
                }
            }
            try insert.bindInt(Int64(cents), at: 3)
            try insert.bindText(createdAt, at: 4)
            try insert.run()
            count += 1
            if count % 10_000 == 0 { progress?(count) }
        }

        do {
            while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
                try chunk.withUnsafeBytes { try parser.feed($0, onRecord: take) }
            }
            try parser.finish(onRecord: take)
        } catch let error as CSVByteParser.ParseError {
            throw fail(error.line, "malformed CSV: \(error.message)")
        }
        guard columns != nil else { throw PhotosError.badRequest("\(path): empty file (expected a header title,url,price)") }
        return count
    }
}

/// Checks on one CSV field's bytes, the same rules as `CatalogService.validated` and `Price`.
enum ImportField {
    static func trimmed(_ bytes: [UInt8]) -> [UInt8] {
        var start = 0, end = bytes.count
        while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
        while end > start, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 { end -= 1 }
        return start == 0 && end == bytes.count ? bytes : Array(bytes[start..<end])
    }

    /// `2`, `2.5`, `2.50` → cents; nil for anything else (`Price`'s own parser).
    static func cents(_ raw: [UInt8]) -> Int? {
        if case .cents(let cents) = Price.parse(raw) { return cents }
        return nil
    }

    static func isValidUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        if bytes.allSatisfy({ $0 < 0x80 }) { return true }
        return String(validating: bytes, as: UTF8.self) != nil
    }

    /// Unicode scalars (UTF-8 bytes that do not continue a sequence).
    static func characterCount(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        bytes.reduce(0) { $0 + ($1 & 0xC0 == 0x80 ? 0 : 1) }
    }

    static func isValidURL(_ bytes: [UInt8]) -> Bool {
        guard bytes.count <= 2_000 else { return false }
        let http = Array("http://".utf8), https = Array("https://".utf8)
        let prefix = bytes.starts(with: https) ? https.count : bytes.starts(with: http) ? http.count : 0
        guard prefix > 0, bytes.count > prefix else { return false }
        return bytes.allSatisfy { $0 > 0x20 && $0 != 0x7F && $0 != 0x22 && $0 != 0x3C && $0 != 0x3E }
    }

    /// The catalogue's default URL for a title: `https://photos.example.com/<slug>.jpg`.
    static func defaultURL(title: UnsafeBufferPointer<UInt8>, into slug: inout [UInt8]) {
        slug.removeAll(keepingCapacity: true)
        slug.append(contentsOf: "https://photos.example.com/".utf8)
        var written = 0
        for byte in title {
            if byte & 0xC0 == 0x80 { continue }  // one dash per non-ASCII character
            guard written < 80 else { break }
            switch byte {
            case 0x30...0x39, 0x61...0x7A: slug.append(byte)
            case 0x41...0x5A: slug.append(byte + 0x20)
            default: slug.append(0x2D)
            }
            written += 1
        }
        slug.append(contentsOf: ".jpg".utf8)
    }
}

