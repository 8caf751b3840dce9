extension SessionState {
    /// What is wrong with this state, if anything (empty when every invariant of DESIGN §2 holds):
    /// the root stack exists and starts with `photos`; only it is a root stack; every screen is
    /// owned by a live coordinator; every live coordinator below the root owns a screen.
    public func invariantViolations() -> [String] {
        var problems: [String] = []
        guard let root = stacks.first else { return ["no root stack"] }
        if root.presentation != .root { problems.append("the first stack is not the root stack") }
        if root.screens.first?.screen != .photos { problems.append("the root stack does not start with photos") }
        for (index, stack) in stacks.enumerated() {
            if index > 0 && stack.presentation != .modal { problems.append("stack \(index) is not modal") }
            if stack.screens.isEmpty { problems.append("stack \(index) is empty") }
        }
        guard let coordinators else { return problems + ["no coordinator tree"] }
        if coordinators.kind != .app { problems.append("the root coordinator is not app") }
        let live = coordinators.flattened()
        let ids = Set(live.map(\.state.id))
        if ids.count != live.count { problems.append("duplicate coordinator ids") }
        let owners = Set(stacks.flatMap { $0.screens.map(\.owner) })
        for screen in stacks.flatMap(\.screens) where !ids.contains(screen.owner) {
            problems.append("screen \(screen.screen.rawValue) is owned by \(screen.owner), which is not live")
        }
        for (path, node) in live.dropFirst() where !owners.contains(node.id) {
            problems.append("coordinator \(path) (\(node.id)) owns no screen")
        }
        return problems
    }
}
