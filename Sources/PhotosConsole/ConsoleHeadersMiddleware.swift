import HTTPTypes
import Hummingbird

/// Sends every console response with the headers that keep it to itself: a strict
/// `Content-Security-Policy` (scripts, styles and images only from the console, no inline
/// script, no framing, forms only to the console), `X-Frame-Options: DENY`,
/// `Referrer-Policy: no-referrer`, `X-Content-Type-Options: nosniff`, and `Cache-Control:
/// no-store` (pages show operators' data). Errors thrown by a route are turned into a page here
/// too, so they carry the same headers.
struct ConsoleHeadersMiddleware: RouterMiddleware {
    typealias Context = ConsoleRequestContext

    static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
        + "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

    let pages: ConsolePages

    func handle(_ request: Request, context: Context, next: @concurrent (Request, Context) async throws -> Response) async throws -> Response {
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as HTTPResponseError {
            response = pages.errorPage(status: error.status, message: Self.message(error), session: context.session)
        } catch let error as ConsoleRefusal {
            response = pages.errorPage(status: error.status, message: error.message, session: context.session)
        } catch {
            response = pages.errorPage(status: .internalServerError, message: "The console could not do this: \(error)", session: context.session)
        }
        if response.headers[.contentSecurityPolicy] == nil {
            response.headers[.contentSecurityPolicy] = Self.contentSecurityPolicy
        }
        response.headers[.xFrameOptions] = "DENY"
        response.headers[.referrerPolicy] = "no-referrer"
        response.headers[.xContentTypeOptions] = "nosniff"
        if response.headers[.cacheControl] == nil { response.headers[.cacheControl] = "no-store" }
        return response
    }

    private static func message(_ error: any HTTPResponseError) -> String {
        switch error.status {
        case .notFound: "There is no such page."
        case .unauthorized: "Sign in first."
        case .forbidden: "Your role may not do this."
        default: "The request was refused (\(error.status.code))."
        }
    }
}

/// A console request refused with a page that says why.
struct ConsoleRefusal: Error {
    let status: HTTPResponse.Status
    let message: String
}

extension HTTPField.Name {
    static var xFrameOptions: Self { Self("X-Frame-Options")! }
    static var referrerPolicy: Self { Self("Referrer-Policy")! }
    static var xContentTypeOptions: Self { Self("X-Content-Type-Options")! }
}

/// Refuses every console request with `503` until photosd is ready to serve.
struct ConsoleReadyMiddleware: RouterMiddleware {
    typealias Context = ConsoleRequestContext

    let isReady: @Sendable () -> Bool

    func handle(_ request: Request, context: Context, next: @concurrent (Request, Context) async throws -> Response) async throws -> Response {
        guard isReady() else {
            throw ConsoleRefusal(status: .serviceUnavailable, message: "photosd is starting: try again in a moment.")
        }
        return try await next(request, context)
    }
}
