import Foundation
import Hummingbird
import Logging
import PhotosListener
import PhotosModel
import Synchronization

/// Logs each request once it is answered: the client's address (`ClientAddressMiddleware`),
/// method, path and status — never headers, bodies or
/// the query (which may carry passwords and tokens), and never a session id: the secret in
/// `Authorization` is the session's credential, but the id still names whose session a line is
/// about, so the log shows its short digest instead (`SessionIDs.logForm`).
struct RequestLogMiddleware<Context: ClientAddressContext>: RouterMiddleware {
    let level: Logger.Level

    func handle(_ request: Request, context: Context, next: @concurrent (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        do {
            let response = try await next(request, context)
            log(request, context, status: response.status.code, since: start)
            return response
        } catch {
            log(request, context, status: nil, since: start)
            throw error
        }
    }

    private func log(_ request: Request, _ context: Context, status: Int?, since start: ContinuousClock.Instant) {
        // Below the logger's level nothing is written: skip building the line (the path's
        // session digest is a SHA-256), which cost ~2 % of every request's CPU.
        guard level >= context.logger.logLevel else { return }
        var metadata: Logger.Metadata = [
            "client.address": .string(context.clientAddress),
            "http.method": .string(request.method.rawValue),
            "http.path": .string(Self.loggedPath(request.uri.path)),
        ]
        // The route the router matched (`/v1/sessions/{id}/actions`: no id in it), when one did.
        if let route = context.endpointPath { metadata["http.route"] = .string(route) }
        if let status { metadata["http.status"] = .stringConvertible(status) }
        // Until the answer's head is handed to the server (its body may still be streaming).
        let elapsed = ContinuousClock.now - start
        let milliseconds = Double(elapsed.components.seconds) * 1_000 + Double(elapsed.components.attoseconds) / 1e15
        metadata["durationMs"] = .stringConvertible((milliseconds * 1_000).rounded() / 1_000)
        context.logger.log(level: level, "request", metadata: metadata)
    }

    /// `path` with a session id replaced by its log form: `/v1/sessions/s-1a2b3c4d/actions`.
    /// Whatever the path's spelling: the listener merges repeated slashes before anything reads
    /// the path, and here `v1` and `sessions` are also recognised percent-encoded or in capitals
    /// (a path the router does not serve still carries what a client meant as an id).
    static func loggedPath(_ path: String) -> String {
        // The usual spelling, read without splitting the path (every session request's line).
        let prefix = "/v1/sessions/"
        if path.utf8.starts(with: prefix.utf8) {
            let rest = path.utf8.dropFirst(prefix.utf8.count)
            let idEnd = rest.firstIndex(of: UInt8(ascii: "/")) ?? rest.endIndex
            let tail = path.utf8[idEnd...]
            if idEnd > rest.startIndex, !zip(tail, tail.dropFirst()).contains(where: { $0 == UInt8(ascii: "/") && $1 == UInt8(ascii: "/") }) {
                return prefix + SessionLogForms.shared.logForm(Substring(path.utf8[rest.startIndex..<idEnd])) + Substring(tail)
            }
        }
        return loggedPathAnySpelling(path)
    }

    /// `loggedPath` for any spelling (capitals, percent-encoding, empty segments).
    static func loggedPathAnySpelling(_ path: String) -> String {
        var parts = path.split(separator: "/", omittingEmptySubsequences: true)
        func spells(_ part: Substring, _ word: String) -> Bool {
            part == word  // the usual spelling, without allocating
                || (part.contains("%") ? String(part).removingPercentEncoding ?? String(part) : String(part)).lowercased() == word
        }
        guard parts.count >= 3, spells(parts[0], "v1"), spells(parts[1], "sessions") else { return path }
        parts[2] = Substring(SessionIDs.logForm(parts[2]))
        return "/" + parts.joined(separator: "/") + (path.hasSuffix("/") ? "/" : "")
    }
}

/// The log forms of the sessions seen lately: a session's requests come again and again, and its
/// digest (a SHA-256) need not be computed for each. Bounded: forgotten whole when full.
final class SessionLogForms: Sendable {
    static let shared = SessionLogForms()
    private let known = Mutex<[Substring: String]>([:])
    static let capacity = 4_096

    /// `SessionIDs.logForm(id)`.
    func logForm(_ id: Substring) -> String {
        if let form = known.withLock({ $0[id] }) { return form }
        let form = SessionIDs.logForm(id)
        known.withLock { known in
            if known.count >= Self.capacity { known.removeAll(keepingCapacity: true) }
            known[id] = form
        }
        return form
    }
}
