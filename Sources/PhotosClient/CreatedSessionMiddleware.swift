import Foundation
import HTTPTypes
import OpenAPIRuntime

/// Keeps the id and secret of the session `POST /v1/sessions` just created, read from the raw
/// answer before the generated client decodes it: when a newer server's answer cannot be
/// decoded as a whole (`NavigationError.undecodable`), the session exists on the server all
/// the same, and its secret — shown once — must not be lost with the answer.
struct CreatedSessionMiddleware: ClientMiddleware {
    /// The longest answer read (a session's description is a few kilobytes).
    static let maxAnswerBytes = 1 << 20

    private let box = Box()

    /// The session the last `createSession` answer named, taken (the next call returns nil).
    func take() -> (id: String, secret: String)? { box.take() }

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let (response, answer) = try await next(request, body, baseURL)
        guard operationID == "createSession", response.status == .created, let answer else { return (response, answer) }
        let data = try await Data(collecting: answer, upTo: Self.maxAnswerBytes)
        if let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
           let id = object["id"] as? String, let secret = object["sessionSecret"] as? String {
            box.keep((id, secret))
        }
        return (response, HTTPBody(data))
    }

    /// The kept session, shared by the copies of the middleware the client keeps.
    ///
    /// `@unchecked Sendable`: `value` is read and written only under `lock` (an `NSLock`: see
    /// `SessionSecretMiddleware`).
    private final class Box: @unchecked Sendable {
        private let lock = NSLock()
        private var value: (id: String, secret: String)?
        func keep(_ new: (id: String, secret: String)) { lock.withLock { value = new } }
        func take() -> (id: String, secret: String)? {
            lock.withLock {
                defer { value = nil }
                return value
            }
        }
    }
}
