import DatabaseAccess
import Foundation
import PhotosCore
import PhotosModel

extension SessionCoordinator {
    /// Forgets the user named `username` (`photos-admin users erase`): their live sessions are
    /// signed out through the sessions' own write path (an `auth.signOut` step each, reason
    /// `userErased`, by `actor`), then `UserErasure` removes the name, the password hash, the
    /// tokens and the sign-in rows in one transaction and records a `user.erased` step, and the
    /// store purges what the deleted and overwritten rows left in its files.
    ///
    /// A session signed in as them between the two is signed out in the next round; after a few
    /// rounds (a client signing in as fast as it is signed out) it gives up with `conflict`.
    public func erase(username: String, actor: AuditActor) async throws -> ErasureReport {
        guard (try? AuthService.validate(username: username)) != nil, let user = try await auth.user(named: username) else {
            throw PhotosError.notFound("no user named \(username)")
        }
        let erasure = UserErasure(database: database, now: auth.now)
        var signedOut = 0
        for _ in 1...Self.rounds {
            for sessionID in try await erasure.signedInSessions(userID: user.id) {
                switch try await operatorSignOutOutcome(sessionID: sessionID, reason: "userErased", actor: actor) {
                case .applied: signedOut += 1
                case .expired, .ended, .missing: continue  // ended or gone meanwhile: nothing to sign out
                }
            }
            switch try await erasure.erase(user, signedOut: signedOut, actor: actor) {
            case .erased(let report):
                try await database.purgeDeletedContent(tables: UserErasure.touchedTables)
                return report
            case .missing:
                throw PhotosError.notFound("no user named \(username)")
            case .signedInMeanwhile:
                continue
            }
        }
        throw PhotosError(.conflict, "sessions kept signing in as \(username) while it was being erased; retry")
    }
}
