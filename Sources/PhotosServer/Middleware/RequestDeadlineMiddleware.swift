import DatabaseAccess
import Hummingbird

/// Starts the request's database budget (`RequestDeadline`): every storage operation the
/// request runs shares one `database.statementTimeoutSeconds` bound instead of one each, so an
/// action (a read, then a write) is answered `503` within the bound as a whole.
struct RequestDeadlineMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: @concurrent (Request, Context) async throws -> Response) async throws -> Response {
        try await RequestDeadline.$startedAt.withValue(.now) { try await next(request, context) }
    }
}
