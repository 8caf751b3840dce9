import HTTPTypes
import Hummingbird
import Foundation
import PhotosModel

/// The API's version: what a client says it speaks (`Photos-API-Version: N`, none = 1) and what
/// every `/v1` answer says it is in.
///
/// The rule (docs/api.md, "Versions"): a screen, action, outcome or field added in version N is
/// sent only to clients that speak N or later, so a client built against an older document
/// never meets a value it cannot decode. Version 1 is every value the API has today, so there
/// is nothing yet to leave out; the next value added is version 2 and is gated here. A client
/// that speaks a newer version than this server is answered in this server's (it knows the
/// older versions); a header that is not a whole number from 1 is a `400`.
enum APIVersion {
    /// The newest version this server speaks.
    static let current = 1
    /// The request and answer header.
    static let header = HTTPField.Name("Photos-API-Version")!

    /// The version to answer a request in, or nil when its header is malformed.
    static func negotiated(_ value: String?) -> Int? {
        guard let value else { return 1 }
        guard let asked = Int(value.trimmingCharacters(in: .whitespaces)), asked >= 1 else { return nil }
        return min(asked, current)
    }
}

/// Reads `Photos-API-Version` on `/v1` requests and names the version on their answers.
struct APIVersionMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: @concurrent (Request, Context) async throws -> Response) async throws -> Response {
        guard request.uri.path.hasPrefix("/v1/") else { return try await next(request, context) }
        guard let version = APIVersion.negotiated(request.headers[APIVersion.header]) else {
            var refused = APIResponse.error(.badRequest, "Photos-API-Version must be a whole number from 1 (this server speaks 1 to \(APIVersion.current))")
            refused.headers[APIVersion.header] = String(APIVersion.current)
            return refused
        }
        var response = try await next(request, context)
        response.headers[APIVersion.header] = String(version)
        return response
    }
}
