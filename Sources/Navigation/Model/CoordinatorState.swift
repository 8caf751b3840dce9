/// The kinds of coordinator (DESIGN §2).
public enum CoordinatorKind: String, Codable, Sendable {
    case app, buy, terms
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

    /// Every coordinator in this subtree, depth first, with its path (`app/buy/terms`).
    func flattened(prefix: String = "") -> [(path: String, state: CoordinatorState)] {
        let path = prefix.isEmpty ? kind.rawValue : prefix + "/" + kind.rawValue
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

    /// An empty session before `session.start`.
    public static let empty = SessionState(user: nil, tokenId: nil, stacks: [], coordinators: nil, top: nil)

    /// The top screen of the top stack.
    public var topScreen: ScreenState? { stacks.last?.screens.last }

    /// Recomputes `top`.
    public mutating func refreshTop() {
        top = topScreen.map { TopScreen(screen: $0.screen, actions: availableActions()) }
    }

    /// What the top screen accepts now (DESIGN §2 table).
    public func availableActions() -> [ActionName] {
        guard let stack = stacks.last, let screen = stack.screens.last else { return [] }
        var actions: [ActionName]
        switch screen.screen {
        case .photos: actions = [.selectPhoto, .buyPhoto, user == nil ? .signIn : .signOut]
        case .photo: actions = [.buy]
        case .signIn: actions = [.submit, .cancel]
        case .buy: actions = [.buy, .cancel, .showTerms]
        case .terms: actions = [.cancel]
        }
        if stack.screens.count > 1 { actions.append(.back) }
        if stack.presentation == .modal && stack.screens.count == 1 { actions.append(.dismiss) }
        return actions
    }
}
