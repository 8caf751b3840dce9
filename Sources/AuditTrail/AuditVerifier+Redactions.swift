import DatabaseAccess

extension AuditVerifier {
    /// The rows listed in `audit_redactions` (of the live database or of an archive file), and
    /// the rule a listing must meet before a row's content hash goes unchecked: only a row from
    /// before 0011 can hold a clear name in the bytes its hash covers, so the row's id is at most
    /// `audit_redaction_bound` (fixed by migration 0017: 0 for a database made at 0011 or later),
    /// the user it is listed under is erased, and the row names that user (or no user: a refused
    /// sign-in's attempted name). Anything else listed is a row changed and hidden behind a
    /// listing, and `audit verify` fails naming it.
    struct Redactions {
        /// Listed row id → the user it is listed under.
        var listed: [Int64: Int64] = [:]
        /// The highest row id that may be listed.
        var boundID: Int64

        /// Whether `row` (with the columns `id, session_id, seq, user_id` of
        /// `AuditArchiver.ArchivedRow`) is a listed row whose content hash is not recomputed;
        /// throws when its listing breaks the rule.
        func skipsContentHash(_ row: Row) throws -> Bool {
            let id = try row.int64("id")
            guard let user = listed[id] else { return false }
            func refused(_ reason: String) -> Failure {
                Failure(problem: AuditChains.Problem(rowID: id, sessionID: try? row.optionalString("session_id"), seq: try? row.optionalInt("seq"), reason: reason))
            }
            guard id <= boundID else {
                throw refused("listed as redacted, but it was written when rows no longer held names (only ids up to \(boundID) can): a row was changed and listed to hide it")
            }
            if let named = try row.optionalInt64("user_id"), named != user {
                throw refused("listed as redacted for user \(user), but it names user \(named): a row was changed and listed to hide it")
            }
            return true
        }
    }

    /// The highest row id a redaction may list (`audit_redaction_bound`; a database whose schema
    /// predates it keeps the rule it was written under: any row).
    func redactionBound() async throws -> Int64 {
        guard try await connection.tableExists("audit_redaction_bound") else { return Int64.max }
        return try await connection.queryOne("SELECT until_id FROM audit_redaction_bound")?.int64("until_id") ?? 0
    }
}
