/// One operation on an app's navigation, in the coordinator pattern's terms: what a coordinator
/// does to its `UINavigationController` (or a SwiftUI `NavigationStack` path) so that the app
/// shows what the server decided.
///
/// `push`, `pop`, `popToRoot`, `replaceTop` and `update` act on the topmost stack (the one the
/// user sees; `update` on the screen it names there, the top or one below);
/// `present` shows a new modal stack over it and `dismiss` removes the topmost modal stack;
/// `selectTab` shows a tab's stack as it was left. `NavigationState.apply(_:)` is the plain model.
public enum NavigationCommand: Hashable, Sendable, CustomStringConvertible {
    /// Push a screen onto the topmost stack.
    case push(Screen)
    /// Pop this many screens off the topmost stack (its root stays).
    case pop(Int)
    /// Pop the topmost stack to its root screen.
    case popToRoot
    /// Present a new modal stack.
    case present(PresentedStack)
    /// Dismiss the topmost modal stack.
    case dismiss
    /// Show this tab's stack (as it was left).
    case selectTab(Tab)
    /// Replace the topmost stack's top screen by another without a pop (sign-in giving way to
    /// buy, so that back never lands on sign-in again): a new view controller in its place.
    case replaceTop(Screen)
    /// A screen of the topmost stack stays, with new values (a photo now owned, a purchases
    /// list with one more): the same view controller, updated. The screen is the one that is
    /// the same screen (`isSameScreen`: name and photo) nearest the top — the top itself, or,
    /// when sign-in gave way to buy on a photo the user turned out to own, the photo below it.
    case update(Screen)

    /// `push photo 3`, `pop 2`, `present modal [buy 3]`, `update photo 3 (owned)`.
    public var description: String {
        switch self {
        case .push(let screen): "push \(screen)"
        case .pop(let count): "pop \(count)"
        case .popToRoot: "popToRoot"
        case .present(let stack): "present \(stack)"
        case .dismiss: "dismiss"
        case .selectTab(let tab): "selectTab \(tab.rawValue)"
        case .replaceTop(let screen): "replaceTop \(screen)"
        case .update(let screen): "update \(screen)"
        }
    }
}

extension NavigationCommand {
    /// The commands that take an app showing `old` to `new`, in order. Applying them to `old`
    /// with `NavigationState.apply(_:)` gives `new.stacks` exactly.
    ///
    /// The definition:
    /// 1. If the selected tab changes: dismiss every modal stack (top first), `selectTab`, then
    ///    continue from that tab's stack as it was left.
    /// 2. The lowest stack that differs (by its presentation, tab or screens) is found; every
    ///    stack above it is dismissed, top first. If it is a modal stack the new navigation does
    ///    not have at its place, it is dismissed too.
    /// 3. A stack kept at its place is edited: its screens that are the same screens as the new
    ///    ones from the bottom stay (each with new values gets an `update`, as soon as it is on
    ///    top, else once the top is done: never popped and pushed again); of the rest, all but
    ///    one are popped (`popToRoot` when only the root stays and more than one goes), the one
    ///    left is replaced by the first new screen (`replaceTop`), and the remaining new screens
    ///    are pushed. With nothing to remove it is pushes only; with nothing to add, pops only.
    /// 4. The new modal stacks above it are presented, bottom first.
    public static func diff(from old: NavigationState, to new: NavigationState) -> [NavigationCommand] {
        var commands: [NavigationCommand] = []
        var current = old
        func emit(_ command: NavigationCommand) {
            commands.append(command)
            current.apply(command)
        }
        if let tab = new.selectedTab, tab != current.selectedTab {
            while current.stacks.count > 1 { emit(.dismiss) }
            emit(.selectTab(tab))
        }
        let shared = min(current.stacks.count, new.stacks.count)
        let firstDifference = (0..<shared).first { current.stacks[$0] != new.stacks[$0] } ?? shared
        while current.stacks.count > firstDifference + 1 { emit(.dismiss) }
        if firstDifference < current.stacks.count {
            let kept = current.stacks[firstDifference]
            let target = firstDifference < new.stacks.count ? new.stacks[firstDifference] : nil
            if let target, target.presentation == kept.presentation, target.tab == kept.tab {
                edit(kept.screens, into: target.screens, emit: emit)
            } else if firstDifference > 0 {
                emit(.dismiss)
            }
        }
        for stack in new.stacks.dropFirst(current.stacks.count) { emit(.present(stack)) }
        return commands
    }

    /// Step 3 of `diff`: the commands that make a stack showing `old` show `new`.
    private static func edit(_ old: [Screen], into new: [Screen], emit: (NavigationCommand) -> Void) {
        guard old != new else { return }
        // The screens that stay: the same screens from the bottom (their values may change).
        var common = 0
        while common < old.count, common < new.count, old[common].isSameScreen(as: new[common]) { common += 1 }
        // Those whose values change, bottom first; each is updated when it is on top.
        var changed = (0..<common).filter { old[$0] != new[$0] }
        func updateTop(height: Int) {
            if let last = changed.last, last == height - 1 {
                emit(.update(new[last]))
                changed.removeLast()
            }
        }
        if common == old.count, common < new.count { updateTop(height: old.count) }  // before pushing over it
        let removed = old.count - common
        let added = Array(new[common...])
        if removed > 0, !added.isEmpty {
            // Keep one screen to replace: the root can never be popped.
            popping(removed - 1, from: old.count, emit: emit)
            emit(.replaceTop(added[0]))
            for screen in added.dropFirst() { emit(.push(screen)) }
        } else if removed > 0 {
            popping(removed, from: old.count, emit: emit)
            updateTop(height: common)
        } else {
            for screen in added { emit(.push(screen)) }
        }
        // The rest, below the top now (the nearest to the top first).
        for index in changed.reversed() { emit(.update(new[index])) }
    }

    /// `pop(count)`, or `popToRoot` when it leaves only the root and takes more than one screen.
    private static func popping(_ count: Int, from height: Int, emit: (NavigationCommand) -> Void) {
        guard count > 0 else { return }
        emit(count > 1 && count == height - 1 ? .popToRoot : .pop(count))
    }
}
