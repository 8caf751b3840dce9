import PhotosModel

/// The kinds of coordinator (docs/design.md, "The coordinator model").
public enum CoordinatorKind: String, Codable, Sendable {
    case app, tab, buy, terms
}

/// How a buy coordinator shows its flow.
public enum FlowPresentation: String, Codable, Sendable {
    /// Horizontal: pushes onto the current stack, pops back to its initial screen when done.
    case push
    /// Vertical: presents a new modal stack, dismisses it when done.
    case modal
}

/// Why a coordinator finished (`coordinator.finish` detail `reason`).
public enum FinishReason: String, Codable, Sendable {
    case completed, cancelled, back, dismissed
    /// Unwound by a deep link.
    case link
}

/// A live coordinator as persisted: enough to rebuild the object tree.
public struct CoordinatorState: Codable, Sendable, Equatable {
    /// Kind.
    public var kind: CoordinatorKind
    /// Id: `app`, or `<kind>-<seq of its coordinator.start step>`.
    public var id: String
    /// For `buy`: push or modal.
    public var presentation: FlowPresentation?
    /// For `buy`: the photo being bought.
    public var photoId: Int64?
    /// The stack it works on (push) or presented (modal, terms).
    public var stackIndex: Int?
    /// For push: how many screens that stack had when it started (its initial screen is the top of those).
    public var initialDepth: Int?
    /// Live children, oldest first.
    public var children: [CoordinatorState]
    /// For `tab`: which tab it runs.
    public var tab: TabName?
    /// For `buy`: the values it took, as it started, of the variation points an experiment
    /// governed then (point → value, e.g. `terms.required: yes`), kept for the flow's life
    /// whatever the experiment does meanwhile. Nil when no experiment governed any.
    public var variants: [String: String]?
    /// For `buy` under `terms.required: yes`: the terms were shown in this flow, so buy is offered.
    public var termsSeen: Bool?

    /// Creates a coordinator state.
    public init(
        kind: CoordinatorKind, id: String, presentation: FlowPresentation? = nil, photoId: Int64? = nil,
        stackIndex: Int? = nil, initialDepth: Int? = nil, children: [CoordinatorState] = [], tab: TabName? = nil
    ) {
        self.kind = kind
        self.id = id
        self.presentation = presentation
        self.photoId = photoId
        self.stackIndex = stackIndex
        self.initialDepth = initialDepth
        self.children = children
        self.tab = tab
    }

    /// The value this flow took of the point of `Value` (the behaviour with no experiment when
    /// none governed it).
    public func value<Value: VariationValue>(_: Value.Type) -> Value {
        Value(named: variants?[Value.point.rawValue])
    }

    /// The coordinator with this id in this subtree.
    func node(id: String) -> CoordinatorState? {
        if self.id == id { return self }
        for child in children { if let found = child.node(id: id) { return found } }
        return nil
    }

    /// Its name in a path: the kind, or for a tab coordinator the tab (`app/photos/buy`).
    var pathComponent: String { tab?.rawValue ?? kind.rawValue }

    /// Every coordinator in this subtree, depth first, with its path (`app/buy/terms`).
    func flattened(prefix: String = "") -> [(path: String, state: CoordinatorState)] {
        let path = prefix.isEmpty ? pathComponent : prefix + "/" + pathComponent
        return [(path, self)] + children.flatMap { $0.flattened(prefix: path) }
    }
}

/// The signed-in user of a session.
public struct SessionUser: Codable, Sendable, Equatable {
    /// User id.
    public var id: Int64
    /// Username.
    public var username: String

    /// Creates a user reference.
    public init(id: Int64, username: String) {
        self.id = id
        self.username = username
    }
}

/// Everything about a session that survives a restart: plain JSON in `sessions.state`.
public struct SessionState: Codable, Sendable, Equatable {
    /// The signed-in user, if any.
    public var user: SessionUser?
    /// The token the session signed in with (row id in `tokens`, never the token).
    public var tokenId: Int64?
    /// The stacks, bottom (root) first.
    public var stacks: [StackState]
    /// The coordinator tree.
    public var coordinators: CoordinatorState?
    /// The top screen and its actions (derived; stored so SQL readers can see it).
    public var top: TopScreen?
    /// `tabs` for a tab-bar session; nil for the stack layout (as every session before tabs).
    public var layout: SessionLayout?
    /// Tabs layout: the selected tab and the other tabs' stacks.
    public var tabs: TabsState?
    /// The experiments its purchase flows were exposed to, and the variant each took, in the
    /// order of exposure (each pair once). Nil until the first.
    public var experiments: [ExperimentExposure]?

    /// An empty session before `session.start`.
    public static let empty = SessionState(user: nil, tokenId: nil, stacks: [], coordinators: nil, top: nil)

    /// The top screen of the top stack.
    public var topScreen: ScreenState? { stacks.last?.screens.last }

    /// Recomputes `top`.
    public mutating func refreshTop() {
        top = topScreen.map { TopScreen(screen: $0.screen, actions: availableActions()) }
    }

    /// What the top screen accepts now (docs/design.md, "The coordinator model" table).
    public func availableActions() -> [ActionName] {
        guard let stack = stacks.last, let screen = stack.screens.last else { return [] }
        var actions: [ActionName]
        switch screen.screen {
        case .photos: actions = [.selectPhoto, .buyPhoto, user == nil ? .signIn : .signOut]
        case .purchases: actions = user == nil ? [.selectPhoto, .signIn] : [.selectPhoto]
        case .photo: actions = [.buy]
        case .signIn: actions = [.submit, .cancel]
        case .buy:
            // Under terms.required: yes, buy is offered once the terms were shown in this flow.
            let flow = coordinators?.node(id: screen.owner)
            let termsFirst = flow.map { $0.value(TermsRequired.self) == .yes && $0.termsSeen != true } ?? false
            actions = termsFirst ? [.cancel, .showTerms] : [.buy, .cancel, .showTerms]
        case .terms: actions = [.cancel]
        }
        if stack.screens.count > 1 { actions.append(.back) }
        if stack.presentation == .modal && stack.screens.count == 1 { actions.append(.dismiss) }
        // The tab bar is reachable from every screen of the selected tab, not under a modal.
        if tabs != nil && stacks.count == 1 { actions.append(.selectTab) }
        return actions
    }
}
