/// The `step` column of the audit trail (docs/design.md, "The audit trail", contract).
public enum AuditStep: String, Sendable, Codable, CaseIterable {
    case sessionStart = "session.start"
    case action = "action"
    case actionRejected = "action.rejected"
    case coordinatorStart = "coordinator.start"
    case coordinatorFinish = "coordinator.finish"
    case screenPush = "screen.push"
    case screenPop = "screen.pop"
    case screenPresent = "screen.present"
    case screenDismiss = "screen.dismiss"
    case authSignIn = "auth.signIn"
    case authSignInFailed = "auth.signInFailed"
    case authSignOut = "auth.signOut"
    case purchaseCompleted = "purchase.completed"
    case tabSelect = "tab.select"
    case linkOpen = "link.open"
    case userCreated = "user.created"
    case photoAdded = "photo.added"
    case operatorCreated = "operator.created"
    case operatorRemoved = "operator.removed"
    case userErased = "user.erased"
    case sessionExpired = "session.expired"
    /// A purchase flow took a variation point an experiment runs on: `detail` names the
    /// experiment, the point and the variant (the `experiment_exposures` view).
    case experimentExposed = "experiment.exposed"
    /// `photos-admin experiments add` (the operator trail).
    case experimentAdded = "experiment.added"
    /// `photos-admin experiments stop` (the operator trail).
    case experimentStopped = "experiment.stopped"
}

/// One step to append to a trail of the audit trail.
public struct AuditEntry: Sendable, Equatable {
    /// Who took the step.
    public var actor: AuditActor
    /// The signed-in user, if any. An entry never holds a name: the `audit_trail` view shows
    /// the user's name from `users` while there is one (erasure removes it there alone).
    public var userID: Int64?
    /// The path of the coordinator that took the step, e.g. `app/buy/terms`.
    public var coordinator: String?
    /// What happened.
    public var step: AuditStep
    /// The screen pushed, popped, presented or dismissed.
    public var screen: String?
    /// Details as a JSON object (never a password or a token).
    public var detail: JSONObject

    /// Creates an entry.
    public init(
        actor: AuditActor, userID: Int64? = nil,
        coordinator: String? = nil, step: AuditStep, screen: String? = nil, detail: JSONObject = [:]
    ) {
        self.actor = actor
        self.userID = userID
        self.coordinator = coordinator
        self.step = step
        self.screen = screen
        self.detail = detail
    }
}

/// One row of the `audit_trail` view (what `GET …/events` returns, in camelCase).
public struct AuditRow: Sendable, Equatable, Codable {
    public let sessionId: String
    public let seq: Int
    public let at: String
    public let actor: String
    public let username: String?
    public let coordinator: String?
    public let step: String
    public let screen: String?
    /// The detail JSON object, as text.
    public let detail: String

    /// Creates a row.
    public init(sessionId: String, seq: Int, at: String, actor: String, username: String?, coordinator: String?, step: String, screen: String?, detail: String) {
        self.sessionId = sessionId
        self.seq = seq
        self.at = at
        self.actor = actor
        self.username = username
        self.coordinator = coordinator
        self.step = step
        self.screen = screen
        self.detail = detail
    }
}
