import AuditTrail
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import Navigation
import PhotosCore
import PhotosListener
import PhotosModel
import Sessions
import DatabaseAccess

/// The HTTP routes (docs/openapi.yaml; a test holds `router.routes` against it).
extension PhotosAPI {
    func addRoutes(to router: Router<PhotosRequestContext>) {
        let api = self
        // Liveness: the process answers. Readiness: it can do its work now (`Readiness`).
        router.on("/healthz", method: .get) { _, _ in try APIResponse.json(HealthResponse(status: "ok")) }
        router.on("/readyz", method: .get) { _, _ in
            let report = await api.readiness.check()
            guard let failed = report.failed else { return try APIResponse.json(HealthResponse(status: "ready")) }
            return try APIResponse.json(
                UnreadyResponse(check: failed.rawValue, error: .init(code: PhotosError.Code.unavailable.rawValue, message: report.reason)),
                status: .serviceUnavailable, headers: [.retryAfter: "1"])
        }

        router.on("/v1/sessions", method: .post) { request, context in
            if let wait = api.sessionsPerAddress.admit(context.clientAddress) {
                throw PhotosError.tooManyRequests("too many sessions created from this address; retry in \(wait.roundedUpSeconds) s", retryAfter: wait.roundedUpSeconds)
            }
            let body = try await RequestParsing.decode(NewSessionRequest.self, from: request, limit: api.bodyLimit, allowEmpty: true)
            let layout = try body.layout.map(SessionLayout.init(parsing:)) ?? .stack
            let result = try await api.sessions.createSession(layout: layout, link: try body.link.map(DeepLink.init(parsing:)))
            return APIResponse.json(
                text: result.session.jsonText(sessionSecret: result.sessionSecret ?? ""), status: .created,
                headers: [.location: "/v1/sessions/\(result.session.id)"])
        }
        // Everything under a session: only with its secret (one middleware checks it).
        let session = router.group("/v1/sessions/:id").add(middleware: SessionAuthorization(sessions: api.sessions))
        session.on("", method: .get) { _, context in
            APIResponse.json(text: try await api.sessions.session(id: try context.authorizedSession()).jsonText)
        }
        session.on("actions", method: .post) { request, context in
            try await api.act(request, sessionID: try context.authorizedSession(), address: context.clientAddress)
        }
        // The change feed, by long polling: answers the session as soon as its version passes
        // `after` (a change from another device, an operator), else after `wait` seconds as it
        // is. A client resumes after a reconnect by sending the version it last saw.
        session.on("changes", method: .get) { request, context in
            let id = try context.authorizedSession()
            let after = try RequestParsing.queryInt(request, "after", default: 0, range: 0...Int(Int32.max))
            let wait = try RequestParsing.queryInt(request, "wait", default: SessionChanges.maxWaitSeconds, range: 0...SessionChanges.maxWaitSeconds)
            // A place among the address's long polls, given back however the poll ends.
            let address = context.clientAddress
            guard api.longPolls.take(address) else {
                // Refused with `Connection: close`: a refused poll must not keep its connection
                // (a client retrying on it would hold the listener's connections while it waits).
                var refused = APIResponse.error(
                    .tooManyAttempts, "\(api.longPolls.perKey) change-feed waits are open from this address; retry in \(max(1, wait)) s")
                refused.headers[.retryAfter] = String(max(1, wait))
                refused.headers[.connection] = "close"
                return refused
            }
            defer { api.longPolls.release(address) }
            let session = try await ClientGone.unlessClosed(context.connectionClosed) {
                try await api.changes.wait(for: id, after: after, wait: .seconds(wait), version: \.version) {
                    // Each read has the database's whole budget (database.statementTimeoutSeconds),
                    // not what is left of the request's after a wait.
                    try await RequestDeadline.$startedAt.withValue(.now) { try await api.sessions.session(id: id) }
                }
            }
            return APIResponse.json(text: session.jsonText)
        }
        session.on("events", method: .get) { request, context in
            let id = try context.authorizedSession()
            let after = try RequestParsing.queryInt(request, "after", default: 0, range: 0...Int(Int32.max))
            let limit = try RequestParsing.queryInt(request, "limit", default: 100, range: 1...1_000)
            return try APIResponse.json(EventsResponse(events: try await api.sessions.events(sessionID: id, after: after, limit: limit)))
        }

        // A receipt: at most `receipts.maxRows` of the session's rows (the newest, or from
        // `?fromSeq=N`), an inclusion proof of the last of them, the checkpoint's note.
        session.on("receipt", method: .get) { request, context in
            let id = try context.authorizedSession()
            let fromSeq = request.uri.queryParameters["fromSeq"] == nil ? nil : try RequestParsing.queryInt(request, "fromSeq", default: 1, range: 1...Int(Int32.max))
            let range = AuditReceipts.Range(fromSeq: fromSeq, maxRows: api.receiptsMaxRows)
            let audit = api.services.audit
            let served = try await api.receipts.serve(.init(sessionID: id, fromSeq: fromSeq), stamp: try await audit.receiptStamp(sessionID: id)) {
                let outcome: AuditReceipts.Outcome
                do {
                    outcome = try await audit.receipt(sessionID: id, range: range)
                } catch let past as AuditReceipts.PastTheEnd {
                    throw PhotosError.badRequest("\(past)")
                }
                guard case .receipt(let receipt) = outcome else { return .other(outcome) }
                return .receipt(Array(try APIResponse.encoder.encode(receipt)))
            }
            let outcome: AuditReceipts.Outcome
            switch served {
            case .receipt(let bytes):
                return Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
            case .other(let other):
                outcome = other
            }
            switch outcome {
            case .receipt(let receipt):
                return try APIResponse.json(receipt)
            case .pending:
                let wait = api.checkpointIntervalSeconds
                return try APIResponse.json(ReceiptPending(retryAfter: wait), status: .accepted, headers: [.retryAfter: String(wait)])
            case .notFound:
                throw PhotosError.notFound("session \(id) has no audit rows in this database (an archived session's receipt: photos-admin audit prove --archive)")
            case .notIntact(let damage):
                context.logger.error("refusing a receipt: \(damage)")
                throw PhotosError(.conflict, "this session's audit trail does not end where the session recorded it: no receipt is served (the operator is told)")
            }
        }

        // The transparency log, public unless `log.public` is false: no personal data in either.
        router.on("/v1/log/checkpoint", method: .get) { _, _ in
            guard api.logPublic else { throw PhotosError.notFound("the transparency log is not served here (log.public is false)") }
            guard let note = try await api.services.audit.newestCheckpointNote() else {
                throw PhotosError.notFound("no checkpoint has signed the log yet; the first comes within audit.checkpointIntervalSeconds of the first row")
            }
            return Response(status: .ok, headers: [.contentType: "text/plain; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: note)))
        }
        router.on("/v1/log/rotations", method: .get) { _, _ in
            guard api.logPublic else { throw PhotosError.notFound("the transparency log is not served here (log.public is false)") }
            // The notes, oldest first, a blank line between two (empty: the key was never rotated).
            let notes = try await api.services.audit.rotationNotes()
            return Response(
                status: .ok, headers: [.contentType: "text/plain; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: notes.joined(separator: "\n"))))
        }
        router.on("/v1/log/consistency", method: .get) { request, _ in
            guard api.logPublic else { throw PhotosError.notFound("the transparency log is not served here (log.public is false)") }
            let from = try RequestParsing.queryInt(request, "from", default: -1, range: -1...Int.max)
            let to = try RequestParsing.queryInt(request, "to", default: -1, range: -1...Int.max)
            guard from >= 1, to >= 1 else { throw PhotosError.badRequest("from and to are required: the two tree sizes, 1 ≤ from ≤ to") }
            let proof = try await api.services.audit.consistency(from: Int64(from), to: Int64(to))
            return try APIResponse.json(ConsistencyResponse(from: Int64(from), to: Int64(to), hashes: proof.map { Data($0).base64EncodedString() }))
        }

        router.on("/v1/photos", method: .get) { request, _ in
            let after = try RequestParsing.queryInt(request, "after", default: 0, range: 0...Int(Int32.max))
            let limit = try RequestParsing.queryInt(request, "limit", default: 50, range: 1...500)
            let user = try await api.bearerUser(request)
            // One more than asked: `nextAfter` only when there is a next page (a page exactly
            // full of the last photos says null, not a cursor to an empty page).
            let fetched = try await api.catalog.list(limit: limit + 1, afterID: Int64(after))
            let photos = Array(fetched.prefix(limit))
            let owned = try await api.owned(by: user)
            return try APIResponse.json(PhotosResponse(
                photos: photos.map { api.response($0, owned: owned, signedIn: user != nil) },
                nextAfter: fetched.count > limit ? photos.last?.id : nil))
        }
        router.on("/v1/photos/:photoId", method: .get) { request, context in
            let id = try RequestParsing.pathID(context, "photoId")
            let user = try await api.bearerUser(request)
            guard let photo = try await api.catalog.photo(id: id) else { throw PhotosError.notFound("no photo with id \(id)") }
            return try APIResponse.json(api.response(photo, owned: try await api.owned(by: user), signedIn: user != nil))
        }

        router.on("/v1/auth/sign-in", method: .post) { request, context in
            let body = try await RequestParsing.decode(SignInRequest.self, from: request, limit: api.bodyLimit)
            return try await api.signIn(username: body.username, password: body.password, address: context.clientAddress)
        }
        router.on("/v1/auth/sign-out", method: .post) { request, _ in
            let (_, token) = try await api.requireUser(request)
            let user = try await api.auth.signOut(token: token, actor: .client)
            return try APIResponse.json(SignOutResponse(signedOut: true, user: UserBody(user)))
        }
        router.on("/v1/me/purchases", method: .get) { request, _ in
            let (user, _) = try await api.requireUser(request)
            let purchases = try await api.purchases.purchases(userID: user.id)
            return try APIResponse.json(PurchasesResponse(purchases: purchases.map {
                PurchaseResponse(photoId: $0.photoID, priceCents: $0.priceCents, purchasedAt: ISO8601Timestamp.wholeSeconds($0.purchasedAt))
            }))
        }
    }

    func response(_ photo: Photo, owned: Set<Int64>, signedIn: Bool) -> PhotoResponse {
        PhotoResponse(id: photo.id, title: photo.title, url: photo.url, priceCents: photo.priceCents, purchased: signedIn ? owned.contains(photo.id) : nil)
    }

    func owned(by user: User?) async throws -> Set<Int64> {
        guard let user else { return [] }
        return Set(try await purchases.purchases(userID: user.id).map(\.photoID))
    }

    /// `POST /v1/sessions/{id}/actions`.
    func act(_ request: Request, sessionID: String, address: String) async throws -> Response {
        let body = try await RequestParsing.decode(ActionBody.self, from: request, limit: bodyLimit, fastPath: ActionBody.fastParse)
        guard let name = ActionName(rawValue: body.action) else {
            throw PhotosError.badRequest("unknown action \"\(body.action.prefix(40))\"; actions are \(ActionName.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        let action = ClientAction(
            name, photoId: body.photoId, username: body.username, password: body.password,
            tab: try body.tab.map(TabName.init(parsing:)), link: try body.link.map(DeepLink.init(parsing:)))
        let key = request.headers[HTTPFields.idempotencyKey]
        let result = try await sessions.apply(action, to: sessionID, expectVersion: body.expectVersion, idempotencyKey: key, actor: .client, address: address)
        metrics.record(result)
        if let error = result.error {
            return APIResponse.error(error.code, error.message, allowed: error.allowed?.map(\.rawValue))
        }
        return APIResponse.json(text: result.jsonText)
    }

    /// `POST /v1/auth/sign-in`.
    func signIn(username: String, password: String, address: String) async throws -> Response {
        let (user, issued) = try await auth.signIn(username: username, password: password, address: address, actor: .client)
        return try APIResponse.json(SignInResponse(token: issued.token, expiresAt: ISO8601Timestamp.wholeSeconds(issued.expiresAt), user: UserBody(user)))
    }
}

extension Duration {
    /// Whole seconds, rounded up (a `Retry-After`).
    var roundedUpSeconds: Int {
        let (seconds, attoseconds) = components
        return Int(seconds) + (attoseconds > 0 ? 1 : 0)
    }
}
