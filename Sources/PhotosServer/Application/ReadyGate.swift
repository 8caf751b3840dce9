import Synchronization

/// Opened once the application is ready to serve (on PostgreSQL: migrated, which happens after
/// the services started, see `buildApplication`); background work that needs the schema waits
/// for it.
final class ReadyGate: Sendable {
    private let state = Mutex<(open: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))

    /// Opens the gate: every waiter goes on.
    func open() {
        let waiting = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.open = true
            defer { state.waiting = [] }
            return state.waiting
        }
        for continuation in waiting { continuation.resume() }
    }

    /// True once the gate is open.
    var isOpen: Bool { state.withLock { $0.open } }

    /// Returns once the gate is open.
    func wait() async {
        await withCheckedContinuation { continuation in
            let isOpen = state.withLock { state -> Bool in
                if state.open { return true }
                state.waiting.append(continuation)
                return false
            }
            if isOpen { continuation.resume() }
        }
    }
}
