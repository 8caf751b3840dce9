import PhotosCore

/// One action as a client sends it: `{"action": "...", ...params}`.
public struct ClientAction: Sendable, Equatable {
    /// Which action.
    public var name: ActionName
    /// For `selectPhoto` and `buyPhoto`.
    public var photoId: Int64?
    /// For `submit`.
    public var username: String?
    /// For `submit`. Never logged, stored or audited.
    public var password: String?

    /// Creates an action.
    public init(_ name: ActionName, photoId: Int64? = nil, username: String? = nil, password: String? = nil) {
        self.name = name
        self.photoId = photoId
        self.username = username
        self.password = password
    }

    /// Throws `bad_request` when a parameter the action needs is missing.
    public func validateParameters() throws {
        switch name {
        case .selectPhoto, .buyPhoto:
            guard let photoId else { throw PhotosError.badRequest("\(name.rawValue) needs photoId") }
            guard photoId > 0 else { throw PhotosError.badRequest("photoId must be a positive integer") }
        case .submit:
            guard let username, !username.isEmpty else { throw PhotosError.badRequest("submit needs username") }
            guard let password, !password.isEmpty else { throw PhotosError.badRequest("submit needs password") }
        default: break
        }
    }

    /// The `action` step's detail: the action and its photo, never credentials.
    var auditDetail: JSONObject {
        var detail: JSONObject = ["action": .string(name.rawValue)]
        if let photoId, name == .selectPhoto || name == .buyPhoto { detail["photoId"] = .int(photoId) }
        return detail
    }

    /// What identifies a retried request for idempotency (credentials left out on purpose).
    var fingerprint: String {
        "\(name.rawValue)|\(photoId.map(String.init) ?? "")|\(username ?? "")"
    }
}
