import DatabaseAccess
import Navigation
import PhotosModel
import Tracing

/// Spans for an action (`tracing.otlpEndpoint`): one for the action, a child for each storage
/// operation it makes. They carry the action's name, its outcome and the store — never a session
/// id, a token, a secret or a username (a span leaves the machine).
///
/// Used only with tracing on (`SessionCoordinator.traced`): even no-op spans cost the action
/// path 8 % (docs/benchmarks.md has the figures).
enum SessionTracing {
    /// Runs `body` in a span for the action `action`, recording its outcome or error.
    static func action(
        _ action: ActionName, store: String, _ body: () async throws -> ActionResult
    ) async throws -> ActionResult {
        try await withSpan("session.action", ofKind: .internal) { span in
            span.attributes["photosd.action"] = action.rawValue
            span.attributes["db.system.name"] = store
            let result = try await body()
            span.attributes["photosd.outcome"] = result.outcome.rawValue
            if let error = result.error { span.attributes["photosd.refusal"] = error.code.rawValue }
            return result
        }
    }
}

/// A store's action contract with a span around each call (`db.system.name`,
/// `db.operation.name`).
struct TracedSessionActions: SessionActions {
    let store: any SessionActions
    let system: String

    /// `store`'s calls, traced as those of `system` (`DatabaseStore.systemName`).
    init(_ store: any SessionActions, system: String) {
        self.store = store
        self.system = system
    }

    func readForAction(_ read: ActionRead) async throws -> ActionSnapshot {
        try await withSpan("db.readForAction", ofKind: .client) { span in
            span.attributes["db.system.name"] = system
            span.attributes["db.operation.name"] = "readForAction"
            return try await store.readForAction(read)
        }
    }

    func writeDecision(_ write: ActionWrite) async throws -> ActionWriteOutcome {
        try await withSpan("db.writeDecision", ofKind: .client) { span in
            span.attributes["db.system.name"] = system
            span.attributes["db.operation.name"] = "writeDecision"
            span.attributes["db.audit_rows"] = write.audit.count
            let outcome = try await store.writeDecision(write)
            span.attributes["photosd.write_outcome"] = switch outcome {
            case .written: "written"
            case .moved: "moved"
            case .stale: "stale"
            case .answered: "answered"
            }
            return outcome
        }
    }
}
