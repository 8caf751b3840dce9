import DatabaseAccess
import PhotosModel
import PostgresNIO

/// Several sessions' navigation writes (`NavigationWriteStatement`: no effect, no answer) in one
/// statement, one round trip and one commit: what `PostgresStorage.writeNavigation` sends
/// (through `WriteBatcher`) when writes arrive while others are under way.
///
/// Each write keeps its own outcome, as if it had been sent alone: its session row is updated
/// only if still at the version and trail seq it expects and what its decision assumed holds
/// (checked per write, on the statement's snapshot, as the single statement checks them); its
/// audit rows are inserted only with its row. A write refused does not refuse the others: the
/// single statement's `photosd_stale_facts` would abort the whole statement, so here a failed
/// assumption is a reason per write (`stale`), and that write's row is not updated.
///
/// The writes travel as one JSON array (`[id, expected version, expected trail seq, [row
/// columns], [[audit row], …], token assumed unrevoked, user assumed not to own, the photos,
/// user whose purchases are counted, the count]`). The row's columns and the audit rows'
/// columns are written and extracted from their one list each (`SessionRow.updatedColumns`,
/// `AuditRowValues.columns`); the write's ten places are `element`'s order and the `w` clause's,
/// side by side below, and `NavigationBatchTests` checks each place reaches its column.
///
/// The planner takes a set-returning function for 100 rows, and for 100 writes a hash of a
/// whole table is cheaper than 100 lookups: each statement's generic plan would scan `sessions`
/// and `tokens` (`PostgresPlanTests`). The writes' condition `jsonb_typeof(x.e) = 'array'`,
/// always true, is estimated to keep one in 200, so the plan looks each write's rows up by index,
/// as a batch of a few writes should.
///
/// The batch never holds two writes of one session (the batcher keeps them apart); the rows are
/// locked in id order first, so that two instances' batches over the same sessions cannot
/// deadlock.
struct NavigationBatchStatement: PostgresPreparedStatement {
    static let name = "photosd_action_write_navigation_batch"

    /// The session row's updated columns, each from its place in the write's row array.
    private static let assignments = SessionRow.shape.updatedColumns.enumerated().map { index, column in
        "\(column.name) = " + (column.isInteger ? "(w.r ->> \(index))::bigint" : "w.r ->> \(index)")
    }.joined(separator: ", ")

    /// Bound to the writes' JSON array.
    static let bound: BoundSQL<String> = """
        WITH held AS (
            SELECT pg_advisory_xact_lock_shared(\(sql: String(AuditRowValues.appendLockKey)))
        ),
        w AS (
            SELECT x.n, x.e ->> 0 AS id, (x.e ->> 1)::bigint AS expected_version, (x.e ->> 2)::bigint AS expected_trail_seq,
                x.e -> 3 AS r, x.e -> 4 AS audit, (x.e ->> 5)::bigint AS token_unrevoked, (x.e ->> 6)::bigint AS not_bought_user,
                (x.e ->> 7)::bigint[] AS not_bought_photos, (x.e ->> 8)::bigint AS counted_user, (x.e ->> 9)::bigint AS counted
            FROM jsonb_array_elements(\({ $0 }, .jsonb)) WITH ORDINALITY AS x(e, n)
            WHERE jsonb_typeof(x.e) = 'array'
        ),
        checked AS (
            SELECT w.*, CASE
                WHEN w.token_unrevoked IS NOT NULL AND NOT EXISTS (
                        SELECT 1 FROM tokens t WHERE t.id = w.token_unrevoked AND t.revoked_at IS NULL)
                    THEN 'the session''s token was revoked'
                WHEN EXISTS (SELECT 1 FROM purchases b WHERE b.user_id = w.not_bought_user AND b.photo_id = ANY(w.not_bought_photos))
                    THEN 'a photo assumed not bought was bought'
                WHEN w.counted_user IS NOT NULL AND (SELECT count(*) FROM purchases b WHERE b.user_id = w.counted_user) <> w.counted
                    THEN 'the purchase list changed'
            END AS stale
            FROM w
        ),
        locked AS (
            SELECT s.id FROM sessions s WHERE s.id IN (SELECT id FROM w) AND EXISTS (SELECT 1 FROM held)
            ORDER BY s.id FOR UPDATE
        ),
        session AS (
            UPDATE sessions s SET \(sql: assignments)
            FROM checked w
            WHERE s.id = w.id AND s.version = w.expected_version AND s.trail_seq = w.expected_trail_seq AND w.stale IS NULL
                AND s.id IN (SELECT id FROM locked)
            RETURNING w.n
        ),
        audit AS (
            INSERT INTO audit_events (\(sql: SessionStatements.auditColumns))
                SELECT \(sql: SessionStatements.auditExtraction)
                FROM session u JOIN checked w ON w.n = u.n, jsonb_array_elements(w.audit) WITH ORDINALITY AS r(e, m)
                ORDER BY w.n, r.m
                RETURNING 1
        )
        SELECT w.n, (u.n IS NOT NULL)::int AS written, w.stale,
            EXISTS (SELECT 1 FROM sessions s
                WHERE s.id = w.id AND s.version = w.expected_version AND s.trail_seq = w.expected_trail_seq)::int AS matched,
            (SELECT count(*) FROM audit) AS audited
        FROM checked w LEFT JOIN session u ON u.n = w.n
        ORDER BY w.n
        """
    static var sql: String { bound.text }

    let inputs: [SessionStatements.WriteInput]

    func makeBindings() throws -> PostgresBindings {
        var builder = JSONBuilder(capacity: inputs.reduce(16) { $0 + $1.audit.utf8.count + $1.write.row.state.utf8.count + 400 })
        builder.beginArray()
        for input in inputs { Self.element(input, into: &builder) }
        builder.endArray()
        return Self.bound.bindings(builder.text)
    }

    /// One write's array, in the order `sql` extracts it.
    static func element(_ input: SessionStatements.WriteInput, into builder: inout JSONBuilder) {
        let write = input.write
        builder.beginArray()
        builder.string(write.row.id)
        optional(input.expectedVersion.map(Int64.init), into: &builder)
        optional(input.expectedTrailSeq.map(Int64.init), into: &builder)
        builder.beginArray()
        for column in write.row.updatedColumns { SessionStatements.append(column.value.databaseValue, to: &builder) }
        builder.endArray()
        builder.json(input.audit)
        optional(write.assumptions.tokenUnrevoked, into: &builder)
        optional(write.assumptions.notBought?.userID, into: &builder)
        if let photos = write.assumptions.notBought?.photoIDs { builder.string(IDList.text(photos)) } else { builder.null() }
        optional(write.assumptions.purchaseCount?.userID, into: &builder)
        optional(write.assumptions.purchaseCount.map { Int64($0.count) }, into: &builder)
        builder.endArray()
    }

    private static func optional(_ value: Int64?, into builder: inout JSONBuilder) {
        if let value { builder.int(value) } else { builder.null() }
    }

    /// Per write: whether it was written, else why not (the single statement's outcomes).
    func decodeRow(_ row: PostgresRow) throws -> (index: Int, outcome: ActionWriteOutcome) {
        let cells = NamedCells(row)
        let index = Int(try cells.int64("n")) - 1
        guard inputs.indices.contains(index) else { throw PostgresStoreError.undecodable(column: "n", type: "a write of the batch") }
        if try cells.bool("written") { return (index, .written) }
        if let reason = try cells.optionalString("stale"), try cells.bool("matched") { return (index, .stale(reason: reason)) }
        return (index, .moved)
    }
}
