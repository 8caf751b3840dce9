import AuditTrail
import DatabaseAccess
import Foundation
import PhotosModel

/// What `photos-admin users erase` did for one user.
public struct ErasureReport: Sendable, Equatable, Codable {
    /// The erased user's id (their purchases still name it).
    public var userId: Int64
    /// Live sessions signed out (each with an `auth.signOut` step, reason `userErased`).
    public var sessionsSignedOut: Int
    /// Tokens deleted.
    public var tokensDeleted: Int
    /// Sign-in limiter rows and trusted addresses deleted (PostgreSQL keeps them in tables).
    public var signInRowsDeleted: Int
    /// Stored idempotency answers deleted from sessions the user signed in to (they may quote
    /// the name).
    public var answersDeleted: Int
    /// Audit rows from before migration 0011 that held the name and lost it.
    public var auditRowsRedacted: Int

    /// Creates a report.
    public init(userId: Int64, sessionsSignedOut: Int = 0, tokensDeleted: Int = 0, signInRowsDeleted: Int = 0, answersDeleted: Int = 0, auditRowsRedacted: Int = 0) {
        self.userId = userId
        self.sessionsSignedOut = sessionsSignedOut
        self.tokensDeleted = tokensDeleted
        self.signInRowsDeleted = signInRowsDeleted
        self.answersDeleted = answersDeleted
        self.auditRowsRedacted = auditRowsRedacted
    }
}

/// Forgets a user: the data half of erasure, in one transaction (the session coordinator signs
/// their live sessions out first, through the sessions' own write path).
///
/// The name leaves `users` (the row stays as `erased:<id>`, so purchases still point at it) with
/// its salt, which was the only key to the commitment the audit chain holds of it; rows from
/// before migration 0011 that hold the name in clear lose it and are listed in
/// `audit_redactions`. Nothing else in the trail changes, and `audit verify` still passes.
public struct UserErasure: Sendable {
    let database: any DatabaseStore
    let now: @Sendable () -> Date

    /// Creates the service.
    public init(database: any DatabaseStore, now: @escaping @Sendable () -> Date = Date.init) {
        self.database = database
        self.now = now
    }

    /// The sessions signed in as `userID` now.
    public func signedInSessions(userID: Int64) async throws -> [String] {
        try await database.read { connection in
            try await connection.query("SELECT id FROM sessions WHERE user_id = \(userID) ORDER BY id").map { try $0.string("id") }
        }
    }

    /// What an erasure round did.
    public enum Outcome: Sendable {
        /// Erased: what it removed.
        case erased(ErasureReport)
        /// A session was signed in as the user meanwhile: nothing was written (the caller signs
        /// it out and tries again).
        case signedInMeanwhile
        /// The user is gone, or erased already: nothing was written.
        case missing
    }

    /// Erases `user` and records a `user.erased` step by `actor` (with no name); `signedOut` is
    /// what the caller already did, for the report and the step.
    public func erase(_ user: User, signedOut: Int, actor: AuditActor) async throws -> Outcome {
        let at = ISO8601Timestamp.string(from: now())
        let erasedName = NameCommitment.erasedName(userID: user.id)
        return try await database.write { connection in
            // The user's lock first (PostgreSQL; SQLite's one writer needs none): a sign-in that
            // got there before commits first and is seen here (a session signed in: nothing is
            // written, the caller signs it out and tries again; a token: deleted below); one
            // that comes after waits, then finds the user erased and issues nothing.
            try await connection.hold([.exclusive(.user(user.id))])
            guard try await connection.queryOne("SELECT id FROM sessions WHERE user_id = \(user.id) LIMIT 1") == nil else {
                return .signedInMeanwhile
            }
            let renamed = try await connection.execute(
                "UPDATE users SET username = \(erasedName), password_hash = '', name_salt = NULL, erased_at = \(at) WHERE id = \(user.id) AND username = \(user.username) AND erased_at IS NULL")
            guard renamed == 1 else { return .missing }
            var report = ErasureReport(userId: user.id, sessionsSignedOut: signedOut)
            report.tokensDeleted = try await connection.execute("DELETE FROM tokens WHERE user_id = \(user.id)")
            report.signInRowsDeleted = try await connection.execute("DELETE FROM sign_in_attempts WHERE username_key = \(user.username)")
            report.signInRowsDeleted += try await connection.execute("DELETE FROM sign_in_trusted_addresses WHERE username_key = \(user.username)")
            report.answersDeleted = try await connection.execute(
                "DELETE FROM idempotency_keys WHERE session_id IN (SELECT session_id FROM audit_events WHERE step = 'auth.signIn' AND user_id = \(user.id))")
            report.auditRowsRedacted = try await AuditRedaction.redactRowsBeforeCommitments(naming: user, at: at, on: connection)
            let detail: JSONObject = [
                "userId": .int(user.id), "sessionsSignedOut": .int(Int64(signedOut)), "auditRowsRedacted": .int(Int64(report.auditRowsRedacted)),
            ]
            try await AuditChains.append([AuditEntry(actor: actor, userID: user.id, step: .userErased, detail: detail)], to: actor.outOfSessionID, at: at, on: connection)
            return .erased(report)
        }
    }

    /// The tables an erasure writes: what `DatabaseStore.purgeDeletedContent` is given.
    public static let touchedTables = ["users", "tokens", "sessions", "sign_in_attempts", "sign_in_trusted_addresses", "idempotency_keys", "audit_events"]
}
