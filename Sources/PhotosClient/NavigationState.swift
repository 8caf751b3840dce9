/// One navigation stack the user sees: the root stack (or the selected tab's), or a modal stack
/// presented over it.
public struct PresentedStack: Hashable, Sendable, CustomStringConvertible {
    /// How the stack is shown.
    public enum Presentation: String, Hashable, Sendable {
        /// The root stack of a stack session.
        case root
        /// The selected tab's stack of a tabs session.
        case tab
        /// A stack presented modally over the ones below it.
        case modal
    }

    /// How the stack is shown.
    public var presentation: Presentation
    /// The tab, for a tab's stack.
    public var tab: Tab?
    /// The screens, bottom (root) first.
    public var screens: [Screen]

    /// Creates a stack.
    public init(presentation: Presentation, tab: Tab? = nil, screens: [Screen]) {
        self.presentation = presentation
        self.tab = tab
        self.screens = screens
    }

    /// `modal [buy 3, signIn]`, `tab purchases [purchases (2 photos)]`.
    public var description: String {
        let kind = tab.map { "tab \($0.rawValue)" } ?? presentation.rawValue
        return "\(kind) [\(screens.map(\.description).joined(separator: ", "))]"
    }
}

/// What an app shows: its stacks, bottom first (the server's `navigation`), and in a tabs
/// session every tab's stack as it was left.
///
/// It is the plain model `NavigationCommand`s act on: `apply(_:)` is what a
/// `UINavigationController` (or a SwiftUI `NavigationStack` path) does for each command.
public struct NavigationState: Hashable, Sendable, CustomStringConvertible {
    /// The stacks the user sees, bottom first: the root stack (or the selected tab's), then the
    /// modal stacks over it.
    public var stacks: [PresentedStack]
    /// Every tab's stack as the app last showed it (empty for a stack session). The selected
    /// tab's is `stacks[0]`, kept here in step.
    public var tabs: [Tab: [Screen]]

    /// Creates a state.
    public init(stacks: [PresentedStack], tabs: [Tab: [Screen]] = [:]) {
        self.stacks = stacks
        self.tabs = tabs
    }

    /// The state a session's answer describes (a presentation a newer server added is shown
    /// as modal: over the stacks below it).
    public init(_ session: Components.Schemas.Session) {
        stacks = session.navigation.map { stack in
            let presentation = stack.presentation.value1?.rawValue ?? stack.presentation.value2 ?? ""
            return PresentedStack(
                presentation: PresentedStack.Presentation(rawValue: presentation) ?? .modal,
                tab: stack.tab.map(Tab.init), screens: stack.screens.map(Screen.init))
        }
        var tabs: [Tab: [Screen]] = [:]
        for item in session.tabs?.items ?? [] { tabs[Tab(item.tab)] = item.screens.map(Screen.init) }
        self.tabs = tabs
    }

    // The containers, for an app that sets each one in one go (`setViewControllers`, a SwiftUI
    // `NavigationStack`'s path, the tab bar's selection, the sheets) instead of following the
    // commands one by one.

    /// The screens of the root stack (in a tabs session, the selected tab's), bottom first.
    public var root: [Screen] { stacks.first?.screens ?? [] }

    /// The modal stacks over the root, bottom first (each presented over the one before).
    public var modals: [PresentedStack] { Array(stacks.dropFirst()) }

    /// The selected tab (nil in a stack session).
    public var selectedTab: Tab? { stacks.first?.tab }

    /// A tab's stack as it was left (the selected tab's is `root`).
    public func screens(of tab: Tab) -> [Screen] { tabs[tab] ?? [] }

    /// `root [photos, photo 3] · modal [buy 3, signIn]`.
    public var description: String {
        stacks.isEmpty ? "nothing shown" : stacks.map(\.description).joined(separator: " · ")
    }

    /// The screen on top of everything.
    public var top: Screen? { stacks.last?.screens.last }

    /// Applies one command: what an app's navigation does.
    ///
    /// `push`, `pop`, `popToRoot`, `replaceTop` and `update` act on the topmost stack (`update` on
    /// the same screen nearest its top); `present` adds a
    /// modal stack over it and `dismiss` removes it; `selectTab` shows the tab's stack as it was
    /// left (there are no modal stacks then).
    public mutating func apply(_ command: NavigationCommand) {
        switch command {
        case .push(let screen):
            stacks[stacks.count - 1].screens.append(screen)
        case .pop(let count):
            stacks[stacks.count - 1].screens.removeLast(min(count, stacks[stacks.count - 1].screens.count - 1))
        case .popToRoot:
            stacks[stacks.count - 1].screens.removeLast(stacks[stacks.count - 1].screens.count - 1)
        case .replaceTop(let screen):
            stacks[stacks.count - 1].screens[stacks[stacks.count - 1].screens.count - 1] = screen
        case .update(let screen):
            // The same screen nearest the top (the top itself, unless it is another screen).
            let screens = stacks[stacks.count - 1].screens
            let index = screens.lastIndex { $0.isSameScreen(as: screen) } ?? screens.count - 1
            stacks[stacks.count - 1].screens[index] = screen
        case .present(let stack):
            stacks.append(stack)
        case .dismiss:
            if stacks.count > 1 { stacks.removeLast() }
        case .selectTab(let tab):
            stacks = [PresentedStack(presentation: .tab, tab: tab, screens: tabs[tab] ?? [])]
        }
        // The selected tab's stack is remembered as it is shown.
        if let tab = stacks.first?.tab { tabs[tab] = stacks[0].screens }
    }
}
