import DatabaseAccess
import Foundation
import Navigation
import PhotosCore
import PhotosModel

/// An action's read and write as one statement each, for a store that runs single statements
/// in one round trip (`SingleStatementStore`: PostgreSQL). What SQLite does in a read snapshot
/// and a write transaction of a few statements (`SessionCoordinator.applyOptimistically`), these
/// do in one statement each, with the same result:
///
/// - `Read`: the session row, and the facts its decision may need — the photos its state and
///   the action name (every `photoId` in the state's JSON), which of them its user (and a user
///   signing in) owns, or their whole purchase lists in a tabs session, whether its token is
///   live — and the answer stored for the request's `Idempotency-Key`. What the read covered is
///   returned with it, and checked against what the decision really needs
///   (`SessionMachine.needs`): a need it did not cover is read the usual way.
/// - `Write`: the session row only if still at the version and trail seq read; the audit rows
///   (with the append lock held shared first, as every append); the purchase, the token issued
///   or revoked; the idempotency answer. A purchase that meanwhile exists, or a token no longer
///   as live as read, calls `photosd_stale_facts` (migration 0008), whose error aborts the whole
///   statement: nothing is kept, and the action is decided again. So does a photo assumed not
///   bought (`KnownFacts`) that was, and an answer stored meanwhile under the request's key.
enum ActionStatements {
    /// The session and the facts, in one round trip.
    enum Read: NamedStatement {
        static let name = "action_read"
        static let sql = """
            WITH s AS (
                SELECT version, CASE WHEN version = ?::bigint THEN NULL ELSE state END AS state, trail_seq, trail_hash,
                    user_id, layout, token_id, photo_ids, CASE WHEN photo_ids IS NULL THEN state::jsonb END AS j
                FROM sessions WHERE id = ?::text
            ),
            ids AS (
                SELECT ARRAY(
                    SELECT unnest(s.photo_ids::bigint[]) FROM s WHERE s.photo_ids IS NOT NULL
                    UNION SELECT (v #>> '{}')::bigint FROM s, jsonb_path_query(s.j, 'strict $.**.photoId') AS v
                        WHERE s.j IS NOT NULL AND jsonb_typeof(v) = 'number'
                    UNION SELECT unnest(?::bigint[])
                    ORDER BY 1) AS a
            ),
            users AS (
                SELECT ARRAY(
                    SELECT s.user_id FROM s WHERE s.user_id IS NOT NULL
                    UNION SELECT unnest(?::bigint[])
                    ORDER BY 1) AS a
            ),
            head AS (
                SELECT CASE WHEN s.j IS NULL THEN s.token_id ELSE (s.j ->> 'tokenId')::bigint END AS token_id,
                    (?::bigint <> 0) OR coalesce(CASE WHEN s.j IS NULL THEN s.layout = 'tabs' ELSE jsonb_typeof(s.j -> 'tabs') = 'object' END, false)
                        AS wanted
                FROM s
            )
            SELECT s.version, s.state, s.trail_seq, s.trail_hash,
                ids.a::text,
                users.a::text,
                head.wanted,
                (SELECT coalesce(jsonb_agg(jsonb_build_array(p.id, p.title, p.url, p.price_cents)), '[]')
                    FROM photos p WHERE p.id = ANY(ids.a))::text,
                (SELECT coalesce(jsonb_agg(bought.photo ORDER BY bought.user_id, bought.id DESC), '[]')
                    FROM (SELECT b.user_id, b.id, (SELECT jsonb_build_array(b.user_id, p.id, p.title, p.url, p.price_cents)
                            FROM photos p WHERE p.id = b.photo_id) AS photo
                        FROM purchases b
                        WHERE b.user_id = ANY(users.a) AND (head.wanted OR b.photo_id = ANY(ids.a))) AS bought)::text,
                (SELECT t.revoked_at IS NULL AND t.expires_at > ?::text FROM tokens t WHERE t.id = head.token_id),
                (SELECT jsonb_build_array(k.request_hash, k.response) FROM idempotency_keys k
                    WHERE k.session_id = ?::text AND k.key = ?::text AND k.created_at > ?::text)::text,
                head.token_id
            FROM s, head, ids, users
            """
    }

    /// The session row, the audit rows, the effects and the idempotency answer, in one round trip.
    enum Write: NamedStatement {
        static let name = "action_write"
        static let sql = writeSQL(effects: true)
    }

    /// `Write` for a decision with no effect and no answer to keep (most navigation): the session
    /// row and the audit rows only. Every table a statement writes is opened and locked with its
    /// indexes on every run, rows or not; this one leaves purchases, tokens and idempotency
    /// answers alone.
    enum NavigationWrite: NamedStatement {
        static let name = "action_write_navigation"
        static let sql = writeSQL(effects: false)
    }

    /// The text of `Write` (`effects`) or `NavigationWrite`.
    private static func writeSQL(effects: Bool) -> String {
        let effectClauses = """
            ,
            bought AS (
                INSERT INTO purchases (user_id, photo_id, price_cents, purchased_at, session_id)
                SELECT (e ->> 0)::bigint, (e ->> 1)::bigint, (e ->> 2)::bigint, ?::text, ?::text FROM session, jsonb_array_elements(?::jsonb) AS e
                ON CONFLICT (user_id, photo_id) DO NOTHING
                RETURNING 1
            ),
            issued AS (
                INSERT INTO tokens (id, token_hash, user_id, issued_at, expires_at)
                SELECT (e ->> 0)::bigint, e ->> 1, (e ->> 2)::bigint, e ->> 3, e ->> 4 FROM session, jsonb_array_elements(?::jsonb) AS e
                RETURNING 1
            ),
            revoked AS (
                UPDATE tokens SET revoked_at = ?::text
                WHERE revoked_at IS NULL AND id = ANY(?::bigint[]) AND EXISTS (SELECT 1 FROM session)
                RETURNING 1
            ),
            answered AS (
                INSERT INTO idempotency_keys (session_id, key, request_hash, response, created_at)
                SELECT ?::text, e ->> 0, e ->> 1, e ->> 2, e ->> 3 FROM session, jsonb_array_elements(?::jsonb) AS e
                ON CONFLICT (session_id, key) DO UPDATE SET
                    request_hash = excluded.request_hash, response = excluded.response, created_at = excluded.created_at
                    WHERE idempotency_keys.created_at <= ?::text
                RETURNING 1
            )
            """
        return """
            WITH held AS (
                SELECT pg_advisory_xact_lock_shared(?::bigint)
            ),
            session AS (
                UPDATE sessions SET version = ?::bigint, state = ?::text, user_id = ?::bigint, updated_at = ?::text,
                    trail_seq = ?::bigint, trail_hash = ?::text,
                    layout = ?::text, top_screen = ?::text, token_id = ?::bigint, photo_ids = ?::text
                WHERE id = ?::text AND version = ?::bigint AND trail_seq = ?::bigint AND EXISTS (SELECT 1 FROM held)
                RETURNING id
            ),
            audit AS (\(auditInsert(after: "session")))\(effects ? effectClauses : "")
            SELECT CASE
                WHEN NOT EXISTS (SELECT 1 FROM session) THEN 0
                WHEN ?::bigint IS NOT NULL
                    AND EXISTS (SELECT 1 FROM tokens t WHERE t.id = ?::bigint AND t.revoked_at IS NULL AND t.expires_at > ?::text) <> (?::bigint <> 0)
                    THEN photosd_stale_facts('the session''s token changed')
                WHEN EXISTS (SELECT 1 FROM purchases b WHERE b.user_id = ?::bigint AND b.photo_id = ANY(?::bigint[]))
                    THEN photosd_stale_facts('a photo was bought meanwhile')
                WHEN ?::bigint IS NOT NULL AND (SELECT count(*) FROM purchases b WHERE b.user_id = ?::bigint) <> ?::bigint
                    THEN photosd_stale_facts('the purchase list changed')\(effects ? """

                WHEN (SELECT count(*) FROM bought) <> ?::bigint THEN photosd_stale_facts('a photo was bought meanwhile')
                WHEN (SELECT count(*) FROM answered) <> ?::bigint THEN photosd_stale_facts('the request was answered meanwhile')
                ELSE 1 + 0 * ((SELECT count(*) FROM audit) + (SELECT count(*) FROM issued) + (SELECT count(*) FROM revoked))
            """ : """

                ELSE 1 + 0 * (SELECT count(*) FROM audit)
            """)
            END
            """
    }

    /// The session and facts `Read` found, and what it covered.
    struct Snapshot {
        var loaded: SessionCoordinator.LoadedSession
        var photoIDs: Set<Int64>
        var userIDs: Set<Int64>
        var purchaseLists: Bool
        var photos: [Int64: Photo]
        /// Per user: their purchases among the photos read (or all, with `purchaseLists`), newest first.
        var purchases: [Int64: [Photo]]
        var tokenLive: Bool?
        /// The token whose liveness `tokenLive` is (the session row's `token_id`).
        var tokenID: Int64?
        /// The stored answer's request hash and response, when the key had one.
        var idempotent: (requestHash: String, response: String)?

        /// The facts for `needs`, or nil when the read did not cover them.
        func facts(for needs: SessionFacts.Needs, now: String, credentials: CredentialCheck?, newToken: TokenGrant?) -> SessionFacts? {
            guard needs.photoIDs.isSubset(of: photoIDs), needs.userIDs.isSubset(of: userIDs), !needs.purchaseLists || purchaseLists,
                  needs.tokenID == tokenID
            else { return nil }
            var facts = SessionFacts(now: now, credentials: credentials, newToken: newToken)
            facts.photos = photos.filter { needs.photoIDs.contains($0.key) }
            for userID in needs.userIDs {
                let bought = purchases[userID] ?? []
                if needs.purchaseLists {
                    facts.purchased[userID] = bought
                    facts.owned[userID] = Set(bought.map(\.id))
                } else if !needs.photoIDs.isEmpty {
                    facts.owned[userID] = Set(bought.map(\.id)).intersection(needs.photoIDs)
                }
            }
            if needs.tokenID != nil { facts.tokenLive = tokenLive ?? false }
            return facts
        }
    }

    /// The arguments of `Read` for `action` on `sessionID`.
    /// With `cachedVersion`, the state is not fetched when the session is still at that version.
    static func readArguments(
        sessionID: String, cachedVersion: Int?, action: ClientAction, signingIn: Int64?, now: String, idempotencyKey: String?,
        since: String
    ) -> [any DatabaseBindable] {
        let photoIDs = Set([action.photoId, action.link?.photoID].compactMap { $0 })
        return [
            cachedVersion ?? -1, sessionID,
            SessionColumns.arrayLiteral(photoIDs), SessionColumns.arrayLiteral(Set([signingIn].compactMap { $0 })), action.link == .purchases,
            now, sessionID, idempotencyKey, since,
        ]
    }

    /// Reads `Read`'s one row (nil: no such session).
    /// Reads `Read`'s one row (nil: no such session). `cached` is the entry whose version the
    /// read was given: its state stands in for the state the read did not fetch.
    static func snapshot(_ rows: [Row], sessionID: String, cached: StateCache.Entry?, cache: StateCache) throws -> Snapshot? {
        guard let row = rows.first else { return nil }
        let version = try row.int(0), trailSeq = try row.int(2), trailHash = try row.string(3)
        let loaded: SessionCoordinator.LoadedSession
        if let text = row.optionalString(1) {
            loaded = try SessionCoordinator.loaded(sessionID, version: version, text: text, trailSeq: trailSeq, trailHash: trailHash, cache: cache)
        } else if let cached, cached.version == version {
            loaded = SessionCoordinator.LoadedSession(version: version, state: cached.state, trailSeq: trailSeq, trailHash: trailHash)
        } else {
            throw SessionStateError(sessionID: sessionID, problem: "the read left out a state it was not given")
        }
        func ids(_ column: Int) throws -> Set<Int64> {
            let text = try row.string(column)
            guard let ids = SessionColumns.ids(fromArrayLiteral: text) else {
                throw RowValueError(column: column, expected: "an array of ids", found: .text(text))
            }
            return ids
        }
        func decode<T: Decodable>(_ type: T.Type, _ text: String) throws -> T { try JSONDecoder().decode(type, from: Data(text.utf8)) }
        var snapshot = Snapshot(
            loaded: loaded, photoIDs: try ids(4), userIDs: try ids(5),
            purchaseLists: try row.int(6) != 0, photos: [:], purchases: [:], tokenLive: row.optionalInt(9).map { $0 != 0 },
            tokenID: row.optionalInt64(11), idempotent: nil)
        for photo in try decode([PhotoRow].self, row.string(7)) {
            snapshot.photos[photo.photo.id] = photo.photo
        }
        for purchase in try decode([PurchaseRow].self, row.string(8)) {
            snapshot.purchases[purchase.userID, default: []].append(purchase.photo)
        }
        if let stored = row.optionalString(10) {
            let pair = try decode([String].self, stored)
            if pair.count == 2 { snapshot.idempotent = (pair[0], pair[1]) }
        }
        return snapshot
    }

    /// The statement that writes `prepared` (`NavigationWrite` when it has no effect and no
    /// answer to keep, else `Write`) and its arguments: only if the session is still as
    /// `expected`, what a decision on known facts `assumed` still true (photos not bought by
    /// the session's user; a user's purchase list of the length known), and no answer stored
    /// under `answer`'s key since `since` (older answers have expired and are replaced).
    static func write(
        _ prepared: PreparedWrite, expected: PreparedWrite.Expected, answer: IdempotencyStore.StoredAnswer?, since: String,
        assumed: KnownFacts.Assumed = .init()
    ) -> (statement: any NamedStatement.Type, arguments: [any DatabaseBindable]) {
        let decision = prepared.decision
        let at = decision.records.first?.at ?? ""
        let state = decision.state
        var arguments: [any DatabaseBindable] = [
            AuditLog.appendLockKey,
            decision.version, prepared.stateText, state.user?.id, at, prepared.trailSeq, prepared.trailHash,
            prepared.columns.layout, prepared.columns.topScreen, prepared.columns.tokenID, prepared.columns.photoIDs,
            prepared.sessionID, expected.version, expected.trailSeq,
            auditRows(prepared).text,
        ]
        let effects = !decision.effects.isEmpty || answer != nil
        var purchaseCount = 0
        if effects {
            var purchases = JSONBuilder(), issued = JSONBuilder()
            var revoked = Set<Int64>()
            purchases.beginArray()
            issued.beginArray()
            for effect in decision.effects {
                switch effect {
                case .purchase(let userID, let photoID, let priceCents):
                    purchaseCount += 1
                    purchases.beginArray()
                    purchases.int(userID)
                    purchases.int(photoID)
                    purchases.int(priceCents)
                    purchases.endArray()
                case .issueToken(let grant, let userID):
                    issued.beginArray()
                    issued.int(grant.id)
                    issued.string(grant.tokenHash)
                    issued.int(userID)
                    issued.string(grant.issuedAt)
                    issued.string(grant.expiresAt)
                    issued.endArray()
                case .revokeToken(let id):
                    revoked.insert(id)
                }
            }
            purchases.endArray()
            issued.endArray()
            var answered = JSONBuilder()
            answered.beginArray()
            if let answer {
                answered.beginArray()
                answered.string(answer.key)
                answered.string(answer.requestHash)
                answered.string(answer.response)
                answered.string(answer.createdAt)
                answered.endArray()
            }
            answered.endArray()
            arguments += [
                at, prepared.sessionID, purchases.text,
                issued.text,
                at, SessionColumns.arrayLiteral(revoked),
                prepared.sessionID, answered.text, since,
            ]
        }
        arguments += [
            expected.token?.id, expected.token?.id, at, expected.token?.live,
            assumed.notBought?.user, SessionColumns.arrayLiteral(assumed.notBought?.photos ?? []),
            assumed.purchaseCount?.user, assumed.purchaseCount?.user, assumed.purchaseCount?.count,
        ]
        if effects {
            arguments += [purchaseCount, answer == nil ? 0 : 1]
            return (Write.self, arguments)
        }
        return (NavigationWrite.self, arguments)
    }

    /// The chained audit rows as one JSON array of arrays (the statements' `audit` CTE).
    static func auditRows(_ prepared: PreparedWrite) -> JSONBuilder {
        var audit = JSONBuilder(capacity: 512 * max(1, prepared.chained.count))
        audit.beginArray()
        for (record, previousHash, hash) in prepared.chained {
            audit.beginArray()
            audit.string(record.sessionID)
            audit.int(record.seq)
            audit.string(record.at)
            audit.string(record.actor)
            if let userID = record.userID { audit.int(userID) } else { audit.null() }
            optional(record.username, &audit)
            optional(record.coordinator, &audit)
            audit.string(record.step)
            optional(record.screen, &audit)
            audit.string(record.detail)
            audit.string(previousHash)
            audit.string(hash)
            audit.endArray()
        }
        audit.endArray()
        return audit
    }

    /// The audit rows' insert of both writing statements: the rows of `auditRows` (one bound
    /// JSON array), in seq order, only if the CTE `step` (the session's update or insert) did.
    static func auditInsert(after step: String) -> String {
        """
        INSERT INTO audit_events (session_id, seq, at, actor, user_id, username, coordinator, step, screen, detail, prev_hash, hash)
                SELECT e ->> 0, (e ->> 1)::bigint, e ->> 2, e ->> 3, (e ->> 4)::bigint, e ->> 5, e ->> 6, e ->> 7, e ->> 8, e ->> 9, e ->> 10, e ->> 11
                FROM \(step), jsonb_array_elements(?::jsonb) WITH ORDINALITY AS r(e, n) ORDER BY n
                RETURNING 1
        """
    }

    /// A new session's row and its first audit rows, in one round trip (a session created with
    /// no link needs no fact, so nothing is read first).
    enum Create: NamedStatement {
        static let name = "session_create"
        static let sql = """
            WITH held AS (
                SELECT pg_advisory_xact_lock_shared(?::bigint)
            ),
            created AS (
                INSERT INTO sessions (id, version, state, user_id, created_at, updated_at, trail_seq, trail_hash,
                    layout, top_screen, token_id, photo_ids)
                SELECT ?::text, ?::bigint, ?::text, ?::bigint, ?::text, ?::text, ?::bigint, ?::text,
                    ?::text, ?::text, ?::bigint, ?::text FROM held
                RETURNING id
            ),
            audit AS (\(auditInsert(after: "created")))
            SELECT (SELECT count(*) FROM created) + 0 * (SELECT count(*) FROM audit)
            """
    }

    /// The arguments of `Create`.
    static func createArguments(_ prepared: PreparedWrite, created: String) -> [any DatabaseBindable] {
        [
            AuditLog.appendLockKey,
            prepared.sessionID, prepared.decision.version, prepared.stateText, prepared.decision.state.user?.id, created, created,
            prepared.trailSeq, prepared.trailHash,
            prepared.columns.layout, prepared.columns.topScreen, prepared.columns.tokenID, prepared.columns.photoIDs,
            auditRows(prepared).text,
        ]
    }

    private static func optional(_ value: String?, _ builder: inout JSONBuilder) {
        if let value { builder.string(value) } else { builder.null() }
    }

    /// `[id, title, url, price_cents]`.
    private struct PhotoRow: Decodable {
        let photo: Photo
        init(from decoder: any Decoder) throws {
            var row = try decoder.unkeyedContainer()
            photo = Photo(
                id: try row.decode(Int64.self), title: try row.decode(String.self), url: try row.decode(String.self),
                priceCents: try row.decode(Int.self))
        }
    }

    /// `[user_id, id, title, url, price_cents]`.
    private struct PurchaseRow: Decodable {
        let userID: Int64
        let photo: Photo
        init(from decoder: any Decoder) throws {
            var row = try decoder.unkeyedContainer()
            userID = try row.decode(Int64.self)
            photo = Photo(
                id: try row.decode(Int64.self), title: try row.decode(String.self), url: try row.decode(String.self),
                priceCents: try row.decode(Int.self))
        }
    }
}
