import Foundation
import Hummingbird
import Navigation
import PhotosCore

/// The JSON error body of DESIGN §4: `{"error": {"code", "message", "allowed"?}}`.
struct ErrorBody: Encodable {
    struct Detail: Encodable {
        let code: String
        let message: String
        let allowed: [String]?
    }
    let error: Detail
}

extension PhotosError.Code {
    /// The HTTP status for this code.
    var status: HTTPResponse.Status {
        switch self {
        case .badRequest: .badRequest
        case .invalidCredentials, .unauthorized: .unauthorized
        case .notFound: .notFound
        case .conflict, .actionNotAvailable, .versionConflict: .conflict
        case .payloadTooLarge: .contentTooLarge
        case .tooManyAttempts: .tooManyRequests
        }
    }
}

enum APIResponse {
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// A JSON response.
    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) throws -> Response {
        var fields = headers
        fields[.contentType] = "application/json; charset=utf-8"
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: try encoder.encode(value))))
    }

    /// A JSON response from text already encoded (the hand-written hot-path encoders).
    static func json(text: String, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        var fields = headers
        fields[.contentType] = "application/json; charset=utf-8"
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    /// The error body for `code` and `message`.
    static func error(_ code: PhotosError.Code, _ message: String, allowed: [String]? = nil, status: HTTPResponse.Status? = nil) -> Response {
        let body = ErrorBody(error: .init(code: code.rawValue, message: message, allowed: allowed))
        // Encoding three strings cannot fail; fall back to a fixed body all the same.
        return (try? json(body, status: status ?? code.status))
            ?? Response(status: .internalServerError, body: .init(byteBuffer: ByteBuffer(string: #"{"error":{"code":"internal","message":"internal error"}}"#)))
    }
}

/// Turns every error into the JSON error body with the right status, so no client ever sees
/// an empty 500 for bad input. Unexpected errors are logged (without request bodies) and
/// answered `500 internal`.
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as PhotosError {
            return APIResponse.error(error.code, error.message)
        } catch let error as HTTPError {
            switch error.status {
            case .notFound:
                return APIResponse.error(.notFound, "no route for \(request.method) \(request.uri.path)")
            case .contentTooLarge:
                return APIResponse.error(.payloadTooLarge, "request body too large")
            case .methodNotAllowed:
                return APIResponse.error(.notFound, "no route for \(request.method) \(request.uri.path)", status: .methodNotAllowed)
            default:
                let code: PhotosError.Code = error.status.code < 500 ? .badRequest : .conflict
                return APIResponse.error(code, error.body ?? error.status.reasonPhrase, status: error.status)
            }
        } catch {
            context.logger.error("unexpected error", metadata: ["error.type": "\(type(of: error))", "error": "\(error)"])
            let body = ErrorBody(error: .init(code: "internal", message: "internal error", allowed: nil))
            return (try? APIResponse.json(body, status: .internalServerError)) ?? Response(status: .internalServerError)
        }
    }
}
