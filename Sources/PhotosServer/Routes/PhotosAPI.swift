import AuditTrail
import Foundation
import Hummingbird
import Logging
import Metrics
import Navigation
import PhotosCore
import PhotosListener
import PhotosModel
import Sessions

/// The services behind the HTTP API, shared by every request.
struct PhotosAPI: Sendable {
    let services: PhotosServices
    /// `server.maxBodyBytes`.
    let bodyLimit: Int
    let metrics: PhotosMetrics
    let storage: StorageHealth
    /// `limits.sessionsPerMinutePerAddress`.
    let sessionsPerAddress: AddressLimiter
    /// `limits.longPollsPerAddress`: the change feed's long polls each client address holds.
    let longPolls: HeldSlots<String>
    /// What `GET /readyz` checks.
    let readiness: Readiness
    /// The sessions devices wait on (`GET /v1/sessions/{id}/changes`), woken by the sessions'
    /// commits.
    let changes: SessionChanges
    /// The metrics' count of the sessions' commits.
    let countingCommits: AuditCommits.Listening
    /// `log.public`: the log's checkpoint and consistency proofs served to anyone.
    let logPublic: Bool
    /// `audit.checkpointIntervalSeconds`: how long a receipt may wait for its checkpoint.
    let checkpointIntervalSeconds: Int
    /// `receipts.maxRows`: the most rows one receipt holds.
    let receiptsMaxRows: Int
    /// Receipts kept while they hold, built one at a time.
    let receipts = ReceiptServing()

    init(
        services: PhotosServices, bodyLimit: Int, metrics: PhotosMetrics, storage: StorageHealth, sessionsPerAddress: AddressLimiter,
        longPolls: HeldSlots<String>, readiness: Readiness, logPublic: Bool = true, checkpointIntervalSeconds: Int = 10,
        receiptsMaxRows: Int = 1_000
    ) {
        self.receiptsMaxRows = receiptsMaxRows
        self.logPublic = logPublic
        self.checkpointIntervalSeconds = checkpointIntervalSeconds
        self.services = services
        self.bodyLimit = bodyLimit
        self.metrics = metrics
        self.storage = storage
        self.sessionsPerAddress = sessionsPerAddress
        self.longPolls = longPolls
        self.readiness = readiness
        self.changes = SessionChanges(following: services.sessions.commits)
        self.countingCommits = services.sessions.commits.listen { [metrics] in metrics.committed($0) }
    }

    var auth: AuthService { services.auth }
    var catalog: CatalogService { services.catalog }
    var purchases: PurchaseService { services.purchases }
    var sessions: SessionCoordinator { services.sessions }

    /// The user of the request's bearer token, if one was sent. Throws `401` for a bad token.
    func bearerUser(_ request: Request) async throws -> User? {
        guard let token = try RequestParsing.bearerToken(request) else { return nil }
        return try await auth.validate(token: token)
    }

    func requireUser(_ request: Request) async throws -> (User, String) {
        guard let token = try RequestParsing.bearerToken(request) else {
            throw PhotosError.unauthorized("this endpoint needs Authorization: Bearer <token>")
        }
        return (try await auth.validate(token: token), token)
    }
}

// MARK: Request and response bodies

/// `POST /v1/sessions/{id}/actions` body.
struct ActionBody: Decodable, Equatable {
    let action: String
    let photoId: Int64?
    let username: String?
    let password: String?
    let expectVersion: Int?
    let tab: String?
    let link: String?

    enum CodingKeys: String, CodingKey { case action, photoId, username, password, expectVersion, tab, link }

    init(action: String, photoId: Int64?, username: String?, password: String?, expectVersion: Int?, tab: String? = nil, link: String? = nil) {
        self.action = action
        self.photoId = photoId
        self.username = username
        self.password = password
        self.expectVersion = expectVersion
        self.tab = tab
        self.link = link
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        action = try container.decode(String.self, forKey: .action)
        photoId = try container.decodeInteger(forKey: .photoId)
        username = try container.decodeIfPresent(String.self, forKey: .username)
        password = try container.decodeIfPresent(String.self, forKey: .password)
        expectVersion = try container.decodeInteger(forKey: .expectVersion).map { Int($0) }
        tab = try container.decodeIfPresent(String.self, forKey: .tab)
        link = try container.decodeIfPresent(String.self, forKey: .link)
    }
}

/// `POST /v1/sessions` body (optional): the layout and a deep link to start at.
struct NewSessionRequest: Decodable {
    let layout: String?
    let link: String?
}

extension KeyedDecodingContainer {
    /// An optional integer field, with a clear error for 1.5, "1", true or 1e40.
    func decodeInteger(forKey key: Key) throws -> Int64? {
        guard contains(key), try !decodeNil(forKey: key) else { return nil }
        if let value = try? decode(Int64.self, forKey: key) { return value }
        throw PhotosError.badRequest("field \(key.stringValue) must be an integer")
    }
}

/// `POST /v1/auth/sign-in` body.
struct SignInRequest: Decodable {
    let username: String
    let password: String
}

struct SignInResponse: Encodable {
    let token: String
    let expiresAt: String
    let user: UserBody
}

struct SignOutResponse: Encodable {
    let signedOut: Bool
    let user: UserBody
}

/// A user in the token API's answers: `{"id", "username"}`.
struct UserBody: Encodable {
    let id: Int64
    let username: String

    init(_ user: User) {
        id = user.id
        username = user.username
    }
}

struct EventsResponse: Encodable {
    let events: [AuditRow]
}

struct PhotoResponse: Encodable {
    let id: Int64
    let title: String
    let url: String
    let priceCents: Int
    let purchased: Bool?
}

struct PhotosResponse: Encodable {
    let photos: [PhotoResponse]
    /// Pass as `after` for the next page; absent on the last page.
    let nextAfter: Int64?
}

struct PurchaseResponse: Encodable {
    let photoId: Int64
    let priceCents: Int
    let purchasedAt: String
}

struct PurchasesResponse: Encodable {
    let purchases: [PurchaseResponse]
}

/// `GET /v1/sessions/{id}/receipt`'s `202` body: the session's newest row waits for the next
/// checkpoint.
struct ReceiptPending: Encodable {
    let status = "pending"
    /// Seconds until the next checkpoint (as `Retry-After`).
    let retryAfter: Int
}

/// `GET /v1/log/consistency`.
struct ConsistencyResponse: Encodable {
    let from: Int64
    let to: Int64
    /// Base64, RFC 6962 order.
    let hashes: [String]
}

struct HealthResponse: Encodable {
    let status: String
}

/// `GET /readyz`'s `503` body: which check failed and why (never a URL or a secret).
struct UnreadyResponse: Encodable {
    struct Detail: Encodable {
        let code: String
        let message: String
    }
    let status = "unready"
    let check: String
    let error: Detail
}
