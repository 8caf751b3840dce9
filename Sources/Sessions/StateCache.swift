import Navigation
import PhotosCore
import PhotosModel
import Synchronization

/// Decoded session states by session id, each with the exact JSON text it came from.
///
/// Decoding the state was a large part of every action. A cached state is used only when the
/// text just read from the database is byte-for-byte the text it was decoded from, so a change
/// made elsewhere (`photos-admin`, another process) or a write that was rolled back can never
/// be served stale: the text differs, and the state is decoded afresh.
final class StateCache: Sendable {
    private let entries = Mutex([String: (text: String, state: SessionState)]())
    /// Bound on cached sessions; past it the cache starts over (cheap, and rare).
    private let capacity: Int

    init(capacity: Int = 20_000) {
        self.capacity = capacity
    }

    func state(_ sessionID: String, text: String) -> SessionState? {
        entries.withLock { entries in
            guard let entry = entries[sessionID], entry.text == text else { return nil }
            return entry.state
        }
    }

    func store(_ sessionID: String, text: String, state: SessionState) {
        entries.withLock { entries in
            if entries.count >= capacity && entries[sessionID] == nil { entries.removeAll(keepingCapacity: true) }
            entries[sessionID] = (text, state)
        }
    }
}
