import Foundation
import Navigation
import PhotosClientTesting
import PhotosModel
import Sessions

/// What the navigation tests drive: the session coordinator over a database, or the pure core
/// over `InMemorySessions`.
protocol SessionDriver: Sendable {
    func createSession(layout: SessionLayout, link: DeepLink?, actor: AuditActor) async throws -> ActionResult
    func session(id: String) async throws -> SessionView
    func events(sessionID: String, after: Int, limit: Int) async throws -> [AuditRow]
    func apply(_ action: ClientAction, to sessionID: String, expectVersion: Int?, idempotencyKey: String?, actor: AuditActor) async throws -> ActionResult
    func operatorSignIn(sessionID: String, username: String, actor: AuditActor) async throws -> ActionResult
    func operatorPurchase(sessionID: String, actor: AuditActor) async throws -> ActionResult
}

extension SessionDriver {
    func createSession(layout: SessionLayout = .stack, link: DeepLink? = nil) async throws -> ActionResult {
        try await createSession(layout: layout, link: link, actor: .client)
    }

    func apply(_ action: ClientAction, to sessionID: String) async throws -> ActionResult {
        try await apply(action, to: sessionID, expectVersion: nil, idempotencyKey: nil, actor: .client)
    }
}

extension SessionCoordinator: SessionDriver {
    func apply(_ action: ClientAction, to sessionID: String, expectVersion: Int?, idempotencyKey: String?, actor: AuditActor) async throws -> ActionResult {
        try await apply(action, to: sessionID, expectVersion: expectVersion, idempotencyKey: idempotencyKey, actor: actor, address: "local")
    }
}

extension InMemorySessions: SessionDriver {}
