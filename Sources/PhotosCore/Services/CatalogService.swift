import AuditTrail
import DatabaseAccess
import Foundation
import PhotosModel

/// The photo catalogue.
public struct CatalogService: Sendable {
    let database: any DatabaseStore

    /// Creates the service.
    public init(database: any DatabaseStore) {
        self.database = database
    }

    /// Adds one photo (audited as `photo.added` with count 1).
    public func add(_ photo: NewPhoto, actor: AuditActor) async throws -> Photo {
        let photos = try await importPhotos([photo], actor: actor)
        return photos[0]
    }

    /// Adds photos all-or-nothing in one transaction, audited as one `photo.added` row with the
    /// count. `progress` is called every 10,000 rows with the number inserted so far.
    public func importPhotos(_ photos: [NewPhoto], actor: AuditActor, progress: (@Sendable (Int) -> Void)? = nil) async throws -> [Photo] {
        let checked = try photos.enumerated().map { index, photo in
            do {
                return try PhotoRules.checked(photo)
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
                let id = try await connection.queryOne(
                    "INSERT INTO photos (title, url, price_cents, created_at) VALUES (\(photo.title), \(url), \(photo.priceCents), \(at)) RETURNING id")?.int64("id") ?? 0
                added.append(Photo(id: id, title: photo.title, url: url, priceCents: photo.priceCents))
                if added.count % 10_000 == 0 { progress?(added.count) }
            }
            var detail: JSONObject = ["count": .int(Int64(added.count))]
            if added.count == 1 { detail["photoId"] = .int(added[0].id) }
            try await AuditChains.append([AuditEntry(actor: actor, step: .photoAdded, detail: detail)], to: actor.outOfSessionID, at: at, on: connection)
            return added
        }
    }

    /// Photos by id, `limit` at most, after `afterID` (keyset pagination).
    public func list(limit: Int = 50, afterID: Int64 = 0) async throws -> [Photo] {
        try await database.read { connection in
            try await connection.query("SELECT id, title, url, price_cents FROM photos WHERE id > \(afterID) ORDER BY id LIMIT \(limit)")
                .map(Self.photo)
        }
    }

    /// One photo, or nil.
    public func photo(id: Int64) async throws -> Photo? {
        try await database.read { connection in try await Self.photo(id: id, on: connection) }
    }

    /// One photo inside a transaction, or nil.
    public static func photo(id: Int64, on connection: any DatabaseConnection) async throws -> Photo? {
        try await connection.queryOne("SELECT id, title, url, price_cents FROM photos WHERE id = \(id)").map(photo)
    }

    static func photo(_ row: Row) throws -> Photo {
        Photo(id: try row.int64("id"), title: try row.string("title"), url: try row.string("url"), priceCents: try row.int("price_cents"))
    }
}
