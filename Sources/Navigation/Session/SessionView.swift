import PhotosModel

/// A session as the API shows it (docs/design.md, "The HTTP API", contract).
public struct SessionView: Decodable, Sendable, Equatable {
    /// Unguessable id.
    public var id: String
    /// Counts the accepted changes; `expectVersion` compares against it.
    public var version: Int
    /// The signed-in user, or null.
    public var user: SessionUser?
    /// `stack` or `tabs`.
    public var layout: SessionLayout
    /// The tab bar (tabs layout), or null.
    public var tabs: TabsView?
    /// Stacks, bottom first: what the user sees (in the tabs layout, the selected tab's stack
    /// and any modal stacks over it).
    public var navigation: [StackView]
    /// The top screen and its actions.
    public var top: TopScreen?
    /// The coordinator tree.
    public var coordinators: CoordinatorView?
    /// The experiments its purchase flows were exposed to and the variant each took, in the
    /// order of exposure (empty when none): what an app tags its own analytics with.
    public var experiments: [ExperimentView] = []

    enum CodingKeys: String, CodingKey { case id, version, user, layout, tabs, navigation, top, coordinators, experiments }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        version = try container.decode(Int.self, forKey: .version)
        user = try container.decodeIfPresent(SessionUser.self, forKey: .user)
        layout = try container.decode(SessionLayout.self, forKey: .layout)
        tabs = try container.decodeIfPresent(TabsView.self, forKey: .tabs)
        navigation = try container.decode([StackView].self, forKey: .navigation)
        top = try container.decodeIfPresent(TopScreen.self, forKey: .top)
        coordinators = try container.decodeIfPresent(CoordinatorView.self, forKey: .coordinators)
        experiments = try container.decodeIfPresent([ExperimentView].self, forKey: .experiments) ?? []
    }
}

/// An experiment a session is exposed to, as the API shows it.
public struct ExperimentView: Decodable, Sendable, Equatable {
    /// The experiment's name.
    public var name: String
    /// The variant the session's flow took.
    public var variant: String

    /// Creates the view of one exposure.
    public init(name: String, variant: String) {
        self.name = name
        self.variant = variant
    }
}

/// One stack as the API shows it.
public struct StackView: Decodable, Sendable, Equatable {
    public var presentation: StackPresentation
    public var screens: [ScreenView]
    /// For a tab's stack: which tab.
    public var tab: TabName?
}

/// The tab bar as the API shows it: the selected tab and every tab's stack.
public struct TabsView: Decodable, Sendable, Equatable {
    public var selected: TabName
    public var items: [TabItemView]
}

/// One tab and its stack's screens, bottom first, exactly as it was left.
public struct TabItemView: Decodable, Sendable, Equatable {
    public var tab: TabName
    public var screens: [ScreenView]
}

/// A photo on the `purchases` screen (the catalogue's photo object; always purchased).
public struct PurchasedPhotoView: Decodable, Sendable, Equatable {
    public var id: Int64
    public var title: String
    public var url: String
    public var priceCents: Int
    public var purchased: Bool
}

/// One screen as the API shows it: its name and parameters.
public struct ScreenView: Decodable, Sendable, Equatable {
    public var screen: ScreenKind
    public var photoId: Int64?
    /// For `photo`: whether the signed-in user owns it.
    public var purchased: Bool?
    /// For `purchases`: the photos the signed-in user bought, newest first.
    public var photos: [PurchasedPhotoView]?

    /// Creates a screen view.
    public init(screen: ScreenKind, photoId: Int64? = nil, purchased: Bool? = nil, photos: [PurchasedPhotoView]? = nil) {
        self.screen = screen
        self.photoId = photoId
        self.purchased = purchased
        self.photos = photos
    }
}

/// One coordinator as the API shows it.
public struct CoordinatorView: Decodable, Sendable, Equatable {
    public var kind: CoordinatorKind
    public var id: String
    public var presentation: FlowPresentation?
    public var photoId: Int64?
    public var children: [CoordinatorView]

    init(_ state: CoordinatorState) {
        kind = state.kind
        id = state.id
        presentation = state.flow?.presentation
        photoId = state.flow?.photoId
        children = state.children.map(CoordinatorView.init)
    }
}

extension SessionView {
    /// Renders `state`; `owned` is the set of photo ids the user has bought, `purchases` the
    /// photos they bought, newest first (shown on `purchases` screens; nil where unknown, as for
    /// a state rebuilt from the trail).
    public init(id: String, version: Int, state: SessionState, owned: Set<Int64>, purchases: [Photo]? = nil) {
        self.id = id
        self.version = version
        user = state.user
        layout = state.sessionLayout
        let purchased = purchases?.map { PurchasedPhotoView(id: $0.id, title: $0.title, url: $0.url, priceCents: $0.priceCents, purchased: true) }
        func screens(_ stack: StackState) -> [ScreenView] {
            stack.screens.map { screen in
                ScreenView(
                    screen: screen.screen, photoId: screen.photoId,
                    // On buy too: a flow that began signed out may reach buy for a photo the
                    // user turns out to own; the screen says so (and `buy` charges nothing).
                    purchased: screen.screen == .photo || screen.screen == .buy ? owned.contains(screen.photoId ?? 0) : nil,
                    photos: screen.screen == .purchases ? purchased : nil)
            }
        }
        navigation = state.stacks.map { StackView(presentation: $0.presentation, screens: screens($0), tab: $0.tab) }
        tabs = state.tabs.map { tabs in
            let stacks = ([state.stacks.first].compactMap { $0 } + tabs.parked).sorted { ($0.tab?.order ?? 0) < ($1.tab?.order ?? 0) }
            return TabsView(selected: tabs.selected, items: stacks.map { TabItemView(tab: $0.tab ?? .photos, screens: screens($0)) })
        }
        top = state.top
        coordinators = state.coordinators.map(CoordinatorView.init)
        experiments = (state.experiments ?? []).map { ExperimentView(name: $0.experiment, variant: $0.variant) }
    }
}
