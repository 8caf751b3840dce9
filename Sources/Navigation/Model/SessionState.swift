import PhotosModel

/// The signed-in user of a session.
public struct SessionUser: Decodable, Sendable, Equatable {
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
public struct SessionState: Decodable, Sendable, Equatable {
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

    private enum CodingKeys: String, CodingKey {
        case user, tokenId, stacks, coordinators, top, layout, tabs, experiments
    }

    /// Creates a state.
    public init(
        user: SessionUser?, tokenId: Int64?, stacks: [StackState], coordinators: CoordinatorState?, top: TopScreen?, layout: SessionLayout? = nil,
        tabs: TabsState? = nil, experiments: [ExperimentExposure]? = nil
    ) {
        self.user = user
        self.tokenId = tokenId
        self.stacks = stacks
        self.coordinators = coordinators
        self.top = top
        self.layout = layout
        self.tabs = tabs
        self.experiments = experiments
    }

    /// A state as stored by any version: its coordinator tree made whole once, here, with
    /// what a tree written before every coordinator kept where it began leaves out read off
    /// the stacks (`CoordinatorState(stored:stacks:)`).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        user = try container.decodeIfPresent(SessionUser.self, forKey: .user)
        tokenId = try container.decodeIfPresent(Int64.self, forKey: .tokenId)
        stacks = try container.decode([StackState].self, forKey: .stacks)
        top = try container.decodeIfPresent(TopScreen.self, forKey: .top)
        layout = try container.decodeIfPresent(SessionLayout.self, forKey: .layout)
        tabs = try container.decodeIfPresent(TabsState.self, forKey: .tabs)
        experiments = try container.decodeIfPresent([ExperimentExposure].self, forKey: .experiments)
        coordinators = try container.decodeIfPresent(StoredCoordinator.self, forKey: .coordinators).map {
            try CoordinatorState(stored: $0, stacks: .init(shown: stacks, parked: tabs?.parked ?? []))
        }
    }

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
