/// An error the services report to their callers, with the code the API and CLI show.
public struct PhotosError: Error, CustomStringConvertible, Sendable, Equatable {
    /// Machine-readable codes (docs/design.md, "The HTTP API").
    public enum Code: String, Sendable, Codable {
        case badRequest = "bad_request"
        case invalidCredentials = "invalid_credentials"
        case unauthorized = "unauthorized"
        case notFound = "not_found"
        case conflict = "conflict"
        case actionNotAvailable = "action_not_available"
        case versionConflict = "version_conflict"
        case payloadTooLarge = "payload_too_large"
        /// A request body that is not `application/json` (`415`).
        case unsupportedMediaType = "unsupported_media_type"
        case tooManyAttempts = "too_many_attempts"
        /// The session ended (idle past `sessions.idleExpirySeconds`): start a new one (`410`).
        case sessionExpired = "session_expired"
        /// Storage cannot take the request now (disk full, I/O error, lock held too long,
        /// writer overloaded); nothing of it was kept, and a retry may succeed (`503`).
        case unavailable = "unavailable"
        /// A fault of ours (`500`); details go to the log, never to the client.
        case `internal` = "internal"

        /// The HTTP status an answer with this code has (photosd's, and PhotosClientTesting's
        /// fake server's).
        public var httpStatus: Int {
            switch self {
            case .badRequest: 400
            case .invalidCredentials, .unauthorized: 401
            case .notFound: 404
            case .conflict, .actionNotAvailable, .versionConflict: 409
            case .payloadTooLarge: 413
            case .unsupportedMediaType: 415
            case .tooManyAttempts: 429
            case .sessionExpired: 410
            case .unavailable: 503
            case .internal: 500
            }
        }
    }

    /// The code.
    public let code: Code
    /// A sentence for people.
    public let message: String
    /// For a refusal that passes (`429`): seconds until a retry may succeed (`Retry-After`).
    public let retryAfter: Int?

    /// Creates an error.
    public init(_ code: Code, _ message: String, retryAfter: Int? = nil) {
        self.code = code
        self.message = message
        self.retryAfter = retryAfter
    }

    public var description: String { message }

    /// `bad_request` with `message`.
    public static func badRequest(_ message: String) -> PhotosError { PhotosError(.badRequest, message) }
    /// `not_found` with `message`.
    public static func notFound(_ message: String) -> PhotosError { PhotosError(.notFound, message) }
    /// `unauthorized` with `message`.
    public static func unauthorized(_ message: String) -> PhotosError { PhotosError(.unauthorized, message) }
    /// `too_many_attempts` (`429`) with `message`, retryable after `retryAfter` seconds.
    public static func tooManyRequests(_ message: String, retryAfter: Int) -> PhotosError {
        PhotosError(.tooManyAttempts, message, retryAfter: max(retryAfter, 1))
    }
    /// `invalid_credentials`: the same message for an unknown user and a wrong password.
    public static let invalidCredentials = PhotosError(.invalidCredentials, "invalid username or password")
}
