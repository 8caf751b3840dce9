import DatabaseAccess
import Navigation
import PhotosCore
import PhotosModel

/// Thrown by the write when a fact the decision relied on no longer holds (the photo was
/// bought meanwhile by another session of the same user, the session's token was revoked, a
/// token id collided): nothing of the decision is kept, and the action is decided again.
struct StaleFacts: Error {
    let reason: String
}

/// Thrown by an optimistic write when the session's version or trail moved since it was read:
/// nothing is kept, and the action is read and decided again.
struct SessionMoved: Error {}

/// One decision, made ready to write before the write transaction starts: the state's JSON and
/// the audit rows' chain are computed here, so that the write itself is only its statements —
/// the session row (with its trail's new head), the audit rows in one statement, the effects.
struct PreparedWrite: Sendable {
    let sessionID: String
    let decision: SessionDecision
    let stateText: String
    /// The columns kept beside the state.
    let columns: SessionColumns
    let chained: [(record: AuditRecord, previousHash: String, hash: String)]
    /// The trail's head after the write.
    let trailSeq: Int
    let trailHash: String

    init(_ decision: SessionDecision, sessionID: String, lastSeq: Int, previousHash: String) {
        self.sessionID = sessionID
        self.decision = decision
        self.stateText = decision.state.jsonText
        self.columns = SessionColumns(decision.state)
        self.chained = AuditTrails.chain(decision.records, after: previousHash)
        self.trailSeq = lastSeq + decision.records.count
        self.trailHash = chained.last?.hash ?? previousHash
    }

    /// The session as read, which an optimistic write requires to be unchanged.
    struct Expected: Sendable {
        let version: Int
        let trailSeq: Int
        /// The session's token and whether it was live, when the decision relied on it.
        let token: (id: Int64, live: Bool)?
    }

    /// Writes it inside the caller's transaction: the session row (inserted when `created` is
    /// set), the audit rows, every effect. With `expected`, only if the session is still at the
    /// version and trail seq read (else `SessionMoved`) and its token as live as it was (else
    /// `StaleFacts`); an effect that cannot be applied as decided throws `StaleFacts`. Either
    /// way the caller's transaction keeps nothing.
    func write(created: String? = nil, expected: Expected?, on connection: any DatabaseConnection) async throws {
        let state = decision.state
        let at = decision.records.first?.at ?? created ?? ""
        if !chained.isEmpty { try await AuditLog.holdAppendLock(on: connection) }
        if let created {
            try await connection.execute(
                """
                INSERT INTO sessions (id, version, state, user_id, created_at, updated_at, trail_seq, trail_hash,
                    layout, top_screen, token_id, photo_ids)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
                sessionID, decision.version, stateText, state.user?.id, created, created, trailSeq, trailHash,
                columns.layout, columns.topScreen, columns.tokenID, columns.photoIDs)
        } else if decision.changed || !chained.isEmpty {
            let updated: Int
            if let expected {
                updated = try await connection.execute(
                    """
                    UPDATE sessions SET version = ?, state = ?, user_id = ?, updated_at = ?, trail_seq = ?, trail_hash = ?,
                        layout = ?, top_screen = ?, token_id = ?, photo_ids = ?
                    WHERE id = ? AND version = ? AND trail_seq = ?
                    """,
                    decision.version, stateText, state.user?.id, at, trailSeq, trailHash,
                    columns.layout, columns.topScreen, columns.tokenID, columns.photoIDs, sessionID, expected.version, expected.trailSeq)
            } else {
                updated = try await connection.execute(
                    """
                    UPDATE sessions SET version = ?, state = ?, user_id = ?, updated_at = ?, trail_seq = ?, trail_hash = ?,
                        layout = ?, top_screen = ?, token_id = ?, photo_ids = ?
                    WHERE id = ?
                    """,
                    decision.version, stateText, state.user?.id, at, trailSeq, trailHash,
                    columns.layout, columns.topScreen, columns.tokenID, columns.photoIDs, sessionID)
            }
            guard updated == 1 else { throw SessionMoved() }
        }
        if let token = expected?.token {
            let live = try await connection.queryOne("SELECT 1 FROM tokens WHERE id = ? AND revoked_at IS NULL AND expires_at > ?", token.id, at) != nil
            guard live == token.live else { throw StaleFacts(reason: "the session's token changed") }
        }
        try await AuditLog.insert(chained: chained, on: connection)
        for effect in decision.effects {
            switch effect {
            case .purchase(let userID, let photoID, let priceCents):
                let inserted = try await connection.execute(
                    """
                    INSERT INTO purchases (user_id, photo_id, price_cents, purchased_at, session_id) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (user_id, photo_id) DO NOTHING
                    """, userID, photoID, priceCents, at, sessionID)
                guard inserted == 1 else { throw StaleFacts(reason: "photo \(photoID) was bought meanwhile") }
            case .issueToken(let grant, let userID):
                do {
                    try await AuthService.store(grant, userID: userID, on: connection)
                } catch let error as any DatabaseFailure where error.isUniqueViolation {
                    throw StaleFacts(reason: "token id \(grant.id) is taken")
                }
            case .revokeToken(let id):
                try await connection.execute("UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", at, id)
            }
        }
    }
}
