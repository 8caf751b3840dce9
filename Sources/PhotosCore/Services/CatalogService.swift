import Foundation
import SQLiteStore

/// The photo catalogue.
public struct CatalogService: Sendable {
    let database: SQLiteDatabase

    /// Creates the service.
    public init(database: SQLiteDatabase) {
        self.database = database
    }

    /// Checks a new photo's fields and fills in the default URL.
    public static func validated(_ photo: NewPhoto) throws -> NewPhoto {
        var photo = photo
        photo.title = photo.title.trimmingCharacters(in: .whitespacesAndNewlines)
        guard (1...200).contains(photo.title.count) else {
            throw PhotosError.badRequest("invalid title: use 1 to 200 characters")
        }
        guard (0...Price.maximumCents).contains(photo.priceCents) else {
            throw PhotosError.badRequest("invalid price: must be between 0 and \(Price.format(cents: Price.maximumCents))")
        }
        if let url = photo.url?.trimmingCharacters(in: .whitespaces), !url.isEmpty {
            guard url.count <= 2_000, let parsed = URL(string: url), parsed.scheme == "https" || parsed.scheme == "http" else {
                throw PhotosError.badRequest("invalid url \"\(url.prefix(60))\": expected an http(s) URL")
            }
            photo.url = url
        } else {
            let slug = photo.title.lowercased().unicodeScalars
                .map { CharacterSet.alphanumerics.contains($0) && $0.isASCII ? String($0) : "-" }
                .joined()
            photo.url = "https://photos.example.com/\(slug.prefix(80)).jpg"
        }
        return photo
    }

    /// Adds one photo (audited as `photo.added` with count 1).
    public func add(_ photo: NewPhoto, actor: Actor) async throws -> Photo {
        let photos = try await importPhotos([photo], actor: actor)
        return photos[0]
    }

    /// Adds photos all-or-nothing in one transaction, audited as one `photo.added` row with the
    /// count. `progress` is called every 10,000 rows with the number inserted so far.
    public func importPhotos(_ photos: [NewPhoto], actor: Actor, progress: (@Sendable (Int) -> Void)? = nil) async throws -> [Photo] {
        let checked = try photos.enumerated().map { index, photo in
            do {
                return try Self.validated(photo)
            } catch let error as PhotosError {
                throw PhotosError.badRequest("photo \(index + 1): \(error.message)")
            }
        }
        guard !checked.isEmpty else { throw PhotosError.badRequest("no photos to add") }
        let at = ISO8601Timestamp.now()
        return try await database.write { connection in
            var added: [Photo] = []
            added.reserveCapacity(checked.count)
            for photo in checked {
                let url = photo.url ?? ""
                try connection.execute(
                    "INSERT INTO photos (title, url, price_cents, created_at) VALUES (?, ?, ?, ?)",
                    photo.title, url, photo.priceCents, at)
                added.append(Photo(id: connection.lastInsertRowID, title: photo.title, url: url, priceCents: photo.priceCents))
                if added.count % 10_000 == 0 { progress?(added.count) }
            }
            var detail: JSONObject = ["count": .int(Int64(added.count))]
            if added.count == 1 { detail["photoId"] = .int(added[0].id) }
            try AuditLog.append([AuditEntry(sessionID: actor.outOfSessionID, actor: actor, step: .photoAdded, detail: detail)], at: at, on: connection)
            return added
        }
    }

    /// Photos by id, `limit` at most, after `afterID` (keyset pagination).
    public func list(limit: Int = 50, afterID: Int64 = 0) async throws -> [Photo] {
        try await database.read { connection in
            try connection.query("SELECT id, title, url, price_cents FROM photos WHERE id > ? ORDER BY id LIMIT ?", afterID, limit)
                .map(Self.photo)
        }
    }

    /// One photo, or nil.
    public func photo(id: Int64) async throws -> Photo? {
        try await database.read { connection in try Self.photo(id: id, on: connection) }
    }

    /// One photo inside a transaction, or nil.
    public static func photo(id: Int64, on connection: Connection) throws -> Photo? {
        try connection.queryOne("SELECT id, title, url, price_cents FROM photos WHERE id = ?", id).map(photo)
    }

    static func photo(_ row: Row) -> Photo {
        Photo(id: row.int64(0), title: row.string(1), url: row.string(2), priceCents: row.int(3))
    }
}
