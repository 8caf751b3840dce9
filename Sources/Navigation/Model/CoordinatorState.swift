import PhotosModel

/// The kinds of coordinator (docs/design.md, "The coordinator model").
public enum CoordinatorKind: String, Codable, Sendable {
    case app, tab, buy, terms
}

/// How a buy coordinator shows its flow.
public enum FlowPresentation: String, Codable, Sendable {
    /// Horizontal: pushes onto the current stack, pops back to its initial screen when done.
    case push
    /// Vertical: presents a new modal stack, dismisses it when done.
    case modal
}

/// Why a coordinator finished (`coordinator.finish` detail `reason`).
public enum FinishReason: String, Codable, Sendable {
    case completed, cancelled, back, dismissed
    /// Unwound by a deep link.
    case link
}

/// A live coordinator as persisted: enough to rebuild the object tree. Its id, what its kind
/// carries (`role`), and its live children.
///
/// Stored as the same JSON object as ever (`kind`, `id`, `children` and the kind's own fields:
/// `tab`; `presentation`, `photoId`, `stackIndex`, `initialDepth`, `variants`, `termsSeen`;
/// `stackIndex`), so `sessions.state` written by any earlier version reads as it was.
public struct CoordinatorState: Sendable, Equatable {
    /// Id: `app`, `tab-<tab>`, or `<kind>-<seq of its coordinator.start step>`.
    public var id: String
    /// The kind, with what that kind carries.
    public var role: Role
    /// Live children, oldest first.
    public var children: [CoordinatorState]

    /// A kind of coordinator and what it carries.
    public enum Role: Sendable, Equatable {
        /// The root.
        case app
        /// A tab bar's tab, running that tab's stack.
        case tab(TabName)
        /// A purchase flow.
        case buy(BuyFlow)
        /// The terms sheet, presented as stack `stackIndex`.
        case terms(stackIndex: Int)
    }

    /// Creates a coordinator state.
    public init(id: String, role: Role, children: [CoordinatorState] = []) {
        self.id = id
        self.role = role
        self.children = children
    }

    /// The kind.
    public var kind: CoordinatorKind {
        switch role {
        case .app: .app
        case .tab: .tab
        case .buy: .buy
        case .terms: .terms
        }
    }

    /// For a tab coordinator, its tab.
    public var tab: TabName? {
        if case .tab(let tab) = role { tab } else { nil }
    }

    /// For a buy coordinator, its flow (settable: the interpreter marks the terms seen).
    public var flow: BuyFlow? {
        get { if case .buy(let flow) = role { flow } else { nil } }
        set { if let newValue, case .buy = role { role = .buy(newValue) } }
    }

    /// The coordinator with this id in this subtree.
    func node(id: String) -> CoordinatorState? {
        if self.id == id { return self }
        for child in children { if let found = child.node(id: id) { return found } }
        return nil
    }

    /// Its name in a path: the kind, or for a tab coordinator the tab (`app/photos/buy`).
    var pathComponent: String { tab?.rawValue ?? kind.rawValue }

    /// Every coordinator in this subtree, depth first, with its path (`app/buy/terms`).
    func flattened(prefix: String = "") -> [(path: String, state: CoordinatorState)] {
        let path = prefix.isEmpty ? pathComponent : prefix + "/" + pathComponent
        return [(path, self)] + children.flatMap { $0.flattened(prefix: path) }
    }
}

/// What a purchase flow carries.
public struct BuyFlow: Sendable, Equatable {
    /// Pushed on the current stack, or presented as a sheet.
    public var presentation: FlowPresentation
    /// The photo being bought.
    public var photoId: Int64
    /// Where it began, for putting the navigation back when it finishes: the stack it works on
    /// (push) or presents (modal).
    public var stackIndex: Int
    /// How many screens that stack had when the flow began: for push, its initial screen is the
    /// top of those; for modal, 0 (the stack did not exist).
    public var initialDepth: Int
    /// The values it took, as it started, of the variation points an experiment governed then
    /// (point → value, e.g. `terms.required: yes`), kept for the flow's life whatever the
    /// experiment does meanwhile. Empty when no experiment governed any.
    public var variants: [String: String]
    /// Under `terms.required: yes`: the terms were shown in this flow, so buy is offered.
    public var termsSeen: Bool

    /// A flow and where it began.
    public init(
        presentation: FlowPresentation, photoId: Int64, stackIndex: Int, initialDepth: Int, variants: [String: String] = [:],
        termsSeen: Bool = false
    ) {
        self.presentation = presentation
        self.photoId = photoId
        self.stackIndex = stackIndex
        self.initialDepth = initialDepth
        self.variants = variants
        self.termsSeen = termsSeen
    }

    /// A flow beginning now on `stacks` (the stacks as shown): a push works on the top stack,
    /// at its depth; a sheet presents the next stack. The one rule for where a flow begins, as
    /// the coordinator making it and the interpreter reading its `coordinator.start` both take it.
    public init(presentation: FlowPresentation, photoId: Int64, variants: [String: String] = [:], beginningOn stacks: [StackState]) {
        switch presentation {
        case .push:
            self.init(
                presentation: presentation, photoId: photoId, stackIndex: max(stacks.count - 1, 0), initialDepth: stacks.last?.screens.count ?? 0,
                variants: variants)
        case .modal:
            self.init(presentation: presentation, photoId: photoId, stackIndex: stacks.count, initialDepth: 0, variants: variants)
        }
    }

    /// The value this flow took of the point of `Value` (the behaviour with no experiment when
    /// none governed it).
    public func value<Value: VariationValue>(_: Value.Type) -> Value {
        Value(named: variants[Value.point.rawValue])
    }
}

extension CoordinatorState.Role {
    /// The terms sheet about to be presented over `stacks` (the stacks as shown).
    public static func terms(presentedOver stacks: [StackState]) -> Self {
        .terms(stackIndex: stacks.count)
    }
}

extension CoordinatorState: Decodable {
    enum CodingKeys: String, CodingKey {
        case children, id, initialDepth, kind, photoId, presentation, stackIndex, tab, termsSeen, variants
    }

    /// A tree as stored, whole: a tree written before every coordinator kept where it began
    /// (no `stackIndex`) is refused here, and read within its `SessionState`, whose stacks
    /// tell (`CoordinatorState(stored:stacks:)`).
    public init(from decoder: any Decoder) throws {
        self = try CoordinatorState(stored: StoredCoordinator(from: decoder), stacks: nil)
    }
}
