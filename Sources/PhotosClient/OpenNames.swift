/// A value of one of the server's open sets (screens, actions, outcomes): one of the cases this
/// client knows, or `unknown` with the name a newer server sent. Decoding never fails on a new
/// name; an app shows a fallback for an unknown screen and is never offered an unknown action.
public protocol OpenName: Hashable, Sendable, CustomStringConvertible {
    /// The names this client knows, as cases.
    static var known: [Self] { get }
    /// A name this client does not know.
    static func unknown(_ name: String) -> Self
    /// The name on the wire.
    var rawValue: String { get }
}

extension OpenName {
    /// The case for `rawValue`: a known one, else `unknown(rawValue)`.
    public init(rawValue: String) {
        self = Self.known.first { $0.rawValue == rawValue } ?? .unknown(rawValue)
    }

    /// Whether this client knows the name.
    public var isKnown: Bool { Self.known.contains(self) }

    public var description: String { isKnown ? rawValue : "unknown(\(rawValue))" }
}

/// A screen's name (`photos`, `photo`, `signIn`, `buy`, `terms`, `purchases`; a newer server's:
/// `unknown`).
public enum ScreenName: OpenName {
    case photos, photo, signIn, buy, terms, purchases
    /// A screen a newer server shows: the app shows a fallback of its own.
    case unknown(String)

    public static let known: [ScreenName] = [.photos, .photo, .signIn, .buy, .terms, .purchases]

    public var rawValue: String {
        switch self {
        case .photos: "photos"
        case .photo: "photo"
        case .signIn: "signIn"
        case .buy: "buy"
        case .terms: "terms"
        case .purchases: "purchases"
        case .unknown(let name): name
        }
    }
}

/// An action's name, as the server lists a screen's actions.
public enum ActionName: OpenName {
    case selectPhoto, buyPhoto, signIn, signOut, buy, back, submit, cancel, showTerms, dismiss, selectTab, openLink
    /// An action a newer server offers; `Session.actions` leaves these out.
    case unknown(String)

    public static let known: [ActionName] = [
        .selectPhoto, .buyPhoto, .signIn, .signOut, .buy, .back, .submit, .cancel, .showTerms, .dismiss, .selectTab, .openLink,
    ]

    public var rawValue: String {
        switch self {
        case .selectPhoto: "selectPhoto"
        case .buyPhoto: "buyPhoto"
        case .signIn: "signIn"
        case .signOut: "signOut"
        case .buy: "buy"
        case .back: "back"
        case .submit: "submit"
        case .cancel: "cancel"
        case .showTerms: "showTerms"
        case .dismiss: "dismiss"
        case .selectTab: "selectTab"
        case .openLink: "openLink"
        case .unknown(let name): name
        }
    }
}

/// What an action did.
public enum Outcome: OpenName {
    /// The navigation changed (or stayed) as the action asked.
    case navigated
    case signedIn, signInFailed, signedOut, purchased
    /// `buy` on a photo the user owns already: nothing was charged.
    case alreadyOwned
    /// The server refused what the action asked (e.g. a link to a photo that is gone).
    case rejected
    /// An outcome a newer server reports.
    case unknown(String)

    public static let known: [Outcome] = [.navigated, .signedIn, .signInFailed, .signedOut, .purchased, .alreadyOwned, .rejected]

    public var rawValue: String {
        switch self {
        case .navigated: "navigated"
        case .signedIn: "signedIn"
        case .signInFailed: "signInFailed"
        case .signedOut: "signedOut"
        case .purchased: "purchased"
        case .alreadyOwned: "alreadyOwned"
        case .rejected: "rejected"
        case .unknown(let name): name
        }
    }
}

/// A tab of a tabs session (`photos`, `purchases`; a newer server's: `unknown`).
public enum Tab: OpenName {
    case photos, purchases
    /// A tab a newer server shows: the app shows a fallback of its own for its screens.
    case unknown(String)

    public static let known: [Tab] = [.photos, .purchases]

    public var rawValue: String {
        switch self {
        case .photos: "photos"
        case .purchases: "purchases"
        case .unknown(let name): name
        }
    }
}

/// A session's layout: one stack, or a tab bar (a newer server's: `unknown`; the server
/// refuses to start a session in a layout it does not know).
public enum Layout: OpenName {
    case stack, tabs
    /// A layout a newer server reports.
    case unknown(String)

    public static let known: [Layout] = [.stack, .tabs]

    public var rawValue: String {
        switch self {
        case .stack: "stack"
        case .tabs: "tabs"
        case .unknown(let name): name
        }
    }
}

// The generated open sets (an `anyOf` of the known names and any string) in and out of these.

/// What swift-openapi-generator makes of an open set: the known names as an enum (`value1`)
/// beside the name as a string (`value2`).
protocol GeneratedOpenName {
    associatedtype Known: RawRepresentable<String>
    var value1: Known? { get }
    var value2: String? { get }
    init(value1: Known?, value2: String?)
}

extension Components.Schemas.ScreenName: GeneratedOpenName {}
extension Components.Schemas.ActionName: GeneratedOpenName {}
extension Components.Schemas.Outcome: GeneratedOpenName {}
extension Components.Schemas.TabName: GeneratedOpenName {}
extension Components.Schemas.Layout: GeneratedOpenName {}

extension OpenName {
    /// The name a generated value holds.
    init<Generated: GeneratedOpenName>(_ generated: Generated) {
        self.init(rawValue: generated.value1?.rawValue ?? generated.value2 ?? "")
    }

    /// This name as the generated client sends it.
    func generated<Generated: GeneratedOpenName>() -> Generated {
        Generated(value1: Generated.Known(rawValue: rawValue), value2: rawValue)
    }
}

/// A layout is kept (by a `SessionStore`) as its name.
extension Layout: Codable {
    public init(from decoder: any Decoder) throws { self.init(rawValue: try decoder.singleValueContainer().decode(String.self)) }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
