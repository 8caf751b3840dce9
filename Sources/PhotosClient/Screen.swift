import OpenAPIRuntime

/// A screen as the server describes it (`{"screen": "photo", "photoId": 3, "purchased": false}`).
///
/// Two screens are the same screen (`isSameScreen`) when their name and photo are: a photo
/// that became owned is the same screen with new values (`NavigationCommand.update`).
public struct Screen: Hashable, Sendable, CustomStringConvertible {
    /// Which screen (`unknown` for one a newer server added: show a fallback).
    public var name: ScreenName
    /// On `photo`, `buy`: the photo.
    public var photoId: Int?
    /// On `photo`: whether the signed-in user owns it.
    public var purchased: Bool?
    /// On `purchases`: the signed-in user's photos, newest first.
    public var photos: [Photo]?
    /// The fields a newer server gave the screen that this client does not know (a screen it
    /// does not know, above all: what its fallback can show), as JSON values; empty otherwise.
    public var otherFields: OpenAPIObjectContainer

    /// Creates a screen.
    public init(_ name: ScreenName, photoId: Int? = nil, purchased: Bool? = nil, photos: [Photo]? = nil, otherFields: OpenAPIObjectContainer = .init()) {
        self.name = name
        self.photoId = photoId
        self.purchased = purchased
        self.photos = photos
        self.otherFields = otherFields
    }

    /// The screen a decoded answer describes (for an app that uses the generated `Client` too).
    public init(_ generated: Components.Schemas.Screen) {
        self.init(
            ScreenName(generated.screen), photoId: generated.photoId, purchased: generated.purchased, photos: generated.photos,
            otherFields: generated.additionalProperties)
    }

    /// Whether `other` is this screen, perhaps with new values (same name, same photo).
    public func isSameScreen(as other: Screen) -> Bool { name == other.name && photoId == other.photoId }

    /// `photos`, `photo 3`, `photo 3 (owned)`, `purchases (2 photos)`, `unknown(share) 3`.
    public var description: String {
        var text = name.description
        if let photoId { text += " \(photoId)" }
        if purchased == true { text += " (owned)" }
        if let photos { text += " (\(photos.count) photo\(photos.count == 1 ? "" : "s"))" }
        return text
    }
}

/// A photo of the catalogue.
public typealias Photo = Components.Schemas.Photo
/// A signed-in user.
public typealias User = Components.Schemas.User
