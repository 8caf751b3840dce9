import DatabaseAccess
import PhotosModel

/// Erasure's rule for the trail: what a user's erasure may change in `audit_events`, and how it
/// says so in `audit_redactions` (the verifier's half of the rule is `AuditVerifier.Redactions`).
public enum AuditRedaction {
    /// Rows from before 0011 that hold the name in clear (`username`, or a refused sign-in's
    /// `attemptedUsername`): listed in `audit_redactions`, then cleared — the one update the
    /// table's trigger lets through. The partial indexes of 0011 find them.
    public static func redactRowsBeforeCommitments(naming user: User, at: String, on connection: any DatabaseConnection) async throws -> Int {
        let listed = try await connection.execute(
            """
            INSERT INTO audit_redactions (event_id, user_id, at)
            SELECT id, \(user.id), \(at) FROM audit_events WHERE username = \(user.username) AND username IS NOT NULL
            UNION
            SELECT id, \(user.id), \(at) FROM audit_events
            WHERE step = 'auth.signInFailed' AND json_extract(detail, '$.attemptedUsername') = \(user.username)
            """)
        guard listed > 0 else { return 0 }
        _ = try await connection.execute(
            """
            UPDATE audit_events SET username = NULL,
                detail = CASE WHEN step = 'auth.signInFailed' AND json_extract(detail, '$.attemptedUsername') = \(user.username)
                              THEN json_remove(detail, '$.attemptedUsername') ELSE detail END
            WHERE id IN (SELECT event_id FROM audit_redactions WHERE user_id = \(user.id) AND at = \(at))
            """)
        return listed
    }
}
