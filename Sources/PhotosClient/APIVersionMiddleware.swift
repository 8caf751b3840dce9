import Foundation
import HTTPTypes
import OpenAPIRuntime

/// Sends `Photos-API-Version` with every request: the version of the API document this client
/// was generated from. The server never sends it a screen, action, outcome or field of a later
/// version; and what a newer server sends anyway decodes as `unknown` (the open sets).
/// `NavigationDriver` adds it for you; add it yourself to a `Client` you make.
public struct APIVersionMiddleware: ClientMiddleware {
    /// The version of docs/openapi.yaml this client speaks.
    public static let version = 1
    /// The header's name.
    public static let header = HTTPField.Name("Photos-API-Version")!

    public init() {}

    public func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        request.headerFields[Self.header] = String(Self.version)
        return try await next(request, body, baseURL)
    }
}
