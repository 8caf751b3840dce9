import Hummingbird
import Sessions

/// The session routes' one check: a request to `/v1/sessions/{id}…` carries that session's
/// secret (`Authorization: Session <secret>`), or it is answered `401` before any handler runs.
/// The handlers read the authorized id from the context (`authorizedSession()`).
struct SessionAuthorization: RouterMiddleware {
    let sessions: SessionCoordinator

    func handle(
        _ request: Request, context: PhotosRequestContext, next: @concurrent (Request, PhotosRequestContext) async throws -> Response
    ) async throws -> Response {
        let id = try RequestParsing.sessionID(context)
        try await sessions.authorize(sessionID: id, secret: try RequestParsing.sessionSecret(request))
        var context = context
        context.authorizedSessionID = id
        return try await next(request, context)
    }
}
