/// Who took a step: the `actor` column of the audit trail.
public enum AuditActor: Sendable, Equatable, CustomStringConvertible {
    /// An app client through `photosd`.
    case client
    /// An operator through `photos-admin`, by login name.
    case `operator`(String)
    /// The server itself.
    case system

    public var description: String {
        switch self {
        case .client: "client"
        case .operator(let name): "operator:\(name)"
        case .system: "system"
        }
    }

    /// The reserved audit session id for steps this actor takes outside any client session.
    public var outOfSessionID: String {
        switch self {
        case .operator: AuditTrails.operatorSession
        case .client, .system: AuditTrails.apiSession
        }
    }
}
