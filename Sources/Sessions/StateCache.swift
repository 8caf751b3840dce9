import Navigation
import PhotosCore
import PhotosModel
import Synchronization

/// Decoded session states by session id, each with the exact JSON text it came from and the
/// session version it was read or written at.
///
/// Decoding the state was a large part of every action. A cached state is used only when the
/// text just read from the database is byte-for-byte the text it was decoded from, so a change
/// made elsewhere (`photos-admin`, another process) or a write that was rolled back can never
/// be served stale: the text differs, and the state is decoded afresh. (Leaving the state's
/// text out of a read whose row is at the cached version was measured and did not pay: see
/// docs/benchmarks.md.)
final class StateCache: Sendable {
    /// One cached session state.
    struct Entry: Sendable {
        let version: Int
        let text: String
        let state: SessionState
        /// The session's trail head (last seq, its hash) with this state, when known.
        let trail: TrailHead?
        /// When the row was written with this state, when known (idle expiry counts from it).
        let updatedAt: String?
    }

    /// The last seq of a session's audit trail, and its hash.
    struct TrailHead: Sendable, Equatable {
        let seq: Int
        let hash: String
    }

    private let entries = Mutex([String: Entry]())
    /// Bound on cached sessions; past it the cache starts over (cheap, and rare).
    private let capacity: Int

    init(capacity: Int = 20_000) {
        self.capacity = capacity
    }

    /// The cached state of `sessionID` if it was decoded from exactly `text`; the entry then
    /// takes `version` and `trail` (a session may come back to a state it had before).
    func state(_ sessionID: String, text: String, version: Int, trail: TrailHead?, updatedAt: String?) -> SessionState? {
        entries.withLock { entries in
            guard let entry = entries[sessionID], entry.text == text else { return nil }
            if entry.version != version || entry.trail != trail || entry.updatedAt != updatedAt {
                entries[sessionID] = Entry(version: version, text: text, state: entry.state, trail: trail, updatedAt: updatedAt)
            }
            return entry.state
        }
    }

    /// The cached entry of `sessionID`, whatever its version.
    func entry(_ sessionID: String) -> Entry? {
        entries.withLock { $0[sessionID] }
    }

    /// Keeps `state`, decoded from (or encoded as) `text`, the committed state of `sessionID` at
    /// `version`, with its trail head `trail` when known.
    func store(_ sessionID: String, version: Int, text: String, state: SessionState, trail: TrailHead?, updatedAt: String?) {
        entries.withLock { entries in
            if entries.count >= capacity && entries[sessionID] == nil { entries.removeAll(keepingCapacity: true) }
            entries[sessionID] = Entry(version: version, text: text, state: state, trail: trail, updatedAt: updatedAt)
        }
    }

    /// Keeps the state `prepared` wrote, once its write has committed (an ended session's
    /// entry is dropped: it has no state).
    func store(_ prepared: PreparedWrite) {
        guard !prepared.decision.ended else {
            entries.withLock { _ = $0.removeValue(forKey: prepared.sessionID) }
            return
        }
        store(
            prepared.sessionID, version: prepared.decision.version, text: prepared.stateText, state: prepared.decision.state,
            trail: TrailHead(seq: prepared.trailSeq, hash: prepared.trailHash), updatedAt: prepared.decision.records.first?.at)
    }
}
