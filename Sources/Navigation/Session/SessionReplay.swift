import Foundation
import PhotosModel

/// Rebuilds a session's state from its audit rows alone, the way an analyst could with SQL.
///
/// A fold of the navigation core's own interpreter (`SessionState.apply`) over the rows: the
/// core applies each step as it records it, so the state a session is saved with is, by
/// construction, the state its rows replay to — the trail tells the whole story.
public enum SessionReplay {
    /// A row the replay cannot follow.
    public struct ReplayError: Error, CustomStringConvertible {
        public let seq: Int
        public let message: String
        public var description: String { "audit seq \(seq): \(message)" }
    }

    /// The state after the given rows (one session's, in seq order).
    public static func state(from rows: [AuditRow]) throws -> SessionState {
        var state = SessionState.empty
        let decoder = JSONDecoder()
        for row in rows {
            guard let step = AuditStep(rawValue: row.step) else { throw ReplayError(seq: row.seq, message: "unknown step \(row.step)") }
            let detail = (try? decoder.decode(NavigationStep.Detail.self, from: Data(row.detail.utf8))) ?? NavigationStep.Detail()
            // A screen no version has had is none: a step that needs one then fails, naming it.
            let screen = row.screen.flatMap(ScreenKind.init(rawValue:))
            // A step taken by a coordinator of a tab that is not selected (starting it, or a
            // link unwinding it) happened on that tab's stack, as the coordinator saw it (the
            // core records it inside the same swap: `NavigationContext.onTab`).
            let scope = step == .tabSelect ? nil : state.enterTab(state.tab(ofCoordinatorPath: row.coordinator ?? ""))
            defer { state.leaveTab(scope) }
            do {
                try state.apply(NavigationStep(step: step, coordinator: row.coordinator, screen: screen, detail: detail, username: row.username))
            } catch let error as StepNotApplicable {
                throw ReplayError(seq: row.seq, message: error.message)
            }
        }
        state.refreshTop()
        return state
    }
}
