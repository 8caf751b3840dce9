import PhotosModel

/// A coordinator tree as `sessions.state` holds it, whatever version wrote it: each field as
/// the JSON has it or absent. `CoordinatorState(stored:stacks:)` makes it whole, once, as it is
/// read.
struct StoredCoordinator: Decodable {
    var id: String
    var kind: CoordinatorKind
    var children: [StoredCoordinator]
    var tab: TabName?
    var presentation: FlowPresentation?
    var photoId: Int64?
    var stackIndex: Int?
    var initialDepth: Int?
    var variants: [String: String]?
    var termsSeen: Bool?

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CoordinatorState.CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        kind = try container.decode(CoordinatorKind.self, forKey: .kind)
        children = try container.decodeIfPresent([StoredCoordinator].self, forKey: .children) ?? []
        tab = try container.decodeIfPresent(TabName.self, forKey: .tab)
        presentation = try container.decodeIfPresent(FlowPresentation.self, forKey: .presentation)
        photoId = try container.decodeIfPresent(Int64.self, forKey: .photoId)
        stackIndex = try container.decodeIfPresent(Int.self, forKey: .stackIndex)
        initialDepth = try container.decodeIfPresent(Int.self, forKey: .initialDepth)
        variants = try container.decodeIfPresent([String: String].self, forKey: .variants)
        termsSeen = try container.decodeIfPresent(Bool.self, forKey: .termsSeen)
    }
}

extension CoordinatorState {
    /// The stacks a stored tree is read with, for what a tree written before every coordinator
    /// kept where it began leaves out.
    struct StoredStacks {
        /// The stacks shown (`SessionState.stacks`).
        var shown: [StackState]
        /// The parked tabs' root stacks.
        var parked: [StackState]
    }

    /// The tree `stored` holds. Every version wrote a tab's tab and a flow's presentation and
    /// photo: without them the tree is refused. Where a flow or a terms sheet began was left out
    /// by the earliest versions; it is read off `stacks` (the stack holding the flow's screens,
    /// at the depth of its first; the stack it or the sheet presented), and without stacks
    /// (a tree read alone) the tree is refused.
    init(stored: StoredCoordinator, stacks: StoredStacks?) throws {
        func missing(_ key: CodingKeys) -> DecodingError {
            DecodingError.keyNotFound(key, .init(codingPath: [], debugDescription: "coordinator \(stored.id) (\(stored.kind.rawValue)) has no \(key.stringValue)"))
        }
        let role: Role
        switch stored.kind {
        case .app:
            role = .app
        case .tab:
            guard let tab = stored.tab else { throw missing(.tab) }
            role = .tab(tab)
        case .terms:
            guard let stackIndex = stored.stackIndex ?? stacks.map({ $0.presented(by: stored.id) }) else { throw missing(.stackIndex) }
            role = .terms(stackIndex: stackIndex)
        case .buy:
            guard let presentation = stored.presentation else { throw missing(.presentation) }
            guard let photoId = stored.photoId else { throw missing(.photoId) }
            let origin: (stack: Int, depth: Int)
            switch (presentation, stored.stackIndex, stored.initialDepth) {
            case (.modal, let stackIndex?, _): origin = (stackIndex, 0)
            case (.push, let stackIndex?, let depth?): origin = (stackIndex, depth)
            case (.modal, nil, _):
                guard let stacks else { throw missing(.stackIndex) }
                origin = (stacks.presented(by: stored.id), 0)
            case (.push, _, _):
                guard let stacks else { throw missing(stored.stackIndex == nil ? .stackIndex : .initialDepth) }
                origin = stacks.pushed(by: stored.id)
            }
            role = .buy(BuyFlow(
                presentation: presentation, photoId: photoId, stackIndex: origin.stack, initialDepth: origin.depth, variants: stored.variants ?? [:],
                termsSeen: stored.termsSeen ?? false))
        }
        self.init(id: stored.id, role: role, children: try stored.children.map { try CoordinatorState(stored: $0, stacks: stacks) })
    }
}

extension CoordinatorState.StoredStacks {
    /// The stack the coordinator `id` presented; past the top (nothing to dismiss) if none.
    func presented(by id: String) -> Int {
        shown.firstIndex { $0.presentation == .modal && $0.presenter == id } ?? shown.count
    }

    /// Where a push flow's screens begin: its stack and the depth below its first screen (a
    /// parked tab's root stack is stack 0 once its tab is shown). At the top, with nothing to
    /// pop, if it owns none.
    func pushed(by id: String) -> (stack: Int, depth: Int) {
        for (index, stack) in shown.enumerated() {
            if let depth = stack.screens.firstIndex(where: { $0.owner == id }) { return (index, depth) }
        }
        for stack in parked {
            if let depth = stack.screens.firstIndex(where: { $0.owner == id }) { return (0, depth) }
        }
        return (max(shown.count - 1, 0), shown.last?.screens.count ?? 0)
    }
}
