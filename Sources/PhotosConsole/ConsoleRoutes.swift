import DatabaseAccess
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import PhotosCore
import PhotosListener
import PhotosModel
import Sessions

/// The console's routes, all under `/console`: sign-in and sign-out, the static files, and the
/// pages (sessions, a session, audit, funnel; see the `+` files).
struct ConsoleRoutes: Sendable {
    let services: PhotosServices
    /// The operators' sign-ins, with the console's own limits (its own counts: a name tried at
    /// the API's sign-in never uses up an operator's attempts, nor the other way round).
    let consoleSessions: ConsoleSessions
    let cookies: ConsoleCookies
    let pages: ConsolePages
    let verifier: BackgroundVerify
    /// The live streams each operator has open (at most 8 at once).
    let liveSlots = LiveStreamSlots(perKey: 8)
    let logger: Logger

    func add(to router: Router<ConsoleRequestContext>) {
        router.get("/console") { _, _ in ConsolePages.redirect("/console/sessions") }
        router.get("/console/assets/:name") { _, context in try self.asset(context.parameters.require("name")) }
        router.get("/console/sign-in") { request, context in self.signInForm(request, context: context, error: nil, status: .ok) }
        router.post("/console/sign-in") { request, context in try await self.signIn(request, context: context) }
        router.post("/console/sign-out") { request, context in try await self.signOut(request, context: context) }
        addSessionRoutes(to: router)
        addAuditRoutes(to: router)
        addFunnelRoutes(to: router)
    }

    // MARK: Static files

    private func asset(_ name: String) throws -> Response {
        guard let text = EmbeddedAssets.files[name] else { throw HTTPError(.notFound) }
        let type = name.hasSuffix(".js") ? "text/javascript; charset=utf-8" : name.hasSuffix(".css") ? "text/css; charset=utf-8" : "text/plain"
        return Response(
            status: .ok, headers: [.contentType: type, .cacheControl: "no-cache"],
            body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    // MARK: Signing in and out

    /// The form, with a fresh CSRF token in a cookie of its own and in the form (the two must
    /// match when it is posted: a page elsewhere can post the form but cannot read the cookie).
    private func signInForm(_ request: Request, context: ConsoleRequestContext, error: String?, status: HTTPResponse.Status, name: String = "") -> Response {
        let token = SecureToken.random(byteCount: 24)
        let cookie = cookies.setCookie(ConsoleCookies.signInForm, token, maxAge: 3_600)
        return pages.page(
            "sign-in", title: "Sign in", values: ["csrf": token, "error": error as Any, "name": name],
            session: nil, status: status, headers: [.setCookie: cookie])
    }

    private func signIn(_ request: Request, context: ConsoleRequestContext) async throws -> Response {
        let form = try await ConsoleForm(request, context: context)
        guard let expected = ConsoleCookies.value(ConsoleCookies.signInForm, in: request.headers) else {
            throw ConsoleRefusal(status: .forbidden, message: "The sign-in form has expired (or cookies are off): reload it and try again.")
        }
        try form.requireCSRF(expected)
        let name = form["username"] ?? "", password = form["password"] ?? ""
        guard !name.isEmpty, name.utf8.count <= 128, !password.isEmpty, password.utf8.count <= 1_024 else {
            return signInForm(request, context: context, error: "Give an operator name and a password.", status: .badRequest, name: String(name.prefix(128)))
        }
        let address = context.clientAddress
        let signedIn: (cookie: String, session: ConsoleSession)?
        do {
            signedIn = try await consoleSessions.signIn(name: name, password: password, address: address)
        } catch let error as PhotosError where error.code == .badRequest {
            // The API's password rule: bcrypt reads no further than a NUL or 72 bytes.
            return signInForm(request, context: context, error: "That password cannot be right: \(error.message).", status: .badRequest, name: name)
        } catch let error as PhotosError where error.code == .tooManyAttempts {
            logger.notice("console sign-in refused by a limit", metadata: ["address": "\(address)"])
            var response = signInForm(request, context: context, error: "Too many failed sign-ins: try again later.", status: .tooManyRequests, name: name)
            if let wait = error.retryAfter { response.headers[.retryAfter] = String(wait) }
            return response
        }
        guard let signedIn else {
            // The typed name stays out of the log: it may be a password typed into the wrong field.
            logger.notice("console sign-in failed", metadata: ["address": "\(address)"])
            return signInForm(request, context: context, error: "Wrong operator name or password.", status: .unauthorized, name: name)
        }
        logger.notice("console sign-in", metadata: ["operator": "\(signedIn.session.operator.name)", "address": "\(address)"])
        var headers = HTTPFields()
        headers.append(HTTPField(name: .setCookie, value: cookies.setCookie(ConsoleCookies.session, signedIn.cookie, maxAge: nil)))
        headers.append(HTTPField(name: .setCookie, value: cookies.setCookie(ConsoleCookies.signInForm, "", maxAge: 0)))
        return ConsolePages.redirect("/console/sessions", headers: headers)
    }

    private func signOut(_ request: Request, context: ConsoleRequestContext) async throws -> Response {
        let session = try context.requireSession()
        try await ConsoleForm(request, context: context).requireCSRF(session.csrfToken)
        if let cookie = ConsoleCookies.value(ConsoleCookies.session, in: request.headers) {
            try await consoleSessions.signOut(cookie: cookie, address: context.clientAddress)
        }
        logger.notice("console sign-out", metadata: ["operator": "\(session.operator.name)", "address": "\(context.clientAddress)"])
        return ConsolePages.redirect("/console/sign-in", headers: [.setCookie: cookies.setCookie(ConsoleCookies.session, "", maxAge: 0)])
    }

    // MARK: Shared

    /// Refuses a viewer: only the `operator` role acts on sessions.
    func requireOperatorRole(_ session: ConsoleSession) throws {
        guard session.operator.role == .operator else {
            throw ConsoleRefusal(status: .forbidden, message: "Your role (\(session.operator.role.rawValue)) may look but not act.")
        }
    }
}
