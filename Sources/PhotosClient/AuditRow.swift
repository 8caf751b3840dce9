/// A row of a session's audit trail (`NavigationDriver.Step.events`, `NavigationDriver.events`).
///
/// Read leniently: every action's answer carries the rows it wrote, so a newer server that
/// changes a row's shape must not make every tap undecodable. A field that is missing or of
/// another type is left at its empty value ("" or 0) and named in `unreadFields`; fields this
/// client does not know are ignored. (The generated client uses this type for the API
/// document's `AuditRow`: `openapi-generator-config.yaml`'s `typeOverrides`.)
public struct AuditRow: Codable, Hashable, Sendable {
    /// The session the row belongs to.
    public var sessionId: String
    /// The row's place in the session's trail (1, 2, 3 …).
    public var seq: Int
    /// When, as ISO-8601 UTC text with milliseconds (`2026-11-23T16:40:29.123Z`).
    public var at: String
    /// `client`, `operator:<name>` or `system`.
    public var actor: String
    /// The signed-in user's name (absent once that user is erased).
    public var username: String?
    /// The coordinator path, e.g. `app/buy/terms`.
    public var coordinator: String?
    /// The step (`coordinator.start`, `screen.push`, `purchase.complete` …).
    public var step: String
    /// The screen, when the step has one.
    public var screen: String?
    /// A JSON object, as text.
    public var detail: String
    /// The fields this client could not read from the server's row (missing, or of another
    /// type): empty for a row of the shape this client knows.
    public var unreadFields: [String] = []

    /// A row with these fields (all read).
    public init(
        sessionId: String, seq: Int, at: String, actor: String, username: String? = nil, coordinator: String? = nil,
        step: String, screen: String? = nil, detail: String
    ) {
        self.sessionId = sessionId
        self.seq = seq
        self.at = at
        self.actor = actor
        self.username = username
        self.coordinator = coordinator
        self.step = step
        self.screen = screen
        self.detail = detail
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case sessionId, seq, at, actor, username, coordinator, step, screen, detail
    }

    /// Never fails on a row that is a JSON object, whatever its fields hold.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        var unread: [String] = []
        func required<T: Decodable>(_ key: CodingKeys, _ empty: T) -> T {
            if let value = try? container.decode(T.self, forKey: key) { return value }
            unread.append(key.rawValue)
            return empty
        }
        func optional<T: Decodable>(_ key: CodingKeys) -> T? {
            guard container.contains(key), !((try? container.decodeNil(forKey: key)) ?? false) else { return nil }
            if let value = try? container.decode(T.self, forKey: key) { return value }
            unread.append(key.rawValue)
            return nil
        }
        sessionId = required(.sessionId, "")
        seq = required(.seq, 0)
        at = required(.at, "")
        actor = required(.actor, "")
        username = optional(.username)
        coordinator = optional(.coordinator)
        step = required(.step, "")
        screen = optional(.screen)
        detail = required(.detail, "")
        unreadFields = unread
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(sessionId, forKey: .sessionId)
        try container.encode(seq, forKey: .seq)
        try container.encode(at, forKey: .at)
        try container.encode(actor, forKey: .actor)
        try container.encodeIfPresent(username, forKey: .username)
        try container.encodeIfPresent(coordinator, forKey: .coordinator)
        try container.encode(step, forKey: .step)
        try container.encodeIfPresent(screen, forKey: .screen)
        try container.encode(detail, forKey: .detail)
    }
}
