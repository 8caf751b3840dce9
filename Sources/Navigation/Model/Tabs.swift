import PhotosModel

/// How a session lays out its navigation (`POST /v1/sessions {"layout": …}`).
public enum SessionLayout: String, Codable, Sendable, CaseIterable {
    /// One root stack, with modal stacks over it (the sample app).
    case stack
    /// A tab bar: one coordinator and one root stack per tab.
    case tabs

    /// The layout a request names; `bad_request` naming the layouts for any other.
    public init(parsing text: String) throws {
        guard let layout = SessionLayout(rawValue: text) else {
            throw PhotosError.badRequest("layout must be \(Self.allCases.map(\.rawValue).joined(separator: " or ")), not \"\(text.prefix(40))\"")
        }
        self = layout
    }
}

/// The tabs of the tabs layout, in tab-bar order.
public enum TabName: String, Codable, Sendable, CaseIterable {
    case photos, purchases

    /// The screen at the root of the tab's stack.
    public var rootScreen: ScreenKind {
        switch self {
        case .photos: .photos
        case .purchases: .purchases
        }
    }

    /// The id of the tab's coordinator (`tab-photos`).
    public var coordinatorID: String { "tab-" + rawValue }

    /// The tab a request names; `bad_request` naming the tabs for any other.
    public init(parsing text: String) throws {
        guard let tab = TabName(rawValue: text) else {
            throw PhotosError.badRequest("tab must be \(Self.allCases.map(\.rawValue).joined(separator: " or ")), not \"\(text.prefix(40))\"")
        }
        self = tab
    }
}

/// The tab bar of a tabs-layout session.
///
/// The selected tab's root stack is `SessionState.stacks[0]` (what the user sees, with any modal
/// stacks over it); the other tabs' stacks are parked here, in tab order, exactly as they were
/// left. Modal stacks only ever belong to the selected tab: `selectTab` is not offered under one.
public struct TabsState: Decodable, Sendable, Equatable {
    /// The selected tab.
    public var selected: TabName
    /// The root stacks of the tabs that are not selected, in tab order.
    public var parked: [StackState]

    /// Creates a tab bar.
    public init(selected: TabName, parked: [StackState]) {
        self.selected = selected
        self.parked = parked
    }
}

extension SessionState {
    /// The layout, `stack` when not recorded (every session before tabs).
    public var sessionLayout: SessionLayout { layout ?? .stack }

    /// Every stack of the session: those shown (`stacks`) and the parked tabs' stacks.
    public var allStacks: [StackState] { stacks + (tabs?.parked ?? []) }

    /// Every photo the state names: on a screen of any stack, or in a coordinator's state.
    public var namedPhotoIDs: Set<Int64> {
        var photos = Set<Int64>()
        for stack in allStacks { for screen in stack.screens { if let id = screen.photoId { photos.insert(id) } } }
        for node in coordinators?.flattened() ?? [] { if let id = node.state.flow?.photoId { photos.insert(id) } }
        return photos
    }

    /// The state right after `session.start`: empty, or for tabs one empty stack per tab with
    /// `photos` selected (each tab's coordinator then pushes its root screen).
    static func started(layout: SessionLayout) -> SessionState {
        var state = SessionState.empty
        guard layout == .tabs else { return state }
        state.layout = .tabs
        func stack(_ tab: TabName) -> StackState {
            StackState(presentation: .tab, presenter: tab.coordinatorID, screens: [], tab: tab)
        }
        state.stacks = [stack(.photos)]
        state.tabs = TabsState(selected: .photos, parked: [stack(.purchases)])
        return state
    }

    /// The tab a coordinator belongs to, from its path (`app/purchases/buy` → purchases); nil
    /// in the stack layout and for `app` itself.
    func tab(ofCoordinatorPath path: String) -> TabName? {
        guard tabs != nil else { return nil }
        let components = path.split(separator: "/")
        return components.count >= 2 ? TabName(rawValue: String(components[1])) : nil
    }

    /// Shows `tab`'s stack in place of the selected one, which is parked as it is. Only
    /// without a modal stack. No change if `tab` is already selected.
    mutating func showTab(_ tab: TabName) {
        guard var tabs, tab != tabs.selected, stacks.count == 1,
              let index = tabs.parked.firstIndex(where: { $0.tab == tab }) else { return }
        let shown = tabs.parked.remove(at: index)
        tabs.parked.append(stacks[0])
        tabs.parked.sort { ($0.tab?.order ?? 0) < ($1.tab?.order ?? 0) }
        tabs.selected = tab
        stacks = [shown]
        self.tabs = tabs
    }

    /// Where `enterTab` put things, for `leaveTab`.
    struct TabScope {
        let parkedIndex: Int
        let shown: [StackState]
    }

    /// Puts the parked `tab`'s stack in place of the shown stacks, so that its coordinators see
    /// it as `stacks[0]`, as they always do: used to start a tab that is not selected and to
    /// unwind one (and by the replay, for their steps). Nil — nothing done — when `tab` is nil
    /// or selected. `leaveTab` parks it again with what was done to it.
    mutating func enterTab(_ tab: TabName?) -> TabScope? {
        guard let tab, let tabs, tab != tabs.selected, let index = tabs.parked.firstIndex(where: { $0.tab == tab }) else { return nil }
        let scope = TabScope(parkedIndex: index, shown: stacks)
        stacks = [tabs.parked[index]]
        return scope
    }

    /// Undoes `enterTab`.
    mutating func leaveTab(_ scope: TabScope?) {
        guard let scope else { return }
        if let parked = stacks.first { tabs?.parked[scope.parkedIndex] = parked }
        stacks = scope.shown
    }
}

extension TabName {
    /// Its place in the tab bar.
    var order: Int { TabName.allCases.firstIndex(of: self) ?? 0 }
}
