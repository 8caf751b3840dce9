import Hummingbird
import Logging
import PhotosModel

/// Logs each request once it is answered: method, path and status — never headers, bodies or
/// the query (which may carry passwords and tokens), and never a session id: the id in
/// `/v1/sessions/{id}/…` is the only credential for its session, so the log shows its short
/// digest instead (`SessionIDs.logForm`).
struct RequestLogMiddleware<Context: RequestContext>: RouterMiddleware {
    let level: Logger.Level

    func handle(_ request: Request, context: Context, next: @concurrent (Request, Context) async throws -> Response) async throws -> Response {
        do {
            let response = try await next(request, context)
            log(request, context, status: response.status.code)
            return response
        } catch {
            log(request, context, status: nil)
            throw error
        }
    }

    private func log(_ request: Request, _ context: Context, status: Int?) {
        // Below the logger's level nothing is written: skip building the line (the path's
        // session digest is a SHA-256), which cost ~2 % of every request's CPU.
        guard level >= context.logger.logLevel else { return }
        var metadata: Logger.Metadata = [
            "http.method": .string(request.method.rawValue),
            "http.path": .string(Self.loggedPath(request.uri.path)),
        ]
        if let status { metadata["http.status"] = .stringConvertible(status) }
        context.logger.log(level: level, "request", metadata: metadata)
    }

    /// `path` with a session id replaced by its log form: `/v1/sessions/s-1a2b3c4d/actions`.
    static func loggedPath(_ path: String) -> String {
        var parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count >= 4, parts[1] == "v1", parts[2] == "sessions", !parts[3].isEmpty else { return path }
        parts[3] = Substring(SessionIDs.logForm(parts[3]))
        return parts.joined(separator: "/")
    }
}
