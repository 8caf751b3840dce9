import DatabaseAccess
import Foundation
import PhotosModel
import PostgresNIO

/// The action contract on PostgreSQL as one statement each, one round trip each, no
/// transaction held open across them and no row locked (`PostgresStorage+SessionActions`):
///
/// - `ActionReadStatement`: the session row, and the facts asked for — the named photos
///   (and with `namedByRow`, those the row's `photo_ids` names), which of them each user owns
///   (or whole purchase lists), a token's row — and the answer stored for the request's key.
/// - `ActionWriteStatement`: the session row only if still at the version and trail seq
///   expected; the audit rows (the append lock held shared first, as every append); the
///   purchases, the tokens issued or revoked; the idempotency answer. What the decision assumed,
///   a purchase that meanwhile exists, or an answer stored meanwhile calls
///   `photosd_stale_facts` (migration 0008), whose error aborts the whole statement: nothing is
///   kept. `NavigationWriteStatement` is the same for a decision with no effect and no answer
///   (most navigation): every table a statement writes is opened and locked with its indexes on
///   every run, rows or not.
/// - `SessionCreateStatement`: a new session's row and its first audit rows.
///
/// Values are bound where they appear (`BoundSQL`) and rows are read by column name
/// (`NamedCells`). The rows written in bulk (audit rows, purchases, tokens) travel as one JSON
/// array of arrays each, whose order and the statement's extraction (`e ->> 0`, …) are both made
/// from one list of the columns (`AuditRowValues.columns`, `purchaseRow`, `tokenRow`), so
/// nothing is matched by a position written by hand twice. (Not `jsonb_populate_recordset`, which
/// reads objects by key: it cost 3.5 times the server's CPU per row — 0.75 s against 0.21 s for
/// 200,000 audit rows — and its statement kept a custom plan, 0.3 ms more per purchase.)
enum SessionStatements {
    /// The rows of a write, made ready once (JSON texts), for the statement's bindings.
    struct WriteInput: Sendable {
        let write: ActionWrite
        let audit: String
        let purchases: String
        let issuedTokens: String
        var expectedVersion: Int?
        var expectedTrailSeq: Int?

        init(_ write: ActionWrite) {
            self.write = write
            audit = SessionStatements.jsonArrays(write.audit.map { $0.values.map(\.databaseValue) })
            purchases = SessionStatements.jsonArrays(write.purchases.map { SessionStatements.purchaseRow($0).map(\.value) })
            issuedTokens = SessionStatements.jsonArrays(write.issuedTokens.map { SessionStatements.tokenRow($0).map(\.value) })
            if case .update(let version, let trailSeq) = write.kind {
                expectedVersion = version
                expectedTrailSeq = trailSeq
            }
        }
    }

    /// A JSON array of arrays, one per row, in column order.
    static func jsonArrays(_ rows: [[DatabaseValue]]) -> String {
        var builder = JSONBuilder(capacity: 64 + 400 * rows.count)
        builder.beginArray()
        for row in rows {
            builder.beginArray()
            for value in row { append(value, to: &builder) }
            builder.endArray()
        }
        builder.endArray()
        return builder.text
    }

    /// `value` as a JSON value (a blob as its UTF-8 text).
    static func append(_ value: DatabaseValue, to builder: inout JSONBuilder) {
        switch value {
        case .null: builder.null()
        case .integer(let number): builder.int(number)
        case .real(let number): builder.string(String(number))
        case .text(let text): builder.string(text)
        case .blob(let bytes): builder.string(String(decoding: bytes, as: UTF8.self))
        }
    }

    /// A purchase's columns as `bought` inserts them: the one list of their names, kinds and
    /// values, which both the JSON array and the statement's extraction are made from.
    static func purchaseRow(_ purchase: PurchaseRecord) -> [(name: String, value: DatabaseValue)] {
        [("user_id", .integer(purchase.userID)), ("photo_id", .integer(purchase.photoID)), ("price_cents", .integer(Int64(purchase.priceCents)))]
    }

    /// A token's columns as `issued` inserts them (as `purchaseRow`).
    static func tokenRow(_ token: IssuedTokenRecord) -> [(name: String, value: DatabaseValue)] {
        [
            ("id", .integer(token.id)), ("token_hash", .text(token.tokenHash)), ("user_id", .integer(token.userID)),
            ("issued_at", .text(token.issuedAt)), ("expires_at", .text(token.expiresAt)),
        ]
    }

    /// `(name, …) SELECT e ->> 0, (e ->> 1)::bigint, …` for rows shaped as `sample`: each column
    /// from its place in `jsonArrays`, integers cast.
    static func extraction(_ sample: [(name: String, value: DatabaseValue)]) -> (columns: String, values: String) {
        (
            sample.map(\.name).joined(separator: ", "),
            sample.enumerated().map { index, column in
                if case .integer = column.value { return "(e ->> \(index))::bigint" }
                return "e ->> \(index)"
            }.joined(separator: ", ")
        )
    }

    static let purchaseExtraction = extraction(purchaseRow(PurchaseRecord(userID: 0, photoID: 0, priceCents: 0)))
    static let tokenExtraction = extraction(tokenRow(IssuedTokenRecord(id: 0, tokenHash: "", userID: 0, issuedAt: "", expiresAt: "")))

    static let auditColumns = AuditRowValues.columns.joined(separator: ", ")
    /// `e ->> 0, (e ->> 1)::bigint, …`: each audit column from its place in `jsonArrays`.
    static let auditExtraction = AuditRowValues.columns.enumerated().map { index, name in
        AuditRowValues.integerColumns.contains(name) ? "(e ->> \(index))::bigint" : "e ->> \(index)"
    }.joined(separator: ", ")

    /// The audit rows' insert of every writing statement, only if the CTE `step` (the session's
    /// update or insert) wrote its row; in seq order.
    static func auditInsert(after step: String) -> BoundSQL<WriteInput> {
        """
        INSERT INTO audit_events (\(sql: auditColumns))
                SELECT \(sql: auditExtraction) FROM \(sql: step), jsonb_array_elements(\({ $0.audit }, .jsonb)) WITH ORDINALITY AS r(e, n)
                ORDER BY n
                RETURNING 1
        """
    }
}

/// The session and the facts, in one round trip.
struct ActionReadStatement: PostgresPreparedStatement {
    static let name = "photosd_action_read"
    static let bound: BoundSQL<ActionRead> = """
        WITH s AS (
            SELECT version, state, trail_seq, trail_hash,
                user_id, layout, token_id, photo_ids, updated_at, ended_at
            FROM sessions WHERE id = \({ $0.sessionID }, .text)
        ),
        wanted AS (
            SELECT
                ARRAY(SELECT unnest(\(ids: { $0.facts.photoIDs }))
                    UNION SELECT unnest(s.photo_ids::bigint[]) FROM s WHERE \(flag: { $0.namedByRow })
                    ORDER BY 1) AS photos,
                ARRAY(SELECT unnest(\(ids: { $0.facts.userIDs }))
                    UNION SELECT s.user_id FROM s WHERE \(flag: { $0.namedByRow }) AND s.user_id IS NOT NULL
                    ORDER BY 1) AS users,
                \(flag: { $0.facts.purchaseLists })
                    OR coalesce((SELECT s.layout = 'tabs' FROM s WHERE \(flag: { $0.namedByRow })), false) AS lists,
                coalesce(\({ $0.facts.tokenID }, .bigint), (SELECT s.token_id FROM s WHERE \(flag: { $0.namedByRow }))) AS token_id
        )
        SELECT s.version, s.state, s.trail_seq, s.trail_hash, s.updated_at, s.ended_at,
            w.photos::text AS photo_ids, w.users::text AS user_ids, w.lists AS purchase_lists, w.token_id,
            (SELECT coalesce(jsonb_agg(jsonb_build_array(p.id, p.title, p.url, p.price_cents)), '[]')
                FROM photos p WHERE p.id = ANY(w.photos))::text AS photos,
            (SELECT coalesce(jsonb_agg(jsonb_build_array(b.user_id, p.id, p.title, p.url, p.price_cents) ORDER BY b.user_id, b.id DESC), '[]')
                FROM purchases b JOIN photos p ON p.id = b.photo_id
                WHERE b.user_id = ANY(w.users) AND (w.lists OR b.photo_id = ANY(w.photos)))::text AS purchases,
            t.id AS token_row, t.expires_at AS token_expires_at, t.revoked_at IS NOT NULL AS token_revoked,
            (SELECT jsonb_build_array(k.request_hash, k.response) FROM idempotency_keys k
                WHERE k.session_id = \({ $0.sessionID }, .text) AND k.key = \({ $0.answerKey }, .text)
                    AND k.created_at > \({ $0.answersSince }, .text))::text AS answer
        FROM wanted w LEFT JOIN s ON true LEFT JOIN tokens t ON t.id = w.token_id
        """
    static var sql: String { bound.text }

    let read: ActionRead

    func makeBindings() throws -> PostgresBindings { Self.bound.bindings(read) }

    func decodeRow(_ row: PostgresRow) throws -> ActionSnapshot {
        let row = NamedCells(row)
        var session: SessionRowRead?
        if let version = try row.optionalInt64("version") {
            session = SessionRowRead(
                version: Int(version), stateText: try row.string("state"), trailSeq: Int(try row.int64("trail_seq")),
                trailHash: try row.string("trail_hash"), updatedAt: try row.string("updated_at"), endedAt: try row.optionalString("ended_at"))
        }
        guard let photoIDs = IDList.ids(try row.string("photo_ids")), let userIDs = IDList.ids(try row.string("user_ids")) else {
            throw PostgresStoreError.undecodable(column: "photo_ids or user_ids", type: "bigint[]")
        }
        let covered = FactsWanted(
            photoIDs: photoIDs, userIDs: userIDs, purchaseLists: try row.bool("purchase_lists"), tokenID: try row.optionalInt64("token_id"))
        var purchases: [Int64: [PhotoRecord]] = [:]
        for bought in try row.json([PurchasedPhoto].self, "purchases") {
            purchases[bought.userID, default: []].append(bought.record)
        }
        var token: TokenRecord?
        if let id = try row.optionalInt64("token_row") {
            token = TokenRecord(id: id, expiresAt: try row.string("token_expires_at"), revoked: try row.bool("token_revoked"))
        }
        let answer = try row.optionalString("answer").map { text in
            let stored = try NamedCells.decode(StoredAnswer.self, text, column: "answer")
            return StoredAnswerRecord(requestHash: stored.requestHash, response: stored.response)
        }
        return ActionSnapshot(
            session: session, covered: covered, photos: try row.json([PhotoRow].self, "photos").map(\.record), purchases: purchases,
            token: token, answer: answer)
    }

    // The JSON values this statement builds, read in the order its `jsonb_build_array` lists them.

    /// `[id, title, url, price_cents]`.
    private struct PhotoRow: Decodable {
        let record: PhotoRecord
        init(from decoder: any Decoder) throws {
            var row = try decoder.unkeyedContainer()
            record = PhotoRecord(
                id: try row.decode(Int64.self), title: try row.decode(String.self), url: try row.decode(String.self),
                priceCents: try row.decode(Int.self))
        }
    }

    /// `[user_id, id, title, url, price_cents]`.
    private struct PurchasedPhoto: Decodable {
        let userID: Int64
        let record: PhotoRecord
        init(from decoder: any Decoder) throws {
            var row = try decoder.unkeyedContainer()
            userID = try row.decode(Int64.self)
            record = PhotoRecord(
                id: try row.decode(Int64.self), title: try row.decode(String.self), url: try row.decode(String.self),
                priceCents: try row.decode(Int.self))
        }
    }

    /// `[request_hash, response]`.
    private struct StoredAnswer: Decodable {
        let requestHash: String, response: String
        init(from decoder: any Decoder) throws {
            var row = try decoder.unkeyedContainer()
            requestHash = try row.decode(String.self)
            response = try row.decode(String.self)
        }
    }
}

/// The session row, the audit rows, the effects and the idempotency answer, in one round trip.
struct ActionWriteStatement: PostgresPreparedStatement {
    static let name = "photosd_action_write"
    static let bound = writeSQL(effects: true)
    static var sql: String { bound.text }

    let input: SessionStatements.WriteInput

    func makeBindings() throws -> PostgresBindings { Self.bound.bindings(input) }
    func decodeRow(_ row: PostgresRow) throws -> Int64 { try NamedCells(row).int64("written") }

    /// The text of `ActionWriteStatement` (`effects`) or `NavigationWriteStatement`.
    static func writeSQL(effects: Bool) -> BoundSQL<SessionStatements.WriteInput> {
        let effectClauses: BoundSQL<SessionStatements.WriteInput> = """
            ,
            bought AS (
                INSERT INTO purchases (\(sql: SessionStatements.purchaseExtraction.columns), purchased_at, session_id)
                SELECT \(sql: SessionStatements.purchaseExtraction.values), \({ $0.write.at }, .text), \({ $0.write.row.id }, .text)
                FROM session, jsonb_array_elements(\({ $0.purchases }, .jsonb)) AS e
                ON CONFLICT (user_id, photo_id) DO NOTHING
                RETURNING 1
            ),
            signer AS (
                SELECT id FROM users
                WHERE id = \({ $0.write.issuedTokens.first?.userID }, .bigint) AND erased_at IS NULL
                FOR SHARE
            ),
            issued AS (
                INSERT INTO tokens (\(sql: SessionStatements.tokenExtraction.columns))
                SELECT \(sql: SessionStatements.tokenExtraction.values)
                FROM session, jsonb_array_elements(\({ $0.issuedTokens }, .jsonb)) AS e
                RETURNING 1
            ),
            revoked AS (
                UPDATE tokens SET revoked_at = \({ $0.write.at }, .text)
                WHERE revoked_at IS NULL AND id = ANY(\(ids: { $0.write.revokedTokenIDs })) AND EXISTS (SELECT 1 FROM session)
                RETURNING 1
            ),
            answered AS (
                INSERT INTO idempotency_keys (session_id, key, request_hash, response, created_at)
                SELECT \({ $0.write.row.id }, .text), \({ $0.write.answer?.key }, .text), \({ $0.write.answer?.requestHash }, .text),
                    \({ $0.write.answer?.response }, .text), \({ $0.write.answer?.createdAt }, .text)
                FROM session WHERE \(flag: { $0.write.answer != nil })
                ON CONFLICT (session_id, key) DO UPDATE SET
                    request_hash = excluded.request_hash, response = excluded.response, created_at = excluded.created_at
                    WHERE idempotency_keys.created_at <= \({ $0.write.answersSince }, .text)
                RETURNING 1
            )
            """
        // A token only for a user not erased: the erasure updates the user's row first, so
        // `signer` waits for it to commit and then finds the row erased (`UserErasure.erase`).
        let effectChecks: BoundSQL<SessionStatements.WriteInput> = """

                WHEN \({ $0.write.issuedTokens.first?.userID }, .bigint) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM signer)
                    THEN photosd_stale_facts('the user was erased')
                WHEN (SELECT count(*) FROM bought) <> \({ $0.write.purchases.count }, .bigint)
                    THEN photosd_stale_facts('a photo was bought meanwhile')
                WHEN (SELECT count(*) FROM answered) <> \({ $0.write.answer == nil ? 0 : 1 }, .bigint)
                    THEN photosd_stale_facts('the request was answered meanwhile')
                ELSE 1 + 0 * ((SELECT count(*) FROM audit) + (SELECT count(*) FROM issued) + (SELECT count(*) FROM revoked))
            """
        // The session's conditional update and its audit rows, which both forms share; the
        // write with effects adds its clauses and their checks. (Parts compose: their
        // placeholders are numbered in the whole statement.)
        let head: BoundSQL<SessionStatements.WriteInput> = """
            WITH held AS (
                SELECT pg_advisory_xact_lock_shared(\(sql: String(AuditRowValues.appendLockKey)))
            ),
            session AS (
                UPDATE sessions SET \(assigning: { $0.write.row })
                WHERE id = \({ $0.write.row.id }, .text) AND version = \({ $0.expectedVersion }, .bigint)
                    AND trail_seq = \({ $0.expectedTrailSeq }, .bigint) AND EXISTS (SELECT 1 FROM held)
                RETURNING id
            ),
            audit AS (\(SessionStatements.auditInsert(after: "session")))
            """
        return effects ? """
            \(head)\(effectClauses)
            SELECT CASE
                WHEN NOT EXISTS (SELECT 1 FROM session) THEN 0\(assumptionChecks)\(effectChecks)
            END AS written
            """ : """
            \(head)
            SELECT CASE
                WHEN NOT EXISTS (SELECT 1 FROM session) THEN 0\(assumptionChecks)
                ELSE 1 + 0 * (SELECT count(*) FROM audit)
            END AS written
            """
    }

    /// What the decision assumed, each refused with the reason it gives.
    static let assumptionChecks: BoundSQL<SessionStatements.WriteInput> = """

            WHEN \({ $0.write.assumptions.tokenUnrevoked }, .bigint) IS NOT NULL AND NOT EXISTS (
                    SELECT 1 FROM tokens t WHERE t.id = \({ $0.write.assumptions.tokenUnrevoked }, .bigint) AND t.revoked_at IS NULL)
                THEN photosd_stale_facts('the session''s token was revoked')
            WHEN EXISTS (SELECT 1 FROM purchases b WHERE b.user_id = \({ $0.write.assumptions.notBought?.userID }, .bigint)
                    AND b.photo_id = ANY(\(ids: { $0.write.assumptions.notBought?.photoIDs ?? [] })))
                THEN photosd_stale_facts('a photo assumed not bought was bought')
            WHEN \({ $0.write.assumptions.purchaseCount?.userID }, .bigint) IS NOT NULL
                    AND (SELECT count(*) FROM purchases b WHERE b.user_id = \({ $0.write.assumptions.purchaseCount?.userID }, .bigint))
                        <> \({ $0.write.assumptions.purchaseCount?.count }, .bigint)
                THEN photosd_stale_facts('the purchase list changed')
        """
}

/// `ActionWriteStatement` for a decision with no effect and no answer to keep.
struct NavigationWriteStatement: PostgresPreparedStatement {
    static let name = "photosd_action_write_navigation"
    static let bound = ActionWriteStatement.writeSQL(effects: false)
    static var sql: String { bound.text }

    let input: SessionStatements.WriteInput

    func makeBindings() throws -> PostgresBindings { Self.bound.bindings(input) }
    func decodeRow(_ row: PostgresRow) throws -> Int64 { try NamedCells(row).int64("written") }
}

/// A new session's row and its first audit rows, in one round trip.
struct SessionCreateStatement: PostgresPreparedStatement {
    static let name = "photosd_session_create"
    static let bound: BoundSQL<SessionStatements.WriteInput> = """
        WITH held AS (
            SELECT pg_advisory_xact_lock_shared(\(sql: String(AuditRowValues.appendLockKey)))
        ),
        session AS (
            INSERT INTO sessions \(inserting: { $0.write.row }) FROM held
            ON CONFLICT (id) DO NOTHING
            RETURNING id
        ),
        audit AS (\(SessionStatements.auditInsert(after: "session")))
        SELECT (SELECT count(*) FROM session) + 0 * (SELECT count(*) FROM audit) AS written
        """
    static var sql: String { bound.text }

    let input: SessionStatements.WriteInput

    func makeBindings() throws -> PostgresBindings { Self.bound.bindings(input) }
    func decodeRow(_ row: PostgresRow) throws -> Int64 { try NamedCells(row).int64("written") }
}

/// A row's cells by column name: a column a statement no longer returns, or a value of another
/// type, is an error naming the column, never a value read from the wrong place.
struct NamedCells {
    /// The cells in the row's order. A statement returns a dozen columns at most: a linear
    /// search by name costs less than the dictionary `PostgresRow.makeRandomAccess()` builds
    /// for every row.
    let cells: [PostgresCell]

    init(_ row: PostgresRow) { cells = Array(row) }

    func value(_ column: String) throws -> DatabaseValue {
        guard let cell = cells.first(where: { $0.columnName == column }) else {
            throw PostgresStoreError.undecodable(column: column, type: "a column the statement does not return")
        }
        return try PostgresTransactionConnection.value(cell)
    }

    func optionalInt64(_ column: String) throws -> Int64? {
        switch try value(column) {
        case .null: return nil
        case .integer(let number): return number
        default: throw PostgresStoreError.undecodable(column: column, type: "bigint")
        }
    }

    func int64(_ column: String) throws -> Int64 {
        guard let number = try optionalInt64(column) else { throw PostgresStoreError.undecodable(column: column, type: "bigint, not NULL") }
        return number
    }

    func bool(_ column: String) throws -> Bool { try int64(column) != 0 }

    func optionalString(_ column: String) throws -> String? {
        switch try value(column) {
        case .null: return nil
        case .text(let text): return text
        default: throw PostgresStoreError.undecodable(column: column, type: "text")
        }
    }

    func string(_ column: String) throws -> String {
        guard let text = try optionalString(column) else { throw PostgresStoreError.undecodable(column: column, type: "text, not NULL") }
        return text
    }

    func json<T: Decodable>(_ type: T.Type, _ column: String) throws -> T {
        try Self.decode(type, try string(column), column: column)
    }

    static func decode<T: Decodable>(_ type: T.Type, _ text: String, column: String) throws -> T {
        do {
            return try JSONDecoder().decode(type, from: Data(text.utf8))
        } catch {
            throw PostgresStoreError.undecodable(column: column, type: "JSON of \(T.self)")
        }
    }
}
