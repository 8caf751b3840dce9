import Foundation
import HTTPTypes
import OpenAPIRuntime

/// Sends `Authorization: Session <sessionSecret>` on the requests of a generated `Client` that
/// act on a session: every path under `/v1/sessions/` (`getSession`, `act`, `sessionEvents`,
/// `sessionChanges`, and whatever the API adds there). The secret is the session's
/// credential: `POST /v1/sessions` returns it once, and every request on the session without it
/// is answered `401`. `NavigationDriver` uses one of these for you; use it yourself only with
/// the generated client:
///
/// ```swift
/// let secret = SessionSecretMiddleware(secret: created.value2.sessionSecret)
/// let client = Client(serverURL: url, transport: URLSessionTransport(), middlewares: [secret])
/// ```
public struct SessionSecretMiddleware: ClientMiddleware {
    /// Where the requests that need the secret go (creating a session, `POST /v1/sessions`, does not).
    static let sessionPaths = "/v1/sessions/"

    private let box: Box

    /// A middleware sending `secret` (nil: nothing until `set`).
    public init(secret: String? = nil) {
        self.box = Box(secret)
    }

    /// The secret sent from now on.
    public func set(_ secret: String?) {
        box.set(secret)
    }

    public func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        if request.path?.hasPrefix(Self.sessionPaths) == true, let secret = box.get() {
            request.headerFields[.authorization] = "Session \(secret)"
        }
        return try await next(request, body, baseURL)
    }

    /// The secret, shared by the copies of the middleware the client keeps.
    ///
    /// `@unchecked Sendable`: `value` is read and written only under `lock`. (An `NSLock`, not
    /// `Mutex`, which would raise the client's floor to iOS 18 and macOS 15.)
    private final class Box: @unchecked Sendable {
        private let lock = NSLock()
        private var value: String?
        init(_ value: String?) { self.value = value }
        func get() -> String? { lock.withLock { value } }
        func set(_ new: String?) { lock.withLock { value = new } }
    }
}
