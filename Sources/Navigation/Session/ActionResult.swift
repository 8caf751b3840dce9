import PhotosModel

/// The answer to one action: `{"session", "events", "outcome", "token"?}` or an error.
public struct ActionResult: Decodable, Sendable, Equatable {
    /// The session after the action (or unchanged, when refused).
    public var session: SessionView
    /// The audit rows this action wrote, in order.
    public var events: [AuditRow]
    /// What the action achieved.
    public var outcome: ActionOutcome
    /// A bearer token issued by a successful sign-in; shown once.
    public var token: String?
    /// Set when the action was refused after being recorded (`action_not_available`,
    /// `invalid_credentials`): the caller answers with this error.
    public var error: ActionError?
    /// Set on an answer read back from its `Idempotency-Key` (a retry), until the session
    /// coordinator has decided what of it the retry may have; never stored or sent.
    public var isReplay = false
    /// The new session's secret, on the answer that created it only (`sessionSecret` of the
    /// `201`); never stored (the row keeps its SHA-256) or sent again.
    public var sessionSecret: String?

    enum CodingKeys: String, CodingKey {
        case session, events, outcome, token, error
    }
}

/// A refusal that was recorded in the audit trail.
public struct ActionError: Decodable, Sendable, Equatable {
    /// `action_not_available` or `invalid_credentials`.
    public var code: PhotosError.Code
    /// For people.
    public var message: String
    /// For `action_not_available`: what the top screen accepts.
    public var allowed: [ActionName]?
}
