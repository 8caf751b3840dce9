/// One audit row as stored: the columns the hash covers, in a fixed order. The chain rule is
/// here and nowhere else: a row's hash is SHA-256 over its trail's previous hash and every field.
public struct AuditRecord: Sendable, Equatable {
    public var sessionID: String
    public var seq: Int
    public var at: String
    public var actor: String
    public var userID: Int64?
    /// The clear name, only in rows written before migration 0011 (and not redacted since).
    public var username: String?
    public var coordinator: String?
    public var step: String
    public var screen: String?
    public var detail: String

    /// Creates a record.
    public init(
        sessionID: String, seq: Int, at: String, actor: String, userID: Int64?, username: String?,
        coordinator: String?, step: String, screen: String?, detail: String
    ) {
        self.sessionID = sessionID
        self.seq = seq
        self.at = at
        self.actor = actor
        self.userID = userID
        self.username = username
        self.coordinator = coordinator
        self.step = step
        self.screen = screen
        self.detail = detail
    }

    /// `entry`, numbered `seq` in the trail `sessionID` and stamped `at`.
    public init(_ entry: AuditEntry, sessionID: String, seq: Int, at: String) {
        self.init(
            sessionID: sessionID, seq: seq, at: at, actor: entry.actor.description, userID: entry.userID,
            username: nil, coordinator: entry.coordinator, step: entry.step.rawValue,
            screen: entry.screen, detail: entry.detail.jsonText)
    }

    /// SHA-256 over `preimage(previous:)`, lowercase hex.
    public func hash(previous: String) -> String {
        SecureToken.sha256Hex(preimage(previous: previous))
    }

    /// The bytes a row's hash covers: the previous hash (64 hex characters) and every field in
    /// this order, each `<decimal UTF-8 byte count>:<bytes>`, `~` for null, numbers as decimal
    /// text — so that no two different rows encode alike (docs/receipts.md, "The row hash").
    public func preimage(previous: String) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256)
        func add(_ text: String?) {
            guard let text else {
                bytes.append(UInt8(ascii: "~"))
                return
            }
            bytes.append(contentsOf: String(text.utf8.count).utf8)
            bytes.append(UInt8(ascii: ":"))
            bytes.append(contentsOf: text.utf8)
        }
        add(previous)
        add(sessionID)
        add(String(seq))
        add(at)
        add(actor)
        add(userID.map { String($0) })
        add(username)
        add(coordinator)
        add(step)
        add(screen)
        add(detail)
        return bytes
    }

    /// The row as the `audit_trail` view shows it.
    public var row: AuditRow {
        AuditRow(sessionId: sessionID, seq: seq, at: at, actor: actor, username: username, coordinator: coordinator, step: step, screen: screen, detail: detail)
    }

    /// The row as the `audit_trail` view shows it when its user is named `username` (the view
    /// takes the name from `users`: the record itself holds none).
    public func row(username name: String?) -> AuditRow {
        AuditRow(sessionId: sessionID, seq: seq, at: at, actor: actor, username: username ?? name, coordinator: coordinator, step: step, screen: screen, detail: detail)
    }
}

/// The trails of the audit trail that belong to no client session, and where every chain starts.
public enum AuditTrails {
    /// Reserved session id for `photos-admin` commands that act on no live session.
    public static let operatorSession = "operator"
    /// Reserved session id for the token API (sign-in, sign-out outside a session).
    public static let apiSession = "api"
    /// `prev_hash` of a trail's first row.
    public static let genesisHash = String(repeating: "0", count: 64)

    /// True for the reserved trails (`operator`, `api`).
    public static func isReserved(_ sessionID: String) -> Bool {
        sessionID == operatorSession || sessionID == apiSession
    }

    /// Chains `records` (one trail's, in seq order) after `previousHash`: each record with the
    /// hash of the one before it and its own. The last hash is the trail's new head.
    public static func chain(_ records: [AuditRecord], after previousHash: String) -> [(record: AuditRecord, previousHash: String, hash: String)] {
        var previous = previousHash
        return records.map { record in
            let hash = record.hash(previous: previous)
            defer { previous = hash }
            return (record, previous, hash)
        }
    }
}
