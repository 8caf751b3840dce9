import AuditTrail
import Foundation
import PhotosModel
import DatabaseAccess

/// Imports photos from a file in one transaction, all or nothing.
///
/// CSV is parsed while it streams from disk, inside the writer's transaction, checked and bound
/// field by field as bytes with one prepared statement: no array of a million photos, no
/// string per field. (JSON files are read whole; they are for small catalogues.)
public enum PhotoImporter {
    /// Imports `path` (`.csv` or `.json`) and records one `photo.added` step with the count.
    /// Throws `bad_request` naming the file and line (or element) of the first problem, and then
    /// nothing is written.
    public static func importFile(_ path: String, into database: any DatabaseStore, actor: AuditActor, progress: (@Sendable (Int) -> Void)? = nil) async throws -> Int {
        guard FileManager.default.fileExists(atPath: path) else {
            throw PhotosError.badRequest("\(path): no such file")
        }
        switch (path as NSString).pathExtension.lowercased() {
        case "csv":
            guard FileManager.default.isReadableFile(atPath: path) else { throw PhotosError.badRequest("\(path): cannot open") }
            return try await database.write { connection in
                let count = try await importCSV(path, on: connection, progress: progress)
                try await audit(count: count, actor: actor, on: connection)
                return count
            }
        case "json":
            let photos = try readJSON(path: path)
            return try await CatalogService(database: database).importPhotos(photos, actor: actor, progress: progress).count
        default:
            throw PhotosError.badRequest("\(path): expected a .csv or .json file")
        }
    }

    static func audit(count: Int, actor: AuditActor, on connection: any DatabaseConnection) async throws {
        guard count > 0 else { throw PhotosError.badRequest("no photos to add") }
        try await AuditChains.append([AuditEntry(actor: actor, step: .photoAdded, detail: ["count": .int(Int64(count))])], to: actor.outOfSessionID, at: ISO8601Timestamp.now(), on: connection)
    }

    /// The column positions, from the header.
    struct Columns {
        var title: Int
        var url: Int?
        var price: Int
        var needed: Int { max(title, price, url ?? 0) + 1 }
    }

    static func importCSV(_ path: String, on connection: any DatabaseConnection, progress: (@Sendable (Int) -> Void)?) async throws -> Int {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw PhotosError.badRequest("\(path): cannot open") }
        defer { try? handle.close() }
        let rows: any ImportedRows = if let connection = connection as? any ReusableStatementConnection {
            try ReusedStatementRows(connection, createdAt: ISO8601Timestamp.now())
        } else {
            BatchedImportedRows(connection, createdAt: ISO8601Timestamp.now())
        }
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
            do {
                let cents = try Price.cents(from: fields[base + known.price])
                try PhotoRules.checkPrice(cents: cents)
                try fields[base + known.title].withUnsafeBufferPointer { field in
                    let title = UnsafeBufferPointer(rebasing: field[try PhotoRules.checkTitle(field)])
                    let url = known.url.map { fields[base + $0] } ?? []
                    try url.withUnsafeBufferPointer { field in
                        if let range = try PhotoRules.checkURL(field) {
                            try rows.add(title: title, url: UnsafeBufferPointer(rebasing: field[range]), cents: cents)
                        } else {
                            PhotoRules.defaultURL(title: title, into: &slug)
                            try slug.withUnsafeBufferPointer { try rows.add(title: title, url: $0, cents: cents) }
                        }
                    }
                }
            } catch let error as PhotosError {
                throw fail(line, error.message)
            }
            count += 1
            if count % 10_000 == 0 { progress?(count) }
        }

        do {
            while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
                try chunk.withUnsafeBytes { try parser.feed($0, onRecord: take) }
                try await rows.flush()
            }
            try parser.finish(onRecord: take)
            try await rows.flush()
        } catch let error as CSVByteParser.ParseError {
            throw fail(error.line, "malformed CSV: \(error.message)")
        }
        guard columns != nil else { throw PhotosError.badRequest("\(path): empty file (expected a header title,url,price)") }
        return count
    }
}

/// Where `importCSV` puts each checked row: `add` while a chunk of the file is parsed (the
/// parser's callbacks are synchronous, its bytes valid only during the call), `flush` after it.
protocol ImportedRows: AnyObject {
    /// Adds one photo; the bytes are valid only during the call.
    func add(title: UnsafeBufferPointer<UInt8>, url: UnsafeBufferPointer<UInt8>, cents: Int) throws
    /// Writes what is still held.
    func flush() async throws
}

/// A store whose statements cost no round trip (SQLite): each row bound straight from the file's
/// bytes into one prepared statement (no `String` per field) and run at once.
final class ReusedStatementRows: ImportedRows {
    let insert: any ReusableStatement
    let createdAt: String

    init(_ connection: any ReusableStatementConnection, createdAt: String) throws {
        insert = try connection.prepareReusable("INSERT INTO photos (title, url, price_cents, created_at) VALUES (\(unbound: 4))")
        self.createdAt = createdAt
    }

    func add(title: UnsafeBufferPointer<UInt8>, url: UnsafeBufferPointer<UInt8>, cents: Int) throws {
        try insert.bindText(title, at: 1)
        try insert.bindText(url, at: 2)
        try insert.bindInt(Int64(cents), at: 3)
        try insert.bindText(createdAt, at: 4)
        try insert.run()
    }

    /// Nothing is held: each row was written by `add`.
    func flush() async throws {}
}

/// Any other store (PostgreSQL): the rows of a chunk of the file gathered, then written in
/// multi-row INSERTs of `batch` rows, one round trip each instead of one per photo.
final class BatchedImportedRows: ImportedRows {
    let connection: any DatabaseConnection
    let createdAt: String
    let batch = 500
    var rows: [[any DatabaseBindable]] = []

    init(_ connection: any DatabaseConnection, createdAt: String) {
        self.connection = connection
        self.createdAt = createdAt
    }

    func add(title: UnsafeBufferPointer<UInt8>, url: UnsafeBufferPointer<UInt8>, cents: Int) throws {
        rows.append([String(decoding: title, as: UTF8.self), String(decoding: url, as: UTF8.self), cents, createdAt])
    }

    func flush() async throws {
        try await connection.insert(into: "photos", columns: "title, url, price_cents, created_at", rows: rows, perStatement: batch)
        rows.removeAll(keepingCapacity: true)
    }
}

extension PhotoImporter {
    /// The photos of a JSON file: an array of `{"title", "url"?, "price": "2.50"}` (or integer
    /// `"priceCents"`) objects. Checked by `CatalogService.importPhotos`, like every entry path.
    static func readJSON(path: String) throws -> [NewPhoto] {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw PhotosError.badRequest("\(path): cannot read")
        }
        let parsed: Any
        do {
            parsed = try JSONSerialization.jsonObject(with: data)
        } catch {
            throw PhotosError.badRequest("\(path): malformed JSON")
        }
        guard let array = parsed as? [Any] else {
            throw PhotosError.badRequest("\(path): expected a JSON array of photos")
        }
        return try array.enumerated().map { index, element in
            let place = "\(path): element \(index + 1)"
            guard let object = element as? [String: Any] else { throw PhotosError.badRequest("\(place): expected an object") }
            guard let title = object["title"] as? String else { throw PhotosError.badRequest("\(place): \"title\" must be a string") }
            let url: String?
            switch object["url"] {
            case nil, is NSNull: url = nil
            case let text as String: url = text
            default: throw PhotosError.badRequest("\(place): \"url\" must be a string")
            }
            do {
                let cents: Int
                if let price = object["price"] as? String {
                    cents = try Price.cents(from: price)
                } else if object["price"] != nil {
                    throw PhotosError.badRequest("\"price\" must be a string like \"2.50\" (or give integer \"priceCents\")")
                } else if !(object["priceCents"] is Bool), let value = object["priceCents"] as? Int {
                    cents = value
                } else {
                    throw PhotosError.badRequest("needs \"price\" (a string like \"2.50\") or integer \"priceCents\"")
                }
                return NewPhoto(title: title, url: url, priceCents: cents)
            } catch let error as PhotosError {
                throw PhotosError.badRequest("\(place): \(error.message)")
            }
        }
    }
}
