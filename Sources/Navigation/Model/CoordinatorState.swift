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

/// A live coordinator as persisted: enough to rebuild the object tree. Its id, what its kind
/// carries (`role`), and its live children.
///
/// Stored as the same JSON object as ever (`kind`, `id`, `children` and the kind's own fields:
/// `tab`; `presentation`, `photoId`, `stackIndex`, `initialDepth`, `variants`, `termsSeen`;
/// `stackIndex`), so `sessions.state` written by any earlier version reads as it was.
public struct CoordinatorState: Sendable, Equatable {
    /// Id: `app`, `tab-<tab>`, or `<kind>-<seq of its coordinator.start step>`.
    public var id: String
    /// The kind, with what that kind carries.
    public var role: Role
    /// Live children, oldest first.
    public var children: [CoordinatorState]

    /// A kind of coordinator and what it carries.
    public enum Role: Sendable, Equatable {
        /// The root.
        case app
        /// A tab bar's tab, running that tab's stack.
        case tab(TabName)
        /// A purchase flow.
        case buy(BuyFlow)
        /// The terms sheet, presented as stack `stackIndex` (nil in states written before the
        /// interpreter kept it: the top stack is taken then).
        case terms(stackIndex: Int?)
    }

    /// Creates a coordinator state.
    public init(id: String, role: Role, children: [CoordinatorState] = []) {
        self.id = id
        self.role = role
        self.children = children
    }

    /// The kind.
    public var kind: CoordinatorKind {
        switch role {
        case .app: .app
        case .tab: .tab
        case .buy: .buy
        case .terms: .terms
        }
    }

    /// For a tab coordinator, its tab.
    public var tab: TabName? {
        if case .tab(let tab) = role { tab } else { nil }
    }

    /// For a buy coordinator, its flow (settable: the interpreter marks the terms seen).
    public var flow: BuyFlow? {
        get { if case .buy(let flow) = role { flow } else { nil } }
        set { if let newValue, case .buy = role { role = .buy(newValue) } }
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

/// What a purchase flow carries.
public struct BuyFlow: Sendable, Equatable {
    /// Pushed on the current stack, or presented as a sheet.
    public var presentation: FlowPresentation
    /// The photo being bought.
    public var photoId: Int64
    /// Where it began, for putting the navigation back when it finishes: the stack it works on
    /// (push) or presented (modal). Taken from the stacks by the interpreter at its
    /// `coordinator.start`; nil before.
    public var stackIndex: Int?
    /// For push: how many screens that stack had when it started (its initial screen is the
    /// top of those).
    public var initialDepth: Int?
    /// The values it took, as it started, of the variation points an experiment governed then
    /// (point → value, e.g. `terms.required: yes`), kept for the flow's life whatever the
    /// experiment does meanwhile. Empty when no experiment governed any.
    public var variants: [String: String]
    /// Under `terms.required: yes`: the terms were shown in this flow, so buy is offered.
    public var termsSeen: Bool

    /// A flow about to start.
    public init(
        presentation: FlowPresentation, photoId: Int64, stackIndex: Int? = nil, initialDepth: Int? = nil,
        variants: [String: String] = [:], termsSeen: Bool = false
    ) {
        self.presentation = presentation
        self.photoId = photoId
        self.stackIndex = stackIndex
        self.initialDepth = initialDepth
        self.variants = variants
        self.termsSeen = termsSeen
    }

    /// The value this flow took of the point of `Value` (the behaviour with no experiment when
    /// none governed it).
    public func value<Value: VariationValue>(_: Value.Type) -> Value {
        Value(named: variants[Value.point.rawValue])
    }
}

extension CoordinatorState: Codable {
    private enum CodingKeys: String, CodingKey {
        case children, id, initialDepth, kind, photoId, presentation, stackIndex, tab, termsSeen, variants
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        children = try container.decodeIfPresent([CoordinatorState].self, forKey: .children) ?? []
        switch try container.decode(CoordinatorKind.self, forKey: .kind) {
        case .app: role = .app
        case .tab: role = .tab(try container.decodeIfPresent(TabName.self, forKey: .tab) ?? .photos)
        case .terms: role = .terms(stackIndex: try container.decodeIfPresent(Int.self, forKey: .stackIndex))
        case .buy:
            role = .buy(BuyFlow(
                presentation: try container.decodeIfPresent(FlowPresentation.self, forKey: .presentation) ?? .push,
                photoId: try container.decodeIfPresent(Int64.self, forKey: .photoId) ?? 0,
                stackIndex: try container.decodeIfPresent(Int.self, forKey: .stackIndex),
                initialDepth: try container.decodeIfPresent(Int.self, forKey: .initialDepth),
                variants: try container.decodeIfPresent([String: String].self, forKey: .variants) ?? [:],
                termsSeen: try container.decodeIfPresent(Bool.self, forKey: .termsSeen) ?? false))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(children, forKey: .children)
        try container.encode(id, forKey: .id)
        try container.encode(kind, forKey: .kind)
        switch role {
        case .app: break
        case .tab(let tab): try container.encode(tab, forKey: .tab)
        case .terms(let stackIndex): try container.encodeIfPresent(stackIndex, forKey: .stackIndex)
        case .buy(let flow):
            try container.encodeIfPresent(flow.initialDepth, forKey: .initialDepth)
            try container.encode(flow.photoId, forKey: .photoId)
            try container.encode(flow.presentation, forKey: .presentation)
            try container.encodeIfPresent(flow.stackIndex, forKey: .stackIndex)
            if flow.termsSeen { try container.encode(true, forKey: .termsSeen) }
            if !flow.variants.isEmpty { try container.encode(flow.variants, forKey: .variants) }
        }
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
            let flow = coordinators?.node(id: screen.owner)?.flow
            let termsFirst = flow.map { $0.value(TermsRequired.self) == .yes && !$0.termsSeen } ?? false
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
