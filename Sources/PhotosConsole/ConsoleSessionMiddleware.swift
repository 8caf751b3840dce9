import HTTPTypes
import Hummingbird
import PhotosCore

/// Finds the operator's console session from its cookie for every page but the sign-in form and
/// the static files. Without one, a page asked for is redirected to the sign-in form and
/// anything else (a form posted, the event streams) is refused with `401`.
struct ConsoleSessionMiddleware: RouterMiddleware {
    typealias Context = ConsoleRequestContext

    let sessions: ConsoleSessions

    func handle(_ request: Request, context: Context, next: @concurrent (Request, Context) async throws -> Response) async throws -> Response {
        let path = request.uri.path
        // Outside /console nothing is served here (the router answers 404); the sign-in form and
        // the static files need no session.
        guard path == "/console" || path.hasPrefix("/console/"), path != "/console/sign-in", !path.hasPrefix("/console/assets/") else {
            return try await next(request, context)
        }
        var context = context
        if let cookie = ConsoleCookies.value(ConsoleCookies.session, in: request.headers), Self.isWellFormed(cookie) {
            context.session = try await sessions.session(cookie: cookie)
        }
        guard context.session != nil else {
            if request.method == .get && !path.hasSuffix("/live") && !path.hasSuffix("/status") {
                return Response(status: .seeOther, headers: [.location: "/console/sign-in"])
            }
            throw ConsoleRefusal(status: .unauthorized, message: "Your console session has ended: sign in again.")
        }
        return try await next(request, context)
    }

    /// A cookie value as the console makes them (base64url, bounded): anything else is not looked up.
    static func isWellFormed(_ value: String) -> Bool {
        (16...128).contains(value.utf8.count)
            && value.utf8.allSatisfy { $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") || (48...57).contains($0) || (65...90).contains($0) || (97...122).contains($0) }
    }
}
