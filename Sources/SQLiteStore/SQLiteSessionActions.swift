import DatabaseAccess
import PhotosModel

/// The action contract on SQLite, in plain statements on one connection inside the caller's
/// transaction: the read on a reader's snapshot, the write inside the writer's transaction,
/// where a statement costs no round trip (PostgreSQL has its own one-statement forms,
/// `SessionStatements`).
///
/// The write checks what the decision assumed before it writes anything; what its own
/// statements find (the session moved, a purchase made, a token id taken) throws `StaleWrite`
/// for the caller to roll back.
struct SQLiteSessionActions: SessionActions {
    let connection: any DatabaseConnection

    /// The contract on `connection`.
    init(_ connection: any DatabaseConnection) {
        self.connection = connection
    }

    // MARK: Read

    func readForAction(_ read: ActionRead) async throws -> ActionSnapshot {
        let row = try await connection.queryOne(
            """
            SELECT version, state, trail_seq, trail_hash, user_id, layout, token_id, photo_ids,
                   updated_at, ended_at
            FROM sessions WHERE id = \(read.sessionID)
            """)
        var covered = read.facts
        var session: SessionRowRead?
        if let row {
            session = SessionRowRead(
                version: try row.int("version"), stateText: try row.string("state"), trailSeq: try row.int("trail_seq"),
                trailHash: try row.string("trail_hash"), updatedAt: try row.string("updated_at"), endedAt: try row.optionalString("ended_at"))
            if read.namedByRow {
                // A column that does not parse names nothing: the caller finds the state's needs
                // not covered and reads them by name.
                if let text = try row.optionalString("photo_ids"), let ids = IDList.ids(text) { covered.photoIDs.formUnion(ids) }
                if let user = try row.optionalInt64("user_id") { covered.userIDs.insert(user) }
                if try row.optionalString("layout") == "tabs" { covered.purchaseLists = true }
                if covered.tokenID == nil { covered.tokenID = try row.optionalInt64("token_id") }
            }
        }
        let photoIDs = covered.photoIDs.sorted()
        var photos: [PhotoRecord] = []
        if !photoIDs.isEmpty {
            photos = try await connection.query(
                "SELECT id, title, url, price_cents FROM photos WHERE id IN (\(list: photoIDs))"
            ).map(Self.photo)
        }
        var purchases: [Int64: [PhotoRecord]] = [:]
        for userID in covered.userIDs.sorted() where covered.purchaseLists || !photoIDs.isEmpty {
            let among: SQL = covered.purchaseLists ? "" : " AND b.photo_id IN (\(list: photoIDs))"
            purchases[userID] = try await connection.query(
                """
                SELECT p.id, p.title, p.url, p.price_cents FROM purchases b JOIN photos p ON p.id = b.photo_id
                WHERE b.user_id = \(userID)\(among) ORDER BY b.id DESC
                """
            ).map(Self.photo)
        }
        var token: TokenRecord?
        if let tokenID = covered.tokenID,
           let row = try await connection.queryOne("SELECT expires_at, revoked_at FROM tokens WHERE id = \(tokenID)") {
            token = TokenRecord(id: tokenID, expiresAt: try row.string("expires_at"), revoked: try row.optionalString("revoked_at") != nil)
        }
        var answer: StoredAnswerRecord?
        if let key = read.answerKey {
            answer = try await storedAnswer(sessionID: read.sessionID, key: key, since: read.answersSince)
        }
        return ActionSnapshot(session: session, covered: covered, photos: photos, purchases: purchases, token: token, answer: answer)
    }

    // MARK: Write

    /// Checks what the decision assumed (reads), then writes; a write that finds the session
    /// moved, a purchase made or a token id taken throws `StaleWrite` with that outcome, for
    /// the caller to roll back: the writer rolls back the request's savepoint, the locked form
    /// its own savepoint. (Each costs no extra statement when nothing is refused:
    /// the write's own row counts say it.)
    func writeDecision(_ write: ActionWrite) async throws -> ActionWriteOutcome {
        if let refusal = try await refusal(of: write) { return refusal }
        let row = write.row
        if !write.audit.isEmpty { try await connection.hold([.shared(.number(AuditRowValues.appendLockKey))]) }
        switch write.kind {
        case .create:
            let inserted = try await connection.execute(Self.insertSession(row))
            guard inserted == 1 else { throw StaleWrite(outcome: .moved) }
        case .update(let version, let trailSeq):
            let updated = try await connection.execute(Self.updateSession(row, version: version, trailSeq: trailSeq))
            guard updated == 1 else { throw StaleWrite(outcome: .moved) }
        }
        try await AuditRowValues.insert(write.audit, on: connection)
        for purchase in write.purchases {
            let inserted = try await connection.execute(
                """
                INSERT INTO purchases (user_id, photo_id, price_cents, purchased_at, session_id) VALUES (\(purchase.userID), \(purchase.photoID), \(purchase.priceCents), \(write.at), \(row.id))
                ON CONFLICT (user_id, photo_id) DO NOTHING
                """)
            guard inserted == 1 else { throw StaleWrite(outcome: .stale(reason: "photo \(purchase.photoID) was bought meanwhile")) }
        }
        for token in write.issuedTokens {
            let inserted = try await connection.execute(
                "INSERT INTO tokens (id, token_hash, user_id, issued_at, expires_at) VALUES (\(token.id), \(token.tokenHash), \(token.userID), \(token.issuedAt), \(token.expiresAt)) ON CONFLICT (id) DO NOTHING")
            guard inserted == 1 else { throw StaleWrite(outcome: .stale(reason: "token id \(token.id) is taken")) }
        }
        for id in write.revokedTokenIDs.sorted() {
            try await connection.execute("UPDATE tokens SET revoked_at = \(write.at) WHERE id = \(id) AND revoked_at IS NULL")
        }
        if let answer = write.answer {
            try await connection.execute(
                """
                INSERT INTO idempotency_keys (session_id, key, request_hash, response, created_at) VALUES (\(row.id), \(answer.key), \(answer.requestHash), \(answer.response), \(answer.createdAt))
                ON CONFLICT (session_id, key) DO UPDATE SET
                    request_hash = excluded.request_hash, response = excluded.response, created_at = excluded.created_at
                """)
        }
        return .written
    }

    /// The session row's insert and conditional update, from its columns' one definition.
    /// (Texts made once, bound per run: the hot path's writes.)
    static func insertSession(_ row: SessionRow) -> SQL {
        insertSessionText.binding(row.insertedColumns.map(\.value))
    }
    static func updateSession(_ row: SessionRow, version: Int, trailSeq: Int) -> SQL {
        updateSessionText.binding(row.updatedColumns.map(\.value) + [row.id, version, trailSeq])
    }
    private static let insertSessionText: SQL = {
        let columns = SessionRow.shape.insertedColumns
        return "INSERT INTO sessions (\(raw: columns.map(\.name).joined(separator: ", "))) VALUES (\(unbound: columns.count)) ON CONFLICT (id) DO NOTHING"
    }()
    private static let updateSessionText: SQL = {
        let assignments = SQL.joined(SessionRow.shape.updatedColumns.map { "\(raw: $0.name) = \(unbound: 1)" })
        return "UPDATE sessions SET \(assignments) WHERE id = \(unbound: 1) AND version = \(unbound: 1) AND trail_seq = \(unbound: 1)"
    }()

    /// Why `write` cannot be written as it is, from what the decision assumed (checked before
    /// anything is written); nil when nothing assumed has changed. An answer stored under the
    /// request's key meanwhile is returned (`answered`) rather than overwritten.
    private func refusal(of write: ActionWrite) async throws -> ActionWriteOutcome? {
        if let answer = write.answer, let stored = try await storedAnswer(sessionID: write.row.id, key: answer.key, since: write.answersSince) {
            return .answered(stored)
        }
        // A sign-in decided before an erasure committed (bcrypt runs outside any transaction):
        // no token, and no session signed in, for a person who is gone. Erasure locks the
        // user's row first (PostgreSQL), so this read waits for it (`UserErasure.erase`).
        for user in Set(write.issuedTokens.map(\.userID)) where try await !connection.userIsLive(user) {
            return .stale(reason: "user \(user) was erased")
        }
        let assumed = write.assumptions
        if let tokenID = assumed.tokenUnrevoked,
           try await connection.queryOne("SELECT 1 FROM tokens WHERE id = \(tokenID) AND revoked_at IS NULL") == nil {
            return .stale(reason: "the session's token was revoked")
        }
        if let notBought = assumed.notBought, !notBought.photoIDs.isEmpty, try await owns(notBought.userID, notBought.photoIDs) {
            return .stale(reason: "a photo assumed not bought was bought")
        }
        if let list = assumed.purchaseCount,
           try await connection.queryOne("SELECT count(*) AS bought FROM purchases WHERE user_id = \(list.userID)")?.int("bought") != list.count {
            return .stale(reason: "the purchase list changed")
        }
        return nil
    }

    /// True when `userID` bought any of `photoIDs`.
    private func owns(_ userID: Int64, _ photoIDs: Set<Int64>) async throws -> Bool {
        let ids = photoIDs.sorted()
        return try await connection.queryOne(
            "SELECT 1 FROM purchases WHERE user_id = \(userID) AND photo_id IN (\(list: ids)) LIMIT 1") != nil
    }

    private func storedAnswer(sessionID: String, key: String, since: String) async throws -> StoredAnswerRecord? {
        try await connection.queryOne(
            "SELECT request_hash, response FROM idempotency_keys WHERE session_id = \(sessionID) AND key = \(key) AND created_at > \(since)"
        ).map { StoredAnswerRecord(requestHash: try $0.string("request_hash"), response: try $0.string("response")) }
    }

    private static func photo(_ row: Row) throws -> PhotoRecord {
        PhotoRecord(id: try row.int64("id"), title: try row.string("title"), url: try row.string("url"), priceCents: try row.int("price_cents"))
    }

}

/// The contract inside the writer's transaction that goes on after a refusal
/// (`withSessionLocked`): each write under a savepoint, rolled back to when it is refused, so the transaction stays usable.
struct SQLiteSessionActionsInSavepoints: SessionActions {
    let connection: any DatabaseConnection

    /// The contract on `connection`, inside its transaction.
    init(_ connection: any DatabaseConnection) {
        self.connection = connection
    }

    func readForAction(_ read: ActionRead) async throws -> ActionSnapshot {
        try await SQLiteSessionActions(connection).readForAction(read)
    }

    func writeDecision(_ write: ActionWrite) async throws -> ActionWriteOutcome {
        try await connection.execute("SAVEPOINT photosd_action_write")
        do {
            let outcome = try await SQLiteSessionActions(connection).writeDecision(write)
            try await connection.execute("RELEASE SAVEPOINT photosd_action_write")
            return outcome
        } catch let refused as StaleWrite {
            try await connection.execute("ROLLBACK TO SAVEPOINT photosd_action_write")
            try await connection.execute("RELEASE SAVEPOINT photosd_action_write")
            return refused.outcome
        } catch let error as any DatabaseFailure where error.isUniqueViolation {
            try await connection.execute("ROLLBACK TO SAVEPOINT photosd_action_write")
            try await connection.execute("RELEASE SAVEPOINT photosd_action_write")
            return .stale(reason: "a row the write inserts exists: \(error.failureSummary)")
        }
    }
}

/// Thrown inside a transaction by a write that found, after it had begun writing, that it
/// cannot be kept (another writer took a purchase or a token id between check and insert): the
/// caller rolls the transaction back and reports `outcome`.
struct StaleWrite: Error {
    /// What to report.
    let outcome: ActionWriteOutcome

    /// A write that cannot be kept, for `outcome`.
    init(outcome: ActionWriteOutcome) { self.outcome = outcome }
}
