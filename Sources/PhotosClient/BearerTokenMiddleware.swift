import Foundation
import HTTPTypes
import OpenAPIRuntime

/// Sends `Authorization: Bearer <token>` with every request of a generated `Client`: the token
/// API's sign-out and purchases, and the catalogue's `purchased` flags. (OpenAPI leaves the
/// `Authorization` header to security schemes, which generated clients do not fill in.)
///
/// ```swift
/// let client = Client(serverURL: url, transport: URLSessionTransport(), middlewares: [BearerTokenMiddleware(token: token)])
/// ```
public struct BearerTokenMiddleware: ClientMiddleware {
    /// The token from a sign-in (`POST /v1/auth/sign-in`, or a session's `submit`).
    public var token: String

    /// A middleware sending `token`.
    public init(token: String) { self.token = token }

    public func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        request.headerFields[.authorization] = "Bearer \(token)"
        return try await next(request, body, baseURL)
    }
}
