import Foundation
import HTTPTypes
import OpenAPIRuntime

/// Why an action or a session request did not go through, as a value an app can switch on
/// (never a raw body).
public enum NavigationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The top screen does not offer the action; `allowed` is what it offers that this client
    /// knows (an action a newer server added is left out, as in `Session.actions`). Nothing
    /// changed.
    case actionNotAvailable(allowed: [String], message: String)
    /// The session moved on since this client last saw it (another device, the operator); the
    /// action was not applied. The driver has caught up already: `caughtUp` are the commands
    /// that show the session as it is now (apply them, then let the user decide again).
    case versionConflict(message: String, caughtUp: [NavigationCommand])
    /// Wrong username or password. The session stays on sign-in.
    case invalidCredentials(message: String)
    /// The credential was refused: on a session's request, its secret (wrong, or the session
    /// is not there any more — `startOver()`); on the catalogue and token API, a bearer token
    /// (missing, expired or revoked). `message` says which.
    case unauthorized(message: String)
    /// No such session, photo or link target.
    case notFound(message: String)
    /// The session ended: it was idle longer than the server keeps sessions
    /// (`sessions.idleExpirySeconds`). Start a new one; nothing was changed.
    case sessionExpired(message: String)
    /// The request was malformed (a bad link, a missing parameter).
    case badRequest(message: String)
    /// A limit refused the request (sign-in attempts, sessions per address); try again after
    /// `retryAfter` seconds.
    case tooManyAttempts(retryAfter: Int?, message: String)
    /// Storage could not take the write, and retrying for as long as the policy allows did not
    /// help. Nothing was kept.
    case unavailable(retryAfter: Int?, message: String)
    /// The server could not be reached, and retrying with the same idempotency key did not help.
    /// The action may or may not have been applied: `refresh()` tells.
    case transport(message: String)
    /// The server failed (its log says why), or answered with a status or error code this
    /// client does not know.
    case server(status: Int, code: String?, message: String)
    /// photosd answered, but this client cannot read the answer: `operation` is the request
    /// (`createSession`, `act`, `getSession`, `sessionChanges`, …), `field` the value it could
    /// not read (`session.version`; `body` when the answer was not JSON at all). A newer server
    /// changed a field's shape: the request may well have been applied. The driver keeps a
    /// session just created (`sessionID`, `sessionSecret`, the `SessionStore`), never claims to
    /// have caught up with an answer it could not read, and its `changes()` ends with this error.
    case undecodable(operation: String, field: String, message: String)
    /// `send` was called before `start` or `attach`.
    case noSession
    /// The task that waited for the request was cancelled. The action may or may not have been
    /// applied: `refresh()` tells.
    case cancelled

    /// Whether the session ended on the server (`sessionExpired`): only a new session goes on.
    public var isSessionExpired: Bool {
        if case .sessionExpired = self { return true }
        return false
    }

    public var description: String {
        switch self {
        case .actionNotAvailable(let allowed, let message): "\(message) (allowed: \(allowed.joined(separator: ", ")))"
        case .versionConflict(let message, let caughtUp):
            "\(message); caught up\(caughtUp.isEmpty ? " (nothing changed on screen)" : ": " + caughtUp.map(\.description).joined(separator: ", "))"
        case .invalidCredentials(let message), .unauthorized(let message),
             .notFound(let message), .sessionExpired(let message), .badRequest(let message), .transport(let message):
            message
        case .tooManyAttempts(_, let message), .unavailable(_, let message): message
        case .server(let status, let code, let message): "HTTP \(status)\(code.map { " \($0)" } ?? ""): \(message)"
        case .undecodable(let operation, let field, let message): "cannot read photosd's answer to \(operation) at \(field): \(message)"
        case .noSession: "no session: start or attach one first"
        case .cancelled: "cancelled; the action may or may not have been applied (refresh to see)"
        }
    }
}

extension NavigationError {
    /// The error a call of the generated `Client` threw, in this type's terms and a few words:
    /// `transport` when no answer came (the server unreachable, the connection lost), `server`
    /// when an answer could not be read. A `NavigationError` is returned as it is.
    public init(_ error: any Error) {
        if let error = error as? NavigationError {
            self = error
        } else if NavigationDriver.isCancellation(error) {
            self = .cancelled
        } else if let error = error as? ClientError, NavigationDriver.isTransport(error) {
            self = .transport(message: "cannot reach photosd at \(error.baseURL?.absoluteString ?? "its URL"): \(error.underlyingError.localizedDescription)")
        } else if let error = error as? ClientError {
            let (field, message) = Self.unreadable(error.underlyingError)
            self = .undecodable(operation: error.operationID, field: field, message: message ?? error.causeDescription)
        } else {
            self = .server(status: 0, code: nil, message: "\(error)")
        }
    }
}

extension NavigationError {
    /// Which value of an answer could not be read (the coding path, as `session.tabs.items[0].tab`)
    /// and why, from a decoding error (the generated client's, or one wrapped in it).
    static func unreadable(_ error: any Error) -> (field: String, message: String?) {
        guard let decoding = error as? DecodingError else {
            // OpenAPIRuntime wraps the decoder's error in errors of its own, which say what they
            // hold only as a property named `underlyingError`.
            for child in Mirror(reflecting: error).children where child.label == "underlyingError" {
                if let inner = child.value as? any Error { return unreadable(inner) }
            }
            return ("body", nil)
        }
        let context: DecodingError.Context
        var path: [any CodingKey]
        switch decoding {
        case .typeMismatch(_, let found), .valueNotFound(_, let found), .dataCorrupted(let found):
            context = found
            path = found.codingPath
        case .keyNotFound(let key, let found):
            context = found
            path = found.codingPath + [key]
        @unknown default:
            return ("body", "\(decoding)")
        }
        var field = ""
        for key in path {
            if let index = key.intValue { field += "[\(index)]" } else { field += (field.isEmpty ? "" : ".") + key.stringValue }
        }
        return (field.isEmpty ? "body" : field, context.debugDescription)
    }
}
