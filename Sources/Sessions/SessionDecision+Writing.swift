import DatabaseAccess
import Navigation
import PhotosCore
import PhotosModel

/// Thrown by the write when a fact the decision relied on no longer holds (the photo was
/// bought meanwhile by another session of the same user, a token id collided): nothing of the
/// decision is kept, and the action is read and decided again.
struct StaleFacts: Error {
    let reason: String
}

extension SessionDecision {
    /// Writes the decision inside the caller's transaction: the session row (inserted when
    /// `created` is set, else updated when changed), the audit rows chained after
    /// `previousHash`, and every effect. Throws `StaleFacts` when an effect cannot be applied as
    /// decided; the caller's transaction then keeps nothing.
    func write(sessionID: String, previousHash: String, created: String? = nil, on connection: any DatabaseConnection) throws {
        let at = result.events.first?.at ?? created ?? ""
        if let created {
            try connection.execute(
                "INSERT INTO sessions (id, version, state, user_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
                sessionID, version, state.jsonText, state.user?.id, created, created)
        } else if changed {
            try connection.execute(
                "UPDATE sessions SET version = ?, state = ?, user_id = ?, updated_at = ? WHERE id = ?",
                version, state.jsonText, state.user?.id, at, sessionID)
        }
        if !records.isEmpty {
            _ = try AuditLog.insert(records, after: previousHash, on: connection)
        }
        for effect in effects {
            switch effect {
            case .purchase(let userID, let photoID, let priceCents):
                let inserted = try connection.execute(
                    """
                    INSERT INTO purchases (user_id, photo_id, price_cents, purchased_at, session_id) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (user_id, photo_id) DO NOTHING
                    """, userID, photoID, priceCents, at, sessionID)
                guard inserted == 1 else { throw StaleFacts(reason: "photo \(photoID) was bought meanwhile") }
            case .issueToken(let grant, let userID):
                do {
                    try AuthService.store(grant, userID: userID, on: connection)
                } catch let error as any DatabaseFailure where error.isUniqueViolation {
                    throw StaleFacts(reason: "token id \(grant.id) is taken")
                }
            case .revokeToken(let id):
                try connection.execute("UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", at, id)
            }
        }
    }
}
