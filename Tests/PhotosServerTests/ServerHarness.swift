import DatabaseAccess
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Hummingbird
import HummingbirdTesting
import Logging
import Navigation
import NIOFoundationEssentialsCompat
import PhotosCore
import PhotosStorage
@testable import PhotosServer
import PhotosTestSupport
import SQLiteStore
import Synchronization
import Testing
import PhotosModel
import Sessions

/// A temporary database with the demo photos (1–5) and users alice and bob, and the
/// configuration to build an application over it.
struct ServerHarness {
    let directory: TemporaryDirectory
    var configuration: PhotosConfiguration
    /// The PostgreSQL database (nil on SQLite), dropped at `close`.
    let postgres: PostgresTestDatabase?
    static let password = "correct horse"

    /// The application's logger in tests: warnings and worse, so that a failing test's own report
    /// is not buried under request lines (`PHOTOSD_TEST_LOG_LEVEL=debug` to see everything).
    static var logger: Logger {
        var logger = Logger(label: "photosd")
        logger.logLevel = ProcessInfo.processInfo.environment["PHOTOSD_TEST_LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .warning
        return logger
    }

    static func make(_ store: TestStore = .sqlite, _ adjust: (inout PhotosConfiguration) -> Void = { _ in }) async throws -> ServerHarness {
        let directory = try TemporaryDirectory()
        var configuration = PhotosConfiguration()
        let postgres = store == .postgres ? try await PostgresTestDatabase.create() : nil
        configuration.databasePath = postgres?.url() ?? directory.file("photos.db")
        configuration.maxConnections = 8
        // On PostgreSQL, the wait for a pool connection (and a statement) is the statement
        // timeout: 3 s by default, which the full suite's hundred tests in parallel on two cores
        // outran now and then (a token sign-in answered 503). The tests that are about the
        // timeout set their own.
        if postgres != nil { configuration.statementTimeoutSeconds = 10 }
        configuration.bcryptCost = 4
        configuration.durability = .normal
        configuration.seedDemoData = true
        configuration.port = 0
        configuration.consolePort = 0
        configuration.metricsPort = 0
        configuration.auditSigningKeyPath = directory.file("audit-signing.key")
        adjust(&configuration)
        let database = try await PhotosDatabase.open(configuration)
        let auth = AuthService(database: database, bcryptCost: 4)
        for name in ["alice", "bob"] { _ = try await auth.createUser(username: name, password: password, actor: testOperator) }
        await database.close()
        return ServerHarness(directory: directory, configuration: configuration, postgres: postgres)
    }

    func close() {
        directory.remove()
        if let postgres { Task { await postgres.drop() } }
    }

    /// SQL for the text of `key` in the JSON column `column`, in the store's dialect.
    func jsonText(_ column: String, _ key: String) -> SQL {
        SQL(raw: postgres == nil ? "json_extract(\(column), '$.\(key)')" : "(\(column)::jsonb ->> '\(key)')")
    }

    /// Runs `body` against the application through HummingbirdTesting's router framework.
    func test(_ body: @escaping @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        let app = try await buildApplication(configuration: configuration, logger: Self.logger)
        try await app.test(.router) { client in try await body(client) }
    }

    /// As `test`, with a function that reads `/metrics` from the metrics listener (a real
    /// listener on a free port: the API's router does not serve it).
    func test(_ body: @escaping @Sendable (any TestClientProtocol, _ metrics: @Sendable () async throws -> String) async throws -> Void) async throws {
        let port = Mutex<Int?>(nil)
        let app = try await buildApplication(configuration: configuration, logger: Self.logger, metricsListening: { bound in port.withLock { $0 = bound } })
        try await app.test(.router) { client in
            try await body(client) {
                let limit = ContinuousClock.now + .seconds(10)
                while port.withLock({ $0 }) == nil, ContinuousClock.now < limit { try await Task.sleep(for: .milliseconds(20)) }
                let bound = try #require(port.withLock { $0 }, "the metrics listener never said its port")
                let (data, _) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(bound)/metrics")!)
                return String(decoding: data, as: UTF8.self)
            }
        }
    }

    /// Writes to the database directly (behind the server's back).
    func execute(_ sql: SQL) async throws {
        let database = try await PhotosDatabase.open(configuration, migrate: false)
        do {
            _ = try await database.write { try await $0.execute(sql) }
            await database.close()
        } catch {
            await database.close()
            throw error
        }
    }

    /// Reads the database directly.
    func query(_ sql: SQL) async throws -> [Row] {
        guard postgres != nil else {
            let connection = try Connection(path: configuration.databasePath, mode: .readOnly)
            defer { connection.close() }
            return try connection.query(sql)
        }
        let database = try await PhotosDatabase.open(configuration, migrate: false)
        do {
            let rows = try await database.read { try await $0.query(sql) }
            await database.close()
            return rows
        } catch {
            await database.close()
            throw error
        }
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
    /// A request as a client sends it: on a session's path, with its secret when the test has
    /// not set an `Authorization` of its own (`SessionSecretBook`); a session created is learnt.
    func send(_ uri: String, method: HTTPRequest.Method, headers: HTTPFields = [:], body: ByteBuffer? = nil) async throws -> TestResponse {
        var headers = headers
        if headers[.authorization] == nil, let authorization = SessionSecretBook.authorization(for: uri) {
            headers[.authorization] = authorization
        }
        let response = try await execute(uri: uri, method: method, headers: headers, body: body)
        if method == .post, response.status == .created { SessionSecretBook.learn(response.json) }
        return response
    }

    func post(_ uri: String, _ body: String, headers: HTTPFields = [.contentType: "application/json"]) async throws -> TestResponse {
        try await send(uri, method: .post, headers: headers, body: ByteBuffer(string: body))
    }

    func get(_ uri: String, headers: HTTPFields = [:]) async throws -> TestResponse {
        try await send(uri, method: .get, headers: headers)
    }

    /// `POST /v1/sessions` with no body; its secret is learnt.
    func createSession() async throws -> TestResponse {
        try await send("/v1/sessions", method: .post)
    }

    func newSession() async throws -> String {
        try await createSession().json["id"] as? String ?? ""
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
