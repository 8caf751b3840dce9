import PhotosModel

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
    /// For `selectTab`.
    public var tab: TabName?
    /// For `openLink`.
    public var link: DeepLink?

    /// Creates an action.
    public init(
        _ name: ActionName, photoId: Int64? = nil, username: String? = nil, password: String? = nil,
        tab: TabName? = nil, link: DeepLink? = nil
    ) {
        self.name = name
        self.photoId = photoId
        self.username = username
        self.password = password
        self.tab = tab
        self.link = link
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
            try Credentials.validateForSignIn(password: password)
        case .selectTab:
            guard tab != nil else { throw PhotosError.badRequest("selectTab needs tab (\(TabName.allCases.map(\.rawValue).joined(separator: " or ")))") }
        case .openLink:
            guard link != nil else { throw PhotosError.badRequest("openLink needs link") }
        default: break
        }
    }

    /// The `action` step's detail: the action and its photo, never credentials.
    public var auditDetail: JSONObject {
        var detail: JSONObject = ["action": .string(name.rawValue)]
        if let photoId, name == .selectPhoto || name == .buyPhoto { detail["photoId"] = .int(photoId) }
        if let tab, name == .selectTab { detail["tab"] = .string(tab.rawValue) }
        if let link, name == .openLink { detail["link"] = .string(link.description) }
        return detail
    }

    /// What identifies a retried request for idempotency (credentials left out on purpose).
    public var fingerprint: String {
        // tab and link are appended only when present, so the keys stored before they existed
        // keep matching their retries.
        var text = "\(name.rawValue)|\(photoId.map(String.init) ?? "")|\(username ?? "")"
        if let tab { text += "|tab=" + tab.rawValue }
        if let link { text += "|link=" + link.description }
        return text
    }
}
