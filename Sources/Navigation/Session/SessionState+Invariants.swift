extension SessionState {
    /// What is wrong with this state, if anything (empty when every invariant of the design
    /// holds): the root stack exists and starts with `photos` (stack layout), or every tab has
    /// one stack starting with its root screen, the selected one shown and the others parked
    /// (tabs layout); only modal stacks lie over it; every screen is owned by a live coordinator
    /// — on a tab's stack, one of that tab's; every live coordinator below the root (and its
    /// tabs) owns a screen.
    public func invariantViolations() -> [String] {
        var problems: [String] = []
        guard let root = stacks.first else { return ["no root stack"] }
        switch sessionLayout {
        case .stack:
            if root.presentation != .root { problems.append("the first stack is not the root stack") }
            if root.screens.first?.screen != .photos { problems.append("the root stack does not start with photos") }
            if tabs != nil { problems.append("a stack-layout session has a tab bar") }
        case .tabs:
            guard let tabs else { return problems + ["a tabs-layout session has no tab bar"] }
            if root.presentation != .tab || root.tab != tabs.selected { problems.append("the first stack is not the selected tab's") }
            let tabStacks = [root] + tabs.parked
            let parkedTabs = tabs.parked.compactMap(\.tab)
            if parkedTabs != TabName.allCases.filter({ $0 != tabs.selected }) || parkedTabs.count != tabs.parked.count {
                problems.append("the parked stacks are not one per tab that is not selected, in tab order")
            }
            for stack in tabStacks {
                if stack.presentation != .tab { problems.append("a parked stack is not a tab's") }
                if let tab = stack.tab, stack.screens.first?.screen != tab.rootScreen { problems.append("tab \(tab.rawValue) does not start with \(tab.rootScreen.rawValue)") }
            }
        }
        for (index, stack) in stacks.enumerated() {
            if index > 0 && stack.presentation != .modal { problems.append("stack \(index) is not modal") }
        }
        for stack in allStacks where stack.screens.isEmpty { problems.append("a stack is empty") }
        guard let coordinators else { return problems + ["no coordinator tree"] }
        if coordinators.kind != .app { problems.append("the root coordinator is not app") }
        let live = coordinators.flattened()
        let ids = Set(live.map(\.state.id))
        if ids.count != live.count { problems.append("duplicate coordinator ids") }
        let owners = Set(allStacks.flatMap { $0.screens.map(\.owner) })
        for screen in allStacks.flatMap(\.screens) where !ids.contains(screen.owner) {
            problems.append("screen \(screen.screen.rawValue) is owned by \(screen.owner), which is not live")
        }
        for (path, node) in live.dropFirst() where !owners.contains(node.id) {
            problems.append("coordinator \(path) (\(node.id)) owns no screen")
        }
        if let tabs {
            // Each tab's stack (and the modal stacks over the selected one) is owned by that tab.
            let pathOf = Dictionary(live.map { ($0.state.id, $0.path) }, uniquingKeysWith: { first, _ in first })
            let modalTab = tabs.selected
            for (index, stack) in allStacks.enumerated() {
                let tab = index < stacks.count ? (index == 0 ? stacks[0].tab : modalTab) : stack.tab
                for screen in stack.screens where tab.map({ pathOf[screen.owner]?.hasPrefix("app/" + $0.rawValue) != true }) ?? true {
                    problems.append("screen \(screen.screen.rawValue) on tab \(tab?.rawValue ?? "?") is owned by \(pathOf[screen.owner] ?? screen.owner)")
                }
            }
            let tabChildren = coordinators.children.filter { $0.kind == .tab }.compactMap(\.tab)
            if tabChildren != TabName.allCases || coordinators.children.count != tabChildren.count {
                problems.append("app's children are not exactly one tab coordinator per tab")
            }
        }
        return problems
    }
}
