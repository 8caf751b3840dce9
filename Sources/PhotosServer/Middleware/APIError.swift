import Foundation
import Hummingbird
import Logging
import Navigation
import PhotosCore
import PhotosModel
import Sessions

/// The JSON error body of docs/design.md, "The HTTP API": `{"error": {"code", "message", "allowed"?}}`.
struct ErrorBody: Encodable {
    struct Detail: Encodable {
        let code: String
        let message: String
        let allowed: [String]?
    }
    let error: Detail
}

extension PhotosError.Code {
    /// The HTTP status for this code (`httpStatus`, PhotosModel's rule).
    var status: HTTPResponse.Status { HTTPResponse.Status(code: httpStatus) }
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
/// an empty 500 for bad input.
///
/// A storage failure that can pass (disk full, I/O error, lock held too long) is
/// `503 unavailable` with `Retry-After`, logged once per episode (`StorageHealth`). Anything
/// unexpected — a corrupt session state, a bug — is logged (never with request bodies) and
/// answered `500 internal` without its details.
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    let storage: StorageHealth

    /// Seconds a client is asked to wait before retrying after a `503`.
    static var retryAfterSeconds: Int { 1 }

    func handle(_ request: Request, context: Context, next: @concurrent (Request, Context) async throws -> Response) async throws -> Response {
        do {
            let response = try await next(request, context)
            if request.method == .post && response.status.code < 500 { storage.succeeded() }
            return response
        } catch let error as PhotosError {
            if error.code == .unavailable { return Self.unavailable(error) }
            var response = APIResponse.error(error.code, error.message)
            if let retryAfter = error.retryAfter { response.headers[.retryAfter] = String(retryAfter) }
            return response
        } catch let error as ClientDisconnected {
            // The client went away (or was cut off) mid-body: nobody reads this answer, and one
            // log line per such client would let anyone flood the error log.
            context.logger.debug("client disconnected during the request body", metadata: ["error": "\(error.underlying)"])
            return APIResponse.error(.badRequest, "the request body did not arrive")
        } catch let error as HTTPError {
            switch error.status {
            case .notFound:
                return APIResponse.error(.notFound, "no route for \(request.method) \(request.uri.path)")
            case .contentTooLarge:
                return APIResponse.error(.payloadTooLarge, "request body too large")
            case .methodNotAllowed:
                return APIResponse.error(.notFound, "no route for \(request.method) \(request.uri.path)", status: .methodNotAllowed)
            default:
                let code: PhotosError.Code = switch error.status.code {
                case ..<500: .badRequest
                case 503: .unavailable
                default: .internal
                }
                return APIResponse.error(code, error.body ?? error.status.reasonPhrase, status: error.status)
            }
        } catch {
            if let unavailable = PhotosError.unavailable(from: error) {
                storage.failed(error)
                return Self.unavailable(unavailable)
            }
            context.logger.error("unexpected error", metadata: ["error.type": "\(type(of: error))", "error": "\(error)"])
            return APIResponse.error(.internal, "internal error")
        }
    }

    /// `503` with the error body and `Retry-After`.
    static func unavailable(_ error: PhotosError) -> Response {
        var response = APIResponse.error(.unavailable, error.message)
        response.headers[.retryAfter] = String(retryAfterSeconds)
        return response
    }
}
