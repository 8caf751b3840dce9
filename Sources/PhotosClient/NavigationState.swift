/// A screen as the server describes it (`{"screen": "photo", "photoId": 3, "purchased": false}`).
public typealias Screen = Components.Schemas.Screen
/// A tab of a tabs session.
public typealias Tab = Components.Schemas.TabName

/// One navigation stack the user sees: the root stack (or the selected tab's), or a modal stack
/// presented over it.
public struct PresentedStack: Hashable, Sendable {
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
}

/// What an app shows: its stacks, bottom first (the server's `navigation`), and in a tabs
/// session every tab's stack as it was left.
///
/// It is the plain model `NavigationCommand`s act on: `apply(_:)` is what a
/// `UINavigationController` (or a SwiftUI `NavigationStack` path) does for each command.
public struct NavigationState: Hashable, Sendable {
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

    /// The state a session's answer describes.
    public init(_ session: Components.Schemas.Session) {
        stacks = session.navigation.map { stack in
            PresentedStack(
                presentation: PresentedStack.Presentation(rawValue: stack.presentation.rawValue) ?? .modal,
                tab: stack.tab, screens: stack.screens)
        }
        var tabs: [Tab: [Screen]] = [:]
        for item in session.tabs?.items ?? [] { tabs[item.tab] = item.screens }
        self.tabs = tabs
    }

    /// The selected tab (nil in a stack session).
    public var selectedTab: Tab? { stacks.first?.tab }

    /// The screen on top of everything.
    public var top: Screen? { stacks.last?.screens.last }

    /// Applies one command: what an app's navigation does.
    ///
    /// `push`, `pop`, `popToRoot` and `replaceTop` act on the topmost stack; `present` adds a
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
