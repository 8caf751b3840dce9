import PhotosCore

/// A session as the API shows it (DESIGN §4, contract).
public struct SessionView: Codable, Sendable, Equatable {
    /// Unguessable id.
    public var id: String
    /// Counts the accepted changes; `expectVersion` compares against it.
    public var version: Int
    /// The signed-in user, or null.
    public var user: SessionUser?
    /// Stacks, bottom first.
    public var navigation: [StackView]
    /// The top screen and its actions.
    public var top: TopScreen?
    /// The coordinator tree.
    public var coordinators: CoordinatorView?

    enum CodingKeys: String, CodingKey { case id, version, user, navigation, top, coordinators }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(version, forKey: .version)
        try container.encode(user, forKey: .user)  // explicit null when signed out
        try container.encode(navigation, forKey: .navigation)
        try container.encodeIfPresent(top, forKey: .top)
        try container.encodeIfPresent(coordinators, forKey: .coordinators)
    }
}

/// One stack as the API shows it.
public struct StackView: Codable, Sendable, Equatable {
    public var presentation: StackPresentation
    public var screens: [ScreenView]
}

/// One screen as the API shows it: its name and parameters.
public struct ScreenView: Codable, Sendable, Equatable {
    public var screen: ScreenKind
    public var photoId: Int64?
    /// For `photo`: whether the signed-in user owns it.
    public var purchased: Bool?

    /// Creates a screen view.
    public init(screen: ScreenKind, photoId: Int64? = nil, purchased: Bool? = nil) {
        self.screen = screen
        self.photoId = photoId
        self.purchased = purchased
    }
}

/// One coordinator as the API shows it.
public struct CoordinatorView: Codable, Sendable, Equatable {
    public var kind: CoordinatorKind
    public var id: String
    public var presentation: FlowPresentation?
    public var photoId: Int64?
    public var children: [CoordinatorView]

    init(_ state: CoordinatorState) {
        kind = state.kind
        id = state.id
        presentation = state.presentation
        photoId = state.photoId
        children = state.children.map(CoordinatorView.init)
    }
}

extension SessionView {
    /// Renders `state`; `owned` is the set of photo ids the user has bought.
    public init(id: String, version: Int, state: SessionState, owned: Set<Int64>) {
        self.id = id
        self.version = version
        user = state.user
        navigation = state.stacks.map { stack in
            StackView(presentation: stack.presentation, screens: stack.screens.map { screen in
                ScreenView(
                    screen: screen.screen, photoId: screen.photoId,
                    purchased: screen.screen == .photo ? owned.contains(screen.photoId ?? 0) : nil)
            })
        }
        top = state.top
        coordinators = state.coordinators.map(CoordinatorView.init)
    }
}
