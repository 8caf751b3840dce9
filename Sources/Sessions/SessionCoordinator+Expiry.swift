import AuditTrail
import DatabaseAccess
import Foundation
import Navigation
import PhotosCore
import PhotosModel

/// Ending idle sessions: a client's request that finds its session idle past the expiry ends it
/// (answered `410`), and so does the sweep (`expireIfIdle`), each with one `session.expired`
/// write kept only if the session is still as read.
extension SessionCoordinator {
    /// Ends the session `sessionID` if it is idle past the expiry (photosd's sweep); true when it
    /// ended it or found it ended, false when it lives on. Its own read and write, no action:
    /// a session used meanwhile moves, the write keeps nothing, and the next read finds it live.
    public func expireIfIdle(sessionID: String) async throws -> Bool {
        for _ in 0..<Self.rounds {
            let now = auth.now()
            let stamp = ISO8601Timestamp.string(from: now)
            let snapshot = try await database.readForAction(ActionRead(sessionID: sessionID, facts: FactsWanted(), answerKey: nil, answersSince: ""))
            let loaded: LoadedSession
            switch try found(snapshot, sessionID: sessionID) {
            case .live(let live): loaded = live
            case .ended: return true  // ended before this looked
            case .missing: throw PhotosError.notFound("no session \(sessionID.prefix(64))")
            }
            guard let idleSince = idleSince(loaded, now: now) else { return false }
            if let written = try await writeExpiry(of: sessionID, loaded: loaded, idleSince: idleSince, on: database, stamp: stamp) {
                cache.store(written)
                commits.publish(.init(sessionID: sessionID, kind: .expired, auditRows: written.chained.count))
                return true
            }
        }
        return false  // it kept moving: in use, so it lives on (the next sweep looks again)
    }

    /// Writes the end of `loaded`, idle since `idleSince`: the `session.expired` step, kept only
    /// if the session is still as read. The write, or nil when the session moved meanwhile.
    /// (Returned, never thrown: inside the store's lock a throw would roll the write back.)
    func writeExpiry(of sessionID: String, loaded: LoadedSession, idleSince: String, on store: any SessionActions, stamp: String) async throws -> PreparedWrite? {
        let decision = try SessionMachine.expire(
            sessionID: sessionID, version: loaded.version, state: loaded.state, lastSeq: loaded.trailSeq, now: stamp, idleSince: idleSince)
        let prepared = PreparedWrite(decision, sessionID: sessionID, lastSeq: loaded.trailSeq, previousHash: loaded.trailHash)
        let outcome = try await store.writeDecision(prepared.write(
            .update(expectedVersion: loaded.version, expectedTrailSeq: loaded.trailSeq), at: stamp))
        switch outcome {
        case .written: return prepared
        case .moved, .stale, .answered: return nil
        }
    }
}
