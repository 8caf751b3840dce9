import Foundation
import PhotosModel

/// Rebuilds a session's state from its audit rows alone, the way an analyst could with SQL.
///
/// It replays the *effects* recorded (screens pushed, popped, presented, dismissed;
/// coordinators started and finished; sign-ins and sign-outs), not the coordinators' logic, so it
/// also checks that the audit trail tells the whole story: for every session, replaying all its
/// rows must give exactly the saved state.
public enum SessionReplay {
    /// A row the replay cannot follow.
    public struct ReplayError: Error, CustomStringConvertible {
        public let seq: Int
        public let message: String
        public var description: String { "audit seq \(seq): \(message)" }
    }

    private struct Detail: Decodable {
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
        /// The values of variation points a buy coordinator's `coordinator.start` names
        /// (`"terms.required": "yes"`).
        var buyPresentation: String?
        var signInWhen: String?
        var termsRequired: String?

        enum CodingKeys: String, CodingKey {
            case id, kind, presentation, photoId, userId, tokenId, tab, layout, experiment, variant
            case buyPresentation = "buy.presentation", signInWhen = "signIn.when", termsRequired = "terms.required"
        }

        /// Those values by point, nil when it names none.
        var variants: [String: String]? {
            let pairs: [(VariationPoint, String?)] = [(.buyPresentation, buyPresentation), (.signInWhen, signInWhen), (.termsRequired, termsRequired)]
            let values = Dictionary(uniqueKeysWithValues: pairs.compactMap { point, value in value.map { (point.rawValue, $0) } })
            return values.isEmpty ? nil : values
        }
    }

    /// The state after the given rows (one session's, in seq order).
    public static func state(from rows: [AuditRow]) throws -> SessionState {
        var state = SessionState.empty
        let decoder = JSONDecoder()
        for row in rows {
            func fail(_ message: String) -> ReplayError { ReplayError(seq: row.seq, message: message) }
            guard let step = AuditStep(rawValue: row.step) else { throw fail("unknown step \(row.step)") }
            let detail = (try? decoder.decode(Detail.self, from: Data(row.detail.utf8))) ?? Detail()
            let path = row.coordinator ?? ""
            // A step taken by a coordinator of a tab that is not selected (starting it, or a
            // link unwinding it) happened on that tab's stack, as the coordinator saw it.
            let scope = step == .tabSelect ? nil : state.enterTab(state.tab(ofCoordinatorPath: path))
            defer { state.leaveTab(scope) }
            switch step {
            case .sessionStart:
                state = .started(layout: detail.layout ?? .stack)
            case .tabSelect:
                guard let tab = detail.tab, state.tabs != nil, state.stacks.count == 1 else { throw fail("tab.select without a tab, a tab bar, or under a modal") }
                state.showTab(tab)
            case .coordinatorStart:
                guard let id = detail.id, let kind = detail.kind else { throw fail("coordinator.start without id and kind") }
                var node = CoordinatorState(kind: kind, id: id, presentation: detail.presentation, photoId: detail.photoId, tab: detail.tab)
                node.variants = kind == .buy ? detail.variants : nil
                switch (kind, detail.presentation) {
                case (.buy, .push?):
                    node.stackIndex = state.stacks.count - 1
                    node.initialDepth = state.stacks.last?.screens.count
                case (.buy, .modal?), (.terms, _):
                    node.stackIndex = state.stacks.count
                default: break
                }
                let parentPath = path.split(separator: "/").dropLast().joined(separator: "/")
                if parentPath.isEmpty {
                    state.coordinators = node
                } else if !update(&state.coordinators, at: parentPath, { parent in
                    // Terms shown in a flow that requires them: buy is offered from now on.
                    if kind == .terms, parent.value(of: .termsRequired) == "yes" { parent.termsSeen = true }
                    parent.children.append(node)
                }) {
                    throw fail("no coordinator at \(parentPath)")
                }
            case .coordinatorFinish:
                let parentPath = path.split(separator: "/").dropLast().joined(separator: "/")
                let kind = path.split(separator: "/").last.map(String.init)
                if !update(&state.coordinators, at: parentPath, { $0.children.removeAll { $0.pathComponent == kind } }) {
                    throw fail("no coordinator at \(parentPath)")
                }
            case .screenPush:
                guard let screen = row.screen.flatMap(ScreenKind.init(rawValue:)), let owner = id(at: path, in: state) else { throw fail("screen.push without screen or owner") }
                let pushed = ScreenState(screen, photoId: detail.photoId, owner: owner)
                if state.stacks.isEmpty { state.stacks.append(StackState(presentation: .root, presenter: owner, screens: [])) }
                state.stacks[state.stacks.count - 1].screens.append(pushed)
            case .screenPop:
                guard !state.stacks.isEmpty, state.stacks[state.stacks.count - 1].screens.popLast()?.screen.rawValue == row.screen else {
                    throw fail("screen.pop of \(row.screen ?? "nothing") does not match the top screen")
                }
            case .screenPresent:
                guard let screen = row.screen.flatMap(ScreenKind.init(rawValue:)), let owner = id(at: path, in: state) else { throw fail("screen.present without screen or owner") }
                state.stacks.append(StackState(presentation: .modal, presenter: owner, screens: [ScreenState(screen, photoId: detail.photoId, owner: owner)]))
            case .screenDismiss:
                guard state.stacks.count > 1 else { throw fail("screen.dismiss with no modal stack") }
                state.stacks.removeLast()
            case .authSignIn:
                guard let userId = detail.userId else { throw fail("auth.signIn without user") }
                // An erased user's rows show no name: the state shows the tombstone `users` keeps.
                state.user = SessionUser(id: userId, username: row.username ?? NameCommitment.erasedName(userID: userId))
                state.tokenId = detail.tokenId
            case .authSignOut, .sessionExpired:
                // An ended session's row keeps no state; its replay keeps the screens it ended on.
                state.user = nil
                state.tokenId = nil
            case .experimentExposed:
                guard let experiment = detail.experiment, let variant = detail.variant else { throw fail("experiment.exposed without experiment and variant") }
                let listed = ExperimentExposure(experiment: experiment, variant: variant)
                if !(state.experiments ?? []).contains(listed) { state.experiments = (state.experiments ?? []) + [listed] }
            case .action, .actionRejected, .authSignInFailed, .purchaseCompleted, .linkOpen, .userCreated, .photoAdded, .operatorCreated, .operatorRemoved, .userErased,
                 .experimentAdded, .experimentStopped:
                break
            }
        }
        state.refreshTop()
        return state
    }

    private static func id(at path: String, in state: SessionState) -> String? {
        state.coordinators?.flattened().first { $0.path == path }?.state.id
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
