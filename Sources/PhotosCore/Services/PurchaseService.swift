import AuditTrail
import DatabaseAccess
import Foundation
import PhotosModel

/// Purchases: what the sample kept in `UserDefaults.buy(photo:)`.
///
/// At most one row per user and photo (a UNIQUE constraint, so concurrent buys cannot double);
/// a second buy is `alreadyOwned` and writes nothing.
public struct PurchaseService: Sendable {
    let database: any DatabaseStore
    /// The clock purchases are stamped with (the services' one clock; tests move it).
    let now: @Sendable () -> Date

    /// Creates the service.
    public init(database: any DatabaseStore, now: @escaping @Sendable () -> Date = Date.init) {
        self.database = database
        self.now = now
    }

    /// Buys `photoID` for the user named `username` outside any session (`photos-admin purchase`).
    public func buy(username: String, photoID: Int64, actor: AuditActor) async throws -> PurchaseOutcome {
        let at = ISO8601Timestamp.string(from: now())
        return try await database.write { connection in
            guard let user = try await AuthService.user(named: username, on: connection) else {
                throw PhotosError.notFound("no user named \(username)")
            }
            let outcome = try await Self.buy(userID: user.id, photoID: photoID, sessionID: nil, at: at, on: connection)
            if case .purchased(let purchase) = outcome {
                try await AuditChains.append(
                    [AuditEntry(actor: actor, userID: user.id,
                                step: .purchaseCompleted, detail: ["photoId": .int(photoID), "priceCents": .int(Int64(purchase.priceCents))])],
                    to: actor.outOfSessionID, at: purchase.purchasedAt, on: connection)
            }
            return outcome
        }
    }

    /// Records a purchase inside the caller's transaction (the caller audits it).
    /// Throws `not_found` for an unknown photo or user.
    public static func buy(userID: Int64, photoID: Int64, sessionID: String?, at: String, on connection: any DatabaseConnection) async throws -> PurchaseOutcome {
        guard let photo = try await CatalogService.photo(id: photoID, on: connection) else {
            throw PhotosError.notFound("no photo with id \(photoID)")
        }
        guard try await connection.queryOne("SELECT 1 FROM users WHERE id = \(userID)") != nil else {
            throw PhotosError.notFound("no user with id \(userID)")
        }
        let inserted = try await connection.execute(
            """
            INSERT INTO purchases (user_id, photo_id, price_cents, purchased_at, session_id) VALUES (\(userID), \(photoID), \(photo.priceCents), \(at), \(sessionID))
            ON CONFLICT (user_id, photo_id) DO NOTHING
            """)
        guard let existing = try await purchase(userID: userID, photoID: photoID, on: connection) else {
            throw PhotosError.notFound("purchase vanished")
        }
        return inserted == 1 ? .purchased(existing) : .alreadyOwned(existing)
    }

    /// The user's purchase of a photo, if any.
    public static func purchase(userID: Int64, photoID: Int64, on connection: any DatabaseConnection) async throws -> Purchase? {
        try await connection.queryOne(
            "SELECT id, user_id, photo_id, price_cents, purchased_at FROM purchases WHERE user_id = \(userID) AND photo_id = \(photoID)")
            .map(purchase)
    }

    /// The photos a user bought, newest purchase first (the `purchases` screen).
    public static func purchasedPhotos(userID: Int64, on connection: any DatabaseConnection) async throws -> [Photo] {
        try await connection.query(
            """
            SELECT p.id, p.title, p.url, p.price_cents FROM purchases b JOIN photos p ON p.id = b.photo_id
            WHERE b.user_id = \(userID) ORDER BY b.id DESC
            """
        ).map { Photo(id: try $0.int64("id"), title: try $0.string("title"), url: try $0.string("url"), priceCents: try $0.int("price_cents")) }
    }

    /// A user's purchases, oldest first.
    public func purchases(userID: Int64) async throws -> [Purchase] {
        try await database.read { connection in
            try await connection.query("SELECT id, user_id, photo_id, price_cents, purchased_at FROM purchases WHERE user_id = \(userID) ORDER BY id")
                .map(Self.purchase)
        }
    }

    static func purchase(_ row: Row) throws -> Purchase {
        Purchase(
            id: try row.int64("id"), userID: try row.int64("user_id"), photoID: try row.int64("photo_id"), priceCents: try row.int("price_cents"),
            purchasedAt: try row.string("purchased_at"))
    }
}
