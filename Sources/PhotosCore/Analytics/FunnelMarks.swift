import AuditTrail
import DatabaseAccess
import PhotosModel

/// Keeps `funnel_marks` — which funnel stage each client session reached on each day, what the
/// `purchase_funnel` view counts — up to date with the audit trail, off the request path.
///
/// Marks are read from the new audit rows on a reader snapshot (at most `chunk` rows at a time)
/// and only the new ones are written, with the progress, in one small write transaction;
/// another process marking meanwhile means reading again. Writing them with every append
/// instead cost the writer ~15 µs per action (docs/benchmarks.md).
public enum FunnelMarks {
    /// Which step counts for which stage: the one statement of the rule. Rows with ids in
    /// (`from`, `until`], as (day, stage, session_id), not yet marked.
    static func newMarks(from: Int64, until: Int64) -> SQL {
        """
        WITH counted AS (
            SELECT substr(at, 1, 10) AS day,
                   CASE WHEN step = 'session.start' THEN 1
                        WHEN step = 'screen.push' AND screen = 'photo' THEN 2
                        WHEN step = 'coordinator.start' THEN 3
                        WHEN screen = 'signIn' THEN 4
                        ELSE 5 END AS stage,
                   session_id
            FROM audit_events
            WHERE id > \(from) AND id <= \(until)
              AND session_id NOT IN ('operator', 'api')
              AND (step IN ('session.start', 'purchase.completed')
                   OR (step = 'screen.push' AND screen = 'photo')
                   OR (step IN ('screen.push', 'screen.present') AND screen = 'signIn' AND coordinator LIKE '%/buy')
                   OR (step = 'coordinator.start' AND coordinator LIKE '%/buy'))
        )
        SELECT DISTINCT day, stage, session_id FROM counted c
        WHERE NOT EXISTS (SELECT 1 FROM funnel_marks m WHERE m.day = c.day AND m.stage = c.stage AND m.session_id = c.session_id)
        """
    }

    /// Marks every audit row committed (settled) when it starts; returns how many marks were
    /// added. Rows that arrive meanwhile wait for the next call: under steady load a loop that
    /// chased the newest row would never end (and would keep the checkpoints waiting).
    @discardableResult
    public static func catchUp(_ database: any DatabaseStore, chunk: Int64 = 200_000) async throws -> Int {
        var added = 0
        var target = Int64.max
        while true {
            let bound = target
            let (from, newest, settled, marks) = try await AuditChains.readSettled(database) { connection, settled in
                let from = try await connection.queryOne("SELECT marked_until_id FROM funnel_marks_progress")?.int64("marked_until_id") ?? 0
                let newest = min(settled, bound)
                let until = min(newest, from + chunk)
                let marks = try await connection.query(newMarks(from: from, until: until)).map { (try $0.string("day"), try $0.int("stage"), try $0.string("session_id")) }
                return (from, until, newest, marks)
            }
            target = settled
            guard newest > from else { return added }
            let written = try await database.write { connection -> Bool in
                // Another process marked meanwhile: read again from where it got to.
                guard try await connection.queryOne("SELECT marked_until_id FROM funnel_marks_progress")?.int64("marked_until_id") == from else { return false }
                for (day, stage, session) in marks {
                    try await connection.execute("INSERT INTO funnel_marks (day, stage, session_id) VALUES (\(day), \(stage), \(session)) ON CONFLICT DO NOTHING")
                }
                try await connection.execute("UPDATE funnel_marks_progress SET marked_until_id = \(newest)")
                return true
            }
            if written { added += marks.count }
        }
    }
}
