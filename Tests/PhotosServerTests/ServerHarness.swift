import Foundation
import Hummingbird
import HummingbirdTesting
import Navigation
import PhotosCore
@testable import PhotosServer
import PhotosTestSupport
import SQLiteStore
import Testing

/// A temporary database with the demo photos (1–5) and users alice and bob, and the
/// configuration to build an application over it.
struct ServerHarness {
    let directory: TemporaryDirectory
    var configuration: PhotosConfiguration
    static let password = "correct horse"

    static func make(_ adjust: (inout PhotosConfiguration) -> Void = { _ in }) async throws -> ServerHarness {
        let directory = try TemporaryDirectory()
        var configuration = PhotosConfiguration()
        configuration.databasePath = directory.file("photos.db")
        configuration.bcryptCost = 4
        configuration.durability = .normal
        configuration.seedDemoData = true
        configuration.port = 0
        configuration.auditSigningKeyPath = directory.file("audit-signing.key")
        adjust(&configuration)
        let database = try PhotosDatabase.open(path: configuration.databasePath)
        let auth = AuthService(database: database, bcryptCost: 4)
        for name in ["alice", "bob"] { _ = try await auth.createUser(username: name, password: password, actor: testOperator) }
        database.close()
        return ServerHarness(directory: directory, configuration: configuration)
    }

    func close() { directory.remove() }

    /// Runs `body` against the application through HummingbirdTesting's router framework.
    func test(_ body: @escaping @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        let app = try await buildApplication(configuration: configuration)
        try await app.test(.router) { client in try await body(client) }
    }

    /// Reads the database directly.
    func query(_ sql: String) throws -> [Row] {
        let connection = try Connection(path: configuration.databasePath, mode: .readOnly)
        defer { connection.close() }
        return try connection.query(sql)
    }
}

extension TestResponse {
    /// The body as a JSON object.
    var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(buffer: body))) as? [String: Any] ?? [:]
    }

    var text: String { String(buffer: body) }

    /// `error.code` of an error body.
    var errorCode: String? { (json["error"] as? [String: Any])?["code"] as? String }
}

extension TestClientProtocol {
    func post(_ uri: String, _ body: String, headers: HTTPFields = [.contentType: "application/json"]) async throws -> TestResponse {
        try await execute(uri: uri, method: .post, headers: headers, body: ByteBuffer(string: body))
    }

    func get(_ uri: String, headers: HTTPFields = [:]) async throws -> TestResponse {
        try await execute(uri: uri, method: .get, headers: headers)
    }

    func newSession() async throws -> String {
        let response = try await execute(uri: "/v1/sessions", method: .post)
        return response.json["id"] as? String ?? ""
    }

    func act(_ id: String, _ body: String, headers: HTTPFields = [.contentType: "application/json"]) async throws -> TestResponse {
        try await post("/v1/sessions/\(id)/actions", body, headers: headers)
    }
}

/// The top screen of a session object (or of `session` inside an action response).
func topScreen(_ json: [String: Any]) -> String? {
    let session = (json["session"] as? [String: Any]) ?? json
    return (session["top"] as? [String: Any])?["screen"] as? String
}
