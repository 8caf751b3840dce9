import Foundation
import PhotosModel

/// One recorded step as the interpreter reads it: what an audit row says (its step, the
/// coordinator that took it, the screen, the detail), and for a sign-in the name the state shows.
///
/// The navigation core builds one for every step it records and applies it at once
/// (`NavigationContext.record`); the replay builds one from every audit row
/// (`SessionReplay.state(from:)`). Both then call the same `SessionState.apply`, so the state a
/// session is saved with and the state its trail replays to cannot drift apart.
public struct NavigationStep: Sendable {
    /// The step.
    public var step: AuditStep
    /// The coordinator's path (`app/buy`), nil for a session's own steps.
    public var coordinator: String?
    /// The screen pushed, popped, presented or dismissed.
    public var screen: ScreenKind?
    /// What the row's detail says that the state keeps.
    public var detail: Detail
    /// The signed-in name an `auth.signIn` shows (an erased user's rows hold none: the state
    /// shows the tombstone `users` keeps).
    public var username: String?

    /// Creates a step.
    public init(step: AuditStep, coordinator: String?, screen: ScreenKind?, detail: Detail, username: String?) {
        self.step = step
        self.coordinator = coordinator
        self.screen = screen
        self.detail = detail
        self.username = username
    }

    /// Whether `apply` reads the detail of `step` (the others' details change no state).
    public static func readsDetail(_ step: AuditStep) -> Bool {
        switch step {
        case .sessionStart, .tabSelect, .coordinatorStart, .screenPush, .screenPresent, .authSignIn, .experimentExposed: true
        case .coordinatorFinish, .screenPop, .screenDismiss, .authSignOut, .sessionExpired, .action, .actionRejected, .authSignInFailed,
             .purchaseCompleted, .linkOpen, .userCreated, .photoAdded, .operatorCreated, .operatorRemoved, .userErased, .experimentAdded,
             .experimentStopped:
            false
        }
    }

    /// The members of a step's detail that change a state.
    public struct Detail: Decodable, Sendable {
        var id: String?
        var kind: CoordinatorKind?
        var presentation: FlowPresentation?
        var photoId: Int64?
        var userId: Int64?
        var tokenId: Int64?
        var tab: TabName?
        var layout: SessionLayout?
        var experiment: String?
        var variant: String?
        /// The variation points' values a buy coordinator's `coordinator.start` names
        /// (`"terms.required": "yes"`), by point.
        var variants: [String: String]?

        /// A detail with nothing in it (a row whose detail is not an object).
        public init() {}

        /// The detail a step is recorded with.
        public init(_ object: JSONObject) {
            self.init { object[$0] }
        }

        /// The detail of an audit row, from its text: each member read as the recorded object
        /// holds it (a member of another type reads as absent, as in `init(_:)`).
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: MemberKey.self)
            self.init { name in
                let key = MemberKey(name)
                if let text = try? container.decodeIfPresent(String.self, forKey: key) { return .string(text) }
                if let number = try? container.decodeIfPresent(Int64.self, forKey: key) { return .int(number) }
                return nil
            }
        }

        /// The one reading of a detail, whatever holds it: `member` gives a member by name.
        private init(member: (String) -> JSONValue?) {
            func string(_ name: String) -> String? {
                if case .string(let value)? = member(name) { value } else { nil }
            }
            func int(_ name: String) -> Int64? {
                if case .int(let value)? = member(name) { value } else { nil }
            }
            id = string("id")
            kind = string("kind").flatMap(CoordinatorKind.init(rawValue:))
            presentation = string("presentation").flatMap(FlowPresentation.init(rawValue:))
            photoId = int("photoId")
            userId = int("userId")
            tokenId = int("tokenId")
            tab = string("tab").flatMap(TabName.init(rawValue:))
            layout = string("layout").flatMap(SessionLayout.init(rawValue:))
            experiment = string("experiment")
            variant = string("variant")
            variants = Self.variants { point in string(point.rawValue) }
        }

        /// The values `value` finds, by point; nil when it finds none. Every point is read:
        /// a new point is a case of `VariationPoint` and nothing here.
        private static func variants(_ value: (VariationPoint) -> String?) -> [String: String]? {
            var values: [String: String] = [:]
            for point in VariationPoint.allCases { if let found = value(point) { values[point.rawValue] = found } }
            return values.isEmpty ? nil : values
        }

        private struct MemberKey: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(_ name: String) { stringValue = name }
            init?(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }
    }
}

/// A step the state cannot follow (the trail was edited, or a step was recorded out of order).
public struct StepNotApplicable: Error, CustomStringConvertible, Equatable {
    /// What is wrong.
    public let message: String
    public var description: String { message }
}

extension SessionState {
    /// The one interpreter of a step: the state after `step`, on the stacks as they are shown
    /// now (a parked tab's steps are applied inside `enterTab`/`leaveTab` by the caller).
    ///
    /// Screens are pushed, popped, presented and dismissed; coordinators start (where their
    /// flow begins is taken from the stacks as they are) and finish; sign-ins, sign-outs,
    /// expiries, tab selections and experiment exposures change what they name. Every other
    /// step changes nothing. Throws when the state cannot take the step.
    public mutating func apply(_ step: NavigationStep) throws {
        let detail = step.detail
        let path = step.coordinator ?? ""
        switch step.step {
        case .sessionStart:
            self = .started(layout: detail.layout ?? .stack)
        case .tabSelect:
            guard let tab = detail.tab, tabs != nil, stacks.count == 1 else { throw StepNotApplicable(message: "tab.select without a tab, a tab bar, or under a modal") }
            showTab(tab)
        case .coordinatorStart:
            guard let id = detail.id, let kind = detail.kind else { throw StepNotApplicable(message: "coordinator.start without id and kind") }
            // Where a flow begins, for putting the navigation back when it finishes: the top of
            // the current stack (push), or the stack it is about to present (modal, terms).
            let role: CoordinatorState.Role
            switch kind {
            case .app: role = .app
            case .tab: role = .tab(detail.tab ?? .photos)
            case .terms: role = .terms(stackIndex: stacks.count)
            case .buy:
                var flow = BuyFlow(presentation: detail.presentation ?? .push, photoId: detail.photoId ?? 0, variants: detail.variants ?? [:])
                switch detail.presentation {
                case .push?:
                    flow.stackIndex = stacks.count - 1
                    flow.initialDepth = stacks.last?.screens.count
                case .modal?: flow.stackIndex = stacks.count
                case nil: break
                }
                role = .buy(flow)
            }
            let node = CoordinatorState(id: id, role: role)
            let parentPath = path.split(separator: "/").dropLast().joined(separator: "/")
            if parentPath.isEmpty {
                coordinators = node
            } else if !Self.update(&coordinators, at: parentPath, { parent in
                // Terms shown in a flow that requires them: buy is offered from now on.
                if kind == .terms, parent.flow?.value(TermsRequired.self) == .yes { parent.flow?.termsSeen = true }
                parent.children.append(node)
            }) {
                throw StepNotApplicable(message: "no coordinator at \(parentPath)")
            }
        case .coordinatorFinish:
            let parentPath = path.split(separator: "/").dropLast().joined(separator: "/")
            let component = path.split(separator: "/").last.map(String.init)
            if !Self.update(&coordinators, at: parentPath, { $0.children.removeAll { $0.pathComponent == component } }) {
                throw StepNotApplicable(message: "no coordinator at \(parentPath)")
            }
        case .screenPush:
            guard let screen = step.screen, let owner = coordinatorID(at: path) else { throw StepNotApplicable(message: "screen.push without screen or owner") }
            if stacks.isEmpty { stacks.append(StackState(presentation: .root, presenter: owner, screens: [])) }
            stacks[stacks.count - 1].screens.append(ScreenState(screen, photoId: detail.photoId, owner: owner))
        case .screenPop:
            guard !stacks.isEmpty, stacks[stacks.count - 1].screens.last?.screen == step.screen else {
                throw StepNotApplicable(message: "screen.pop of \(step.screen?.rawValue ?? "nothing") does not match the top screen")
            }
            stacks[stacks.count - 1].screens.removeLast()
        case .screenPresent:
            guard let screen = step.screen, let owner = coordinatorID(at: path) else { throw StepNotApplicable(message: "screen.present without screen or owner") }
            stacks.append(StackState(presentation: .modal, presenter: owner, screens: [ScreenState(screen, photoId: detail.photoId, owner: owner)]))
        case .screenDismiss:
            guard stacks.count > 1 else { throw StepNotApplicable(message: "screen.dismiss with no modal stack") }
            stacks.removeLast()
        case .authSignIn:
            guard let userId = detail.userId else { throw StepNotApplicable(message: "auth.signIn without user") }
            user = SessionUser(id: userId, username: step.username ?? NameCommitment.erasedName(userID: userId))
            tokenId = detail.tokenId
        case .authSignOut, .sessionExpired:
            // An ended session's row keeps no state; its replay keeps the screens it ended on.
            user = nil
            tokenId = nil
        case .experimentExposed:
            guard let experiment = detail.experiment, let variant = detail.variant else {
                throw StepNotApplicable(message: "experiment.exposed without experiment and variant")
            }
            let listed = ExperimentExposure(experiment: experiment, variant: variant)
            if !(experiments ?? []).contains(listed) { experiments = (experiments ?? []) + [listed] }
        case .action, .actionRejected, .authSignInFailed, .purchaseCompleted, .linkOpen, .userCreated, .photoAdded, .operatorCreated, .operatorRemoved, .userErased,
             .experimentAdded, .experimentStopped:
            break
        }
    }

    /// The id of the coordinator at `path` (followed down the tree, the newest child of each
    /// name, as `update` does; nothing is built on the way: it runs for every screen step).
    func coordinatorID(at path: String) -> String? {
        guard var node = coordinators else { return nil }
        var components = path.split(separator: "/")[...]
        guard components.popFirst() == Substring(node.pathComponent) else { return nil }
        while let next = components.popFirst() {
            guard let child = node.children.last(where: { $0.pathComponent == next }) else { return nil }
            node = child
        }
        return node.id
    }

    /// Applies `change` to the node at `path`; false if there is none.
    private static func update(_ node: inout CoordinatorState?, at path: String, _ change: (inout CoordinatorState) -> Void) -> Bool {
        guard var root = node else { return false }
        let components = path.split(separator: "/").map(String.init)
        guard components.first == root.pathComponent else { return false }
        let found = update(&root, components.dropFirst(), change)
        node = root
        return found
    }

    private static func update(_ node: inout CoordinatorState, _ rest: ArraySlice<String>, _ change: (inout CoordinatorState) -> Void) -> Bool {
        guard let next = rest.first else {
            change(&node)
            return true
        }
        guard let index = node.children.lastIndex(where: { $0.pathComponent == next }) else { return false }
        return update(&node.children[index], rest.dropFirst(), change)
    }
}
