/// A registered user (never carries the password hash out of the service layer).
public struct User: Sendable, Equatable, Codable {
    /// Row id.
    public let id: Int64
    /// Unique login name.
    public let username: String
    /// When the user was created.
    public let createdAt: String

    /// Creates a user value.
    public init(id: Int64, username: String, createdAt: String) {
        self.id = id
        self.username = username
        self.createdAt = createdAt
    }
}

/// A photo in the catalogue.
public struct Photo: Sendable, Equatable, Codable {
    /// Row id.
    public let id: Int64
    /// Title shown in the list.
    public let title: String
    /// Where the image is.
    public let url: String
    /// Price in integer cents.
    public let priceCents: Int

    /// Creates a photo value.
    public init(id: Int64, title: String, url: String, priceCents: Int) {
        self.id = id
        self.title = title
        self.url = url
        self.priceCents = priceCents
    }
}

/// A photo to add to the catalogue.
public struct NewPhoto: Sendable, Equatable {
    /// Title (1–200 characters).
    public var title: String
    /// Image URL; derived from the title when nil.
    public var url: String?
    /// Price in integer cents.
    public var priceCents: Int

    /// Creates a new-photo value.
    public init(title: String, url: String? = nil, priceCents: Int) {
        self.title = title
        self.url = url
        self.priceCents = priceCents
    }
}

/// One completed purchase.
public struct Purchase: Sendable, Equatable, Codable {
    /// Row id.
    public let id: Int64
    /// Buyer.
    public let userID: Int64
    /// Photo bought.
    public let photoID: Int64
    /// Price paid, in cents.
    public let priceCents: Int
    /// When.
    public let purchasedAt: String

    /// Creates a purchase value.
    public init(id: Int64, userID: Int64, photoID: Int64, priceCents: Int, purchasedAt: String) {
        self.id = id
        self.userID = userID
        self.photoID = photoID
        self.priceCents = priceCents
        self.purchasedAt = purchasedAt
    }
}

/// What a buy did.
public enum PurchaseOutcome: Sendable, Equatable {
    /// A new purchase row.
    case purchased(Purchase)
    /// The user already owned the photo; nothing was written.
    case alreadyOwned(Purchase)

    /// The purchase row (new or existing).
    public var purchase: Purchase {
        switch self {
        case .purchased(let purchase), .alreadyOwned(let purchase): purchase
        }
    }
}

extension NewPhoto {
    /// The demo catalogue (`photosd --seed-demo`, and `FakePhotosServer`'s default): photos 1–5.
    public static let demoCatalogue: [NewPhoto] = [
        NewPhoto(title: "Golden Gate at dusk", priceCents: 250),
        NewPhoto(title: "Harbour in the rain", priceCents: 199),
        NewPhoto(title: "Snow, at night", priceCents: 300),
        NewPhoto(title: "Desert road", priceCents: 150),
        NewPhoto(title: "Northern lights", priceCents: 499),
    ]
}
