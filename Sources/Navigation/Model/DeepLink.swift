import PhotosModel

/// A place in the app named by a path: `/photos`, `/photos/{id}`, `/photos/{id}/buy`, and on a
/// tabs session `/purchases`.
public enum DeepLink: Sendable, Equatable, CustomStringConvertible {
    case photos
    case photo(Int64)
    case buy(Int64)
    case purchases

    /// Parses `text`, exactly one of the forms above (no query, no fragment, no trailing slash,
    /// a photo id of digits without a leading zero). Throws `bad_request` for anything else.
    public init(parsing text: String) throws {
        func malformed() -> PhotosError {
            PhotosError.badRequest("link \"\(text.prefix(80))\" is not one of /photos, /photos/{id}, /photos/{id}/buy, /purchases")
        }
        guard text.utf8.count <= 200, text.hasPrefix("/") else { throw malformed() }
        let parts = text.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
        func photoID(_ part: Substring) throws -> Int64 {
            guard (1...18).contains(part.utf8.count), part.utf8.allSatisfy({ (0x30...0x39).contains($0) }), part.first != "0",
                  let id = Int64(part) else { throw malformed() }
            return id
        }
        switch parts.count {
        case 1 where parts[0] == "photos": self = .photos
        case 1 where parts[0] == "purchases": self = .purchases
        case 2 where parts[0] == "photos": self = .photo(try photoID(parts[1]))
        case 3 where parts[0] == "photos" && parts[2] == "buy": self = .buy(try photoID(parts[1]))
        default: throw malformed()
        }
    }

    /// The tab the link lives on (tabs layout).
    public var tab: TabName { self == .purchases ? .purchases : .photos }

    /// The photo the link names, if any.
    public var photoID: Int64? {
        switch self {
        case .photo(let id), .buy(let id): id
        case .photos, .purchases: nil
        }
    }

    /// Throws `bad_request` when the session's layout does not have this place.
    public func check(for layout: SessionLayout) throws {
        if self == .purchases && layout != .tabs {
            throw PhotosError.badRequest("link /purchases needs a session with the tabs layout")
        }
    }

    public var description: String {
        switch self {
        case .photos: "/photos"
        case .photo(let id): "/photos/\(id)"
        case .buy(let id): "/photos/\(id)/buy"
        case .purchases: "/purchases"
        }
    }
}
