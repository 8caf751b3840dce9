/// The screens of the app (docs/design.md, "The coordinator model", contract).
public enum ScreenKind: String, Codable, Sendable, CaseIterable {
    case photos, photo, signIn, buy, terms
    /// The root of the purchases tab: the signed-in user's purchased photos, newest first.
    case purchases
}

/// One screen on a navigation stack.
///
/// `owner` is the coordinator that installed the screen's handlers: the stand-in for the
/// sample's `vc.didBuyPhoto = { [weak self] … }`. The screen itself never looks at it; the
/// session coordinator uses it to deliver the screen's events.
public struct ScreenState: Decodable, Sendable, Equatable {
    /// Which screen.
    public var screen: ScreenKind
    /// The photo, for `photo` and `buy`.
    public var photoId: Int64?
    /// Id of the coordinator whose handlers receive this screen's events.
    public var owner: String

    /// Creates a screen.
    public init(_ screen: ScreenKind, photoId: Int64? = nil, owner: String) {
        self.screen = screen
        self.photoId = photoId
        self.owner = owner
    }
}

/// How a stack was shown: the root navigation stack, a tab's root stack (tabs layout), or
/// presented modally over it.
public enum StackPresentation: String, Codable, Sendable {
    case root, modal, tab
}

/// One navigation stack (a navigation controller).
public struct StackState: Decodable, Sendable, Equatable {
    /// Root or modal.
    public var presentation: StackPresentation
    /// Id of the coordinator that presented it (`app` for the root stack).
    public var presenter: String
    /// Bottom first.
    public var screens: [ScreenState]
    /// For a tab's root stack: which tab.
    public var tab: TabName?

    /// Creates a stack.
    public init(presentation: StackPresentation, presenter: String, screens: [ScreenState], tab: TabName? = nil) {
        self.presentation = presentation
        self.presenter = presenter
        self.screens = screens
        self.tab = tab
    }
}

/// The actions a client can send (docs/design.md, "The coordinator model", contract).
public enum ActionName: String, Codable, Sendable, CaseIterable {
    case selectPhoto, buyPhoto, signIn, signOut, buy, back, submit, cancel, showTerms, dismiss
    /// Tabs layout: show a tab (`tab`), or pop the selected one to its root.
    case selectTab
    /// Go to a deep link (`link`): accepted on every screen, listed in no screen's actions.
    case openLink
}

/// The top screen and what it accepts.
public struct TopScreen: Decodable, Sendable, Equatable {
    /// The screen on top of the top stack.
    public var screen: ScreenKind
    /// The actions it accepts, in a fixed order.
    public var actions: [ActionName]
}
