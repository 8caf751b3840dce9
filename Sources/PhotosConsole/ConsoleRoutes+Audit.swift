import AuditTrail
import DatabaseAccess
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import PhotosCore
import PhotosModel
import Sessions

extension ConsoleRoutes {
    func addAuditRoutes(to router: Router<ConsoleRequestContext>) {
        router.get("/console/audit") { _, context in try await self.auditPage(context: context) }
        router.post("/console/audit/verify") { request, context in
            let session = try context.requireSession()
            try await ConsoleForm(request, context: context).requireCSRF(session.csrfToken)
            let audit = services.audit
            let key = try audit.trustedKey(explicit: nil)
            _ = verifier.start(by: session.operator.name) { progress in try await audit.verify(publicKey: key, progress: progress) }
            return ConsolePages.redirect("/console/audit")
        }
        router.get("/console/audit/verify/status") { _, context in
            _ = try context.requireSession()
            let status = verifier.current
            let data = try JSONSerialization.data(
                withJSONObject: ["running": status.running, "text": status.text, "outcome": status.outcome as Any], options: [.sortedKeys])
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: data)))
        }
    }

    private func auditPage(context: ConsoleRequestContext) async throws -> Response {
        let session = try context.requireSession()
        let checkpoint = try await services.database.read { try await ConsoleQueries.newestCheckpoint(on: $0) }
        let key = try services.audit.trustedKey(explicit: nil)
        let values: [String: Any] = [
            "checkpoint": checkpoint?.values as Any, "publicKey": key?.hex as Any, "verifyState": verifier.current.text,
            "verifyOutcome": verifier.current.outcome as Any,
        ]
        return pages.page("audit", title: "Audit", values: values, session: session)
    }
}
