import DatabaseAccess
import PhotosModel

/// Records steps of one trail (a session's, or `operator`, or `api`) inside the caller's write
/// transaction, and writes them at the end.
///
/// It is the one place a row's `seq` and chain are made: it reads the trail's head (its newest
/// row's seq and hash) once, gives each recorded step the next seq (`record` returns it, and the
/// coordinators derive child ids from it), and `write` inserts the rows with exactly those
/// numbers, each chained to the trail's row before it. It reads no global head: appends to
/// different trails never touch the same row.
///
/// Confined to the transaction that created it, like its connection; not `Sendable`.
public final class AuditTrailWriter {
    /// The trail.
    public let sessionID: String
    /// The seq the next recorded step gets.
    public private(set) var nextSeq: Int
    /// The hash the next written row chains to.
    private var headHash: String
    private var recorded: [(seq: Int, entry: AuditEntry)] = []
    private let connection: any DatabaseConnection

    /// Opens the trail `sessionID` in the transaction of `connection`.
    public init(sessionID: String, on connection: any DatabaseConnection) async throws {
        self.sessionID = sessionID
        self.connection = connection
        let head = try await AuditChains.head(of: sessionID, on: connection)
        self.nextSeq = head.seq + 1
        self.headHash = head.hash
    }

    /// Records a step; returns its seq.
    @discardableResult
    public func record(_ entry: AuditEntry) -> Int {
        let seq = nextSeq
        recorded.append((seq, entry))
        nextSeq += 1
        return seq
    }

    /// Inserts every step recorded since the last `write`, all stamped `at`, and returns them
    /// as rows.
    public func write(at: String) async throws -> [AuditRow] {
        let fields = recorded.map { seq, entry in AuditRecord(entry, sessionID: sessionID, seq: seq, at: at) }
        recorded.removeAll()
        guard !fields.isEmpty else { return [] }
        headHash = try await AuditChains.insert(fields, after: headHash, on: connection)
        return fields.map(\.row)
    }
}
