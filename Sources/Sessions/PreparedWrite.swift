import AuditTrail
import DatabaseAccess
import Navigation
import PhotosCore
import PhotosModel

/// One decision made ready to write: the state's JSON and the audit rows' chain are computed
/// here, outside any transaction, so that the write itself is only what the store does with
/// an `ActionWrite`.
struct PreparedWrite: Sendable {
    let sessionID: String
    let decision: SessionDecision
    let stateText: String
    let chained: [(record: AuditRecord, previousHash: String, hash: String)]
    /// The trail's head after the write.
    let trailSeq: Int
    let trailHash: String

    init(_ decision: SessionDecision, sessionID: String, lastSeq: Int, previousHash: String) {
        self.sessionID = sessionID
        self.decision = decision
        // An ended session keeps no state: its row says only that it ended (and when).
        self.stateText = decision.ended ? "{}" : decision.state.jsonText
        self.chained = AuditTrails.chain(decision.records, after: previousHash)
        self.trailSeq = lastSeq + decision.records.count
        self.trailHash = chained.last?.hash ?? previousHash
    }

    /// The write of this decision: the session row (`kind`: created at `at`, or updated only if
    /// still as read), the audit rows, every effect, the answer kept for the request's key, and
    /// what was assumed.
    func write(
        _ kind: ActionWrite.Kind, at: String, answer: AnswerRecord? = nil, answersSince: String = "",
        assumptions: ActionWrite.Assumptions = .init()
    ) -> ActionWrite {
        let state = decision.state
        let at = decision.records.first?.at ?? at
        var write = ActionWrite(
            row: decision.ended
                ? SessionRow(
                    id: sessionID, version: decision.version, state: stateText, userID: nil, createdAt: at, updatedAt: at,
                    trailSeq: trailSeq, trailHash: trailHash, layout: state.sessionLayout.rawValue, topScreen: nil,
                    tokenID: nil, photoIDs: [], endedAt: at)
                : SessionRow(
                    id: sessionID, version: decision.version, state: stateText, userID: state.user?.id, createdAt: at, updatedAt: at,
                    trailSeq: trailSeq, trailHash: trailHash, layout: state.sessionLayout.rawValue, topScreen: state.top?.screen.rawValue,
                    tokenID: state.tokenId, photoIDs: state.namedPhotoIDs),
            kind: kind, audit: chained.map { AuditRowValues($0.record, previousHash: $0.previousHash, hash: $0.hash) }, at: at,
            answer: answer, answersSince: answersSince, assumptions: assumptions)
        for effect in decision.effects {
            switch effect {
            case .purchase(let userID, let photoID, let priceCents):
                write.purchases.append(PurchaseRecord(userID: userID, photoID: photoID, priceCents: priceCents))
            case .issueToken(let grant, let userID):
                write.issuedTokens.append(IssuedTokenRecord(
                    id: grant.id, tokenHash: grant.tokenHash, userID: userID, issuedAt: grant.issuedAt, expiresAt: grant.expiresAt))
            case .revokeToken(let id):
                write.revokedTokenIDs.insert(id)
            }
        }
        return write
    }
}
