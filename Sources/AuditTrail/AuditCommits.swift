import Foundation
import Synchronization

/// What this process appended to the trail, published once per committed write, after the
/// commit: whoever made the change (a client's action, an operator in the console or through
/// the API, the sweep ending an idle session), the change feed, the metrics and the console's
/// live pages hear of it from here, and only from here.
///
/// A listener runs on the publisher's task and must not block or suspend: it notes the commit
/// (wakes a wait, counts it) and returns. Changes other processes make (another instance,
/// `photos-admin`) are not published here; the listeners' own re-reads find those.
public final class AuditCommits: Sendable {
    /// One committed write.
    public struct Commit: Sendable, Equatable {
        /// The session whose trail grew.
        public var sessionID: String
        /// What the write was.
        public var kind: Kind
        /// The audit rows it appended.
        public var auditRows: Int

        /// Creates a commit.
        public init(sessionID: String, kind: Kind, auditRows: Int) {
            self.sessionID = sessionID
            self.kind = kind
            self.auditRows = auditRows
        }
    }

    /// What a committed write was.
    public enum Kind: String, Sendable, CaseIterable {
        /// A session was created.
        case created
        /// An action (a client's or an operator's) was applied.
        case applied
        /// An idle session was ended.
        case expired
    }

    /// A registration; `cancel()` (or dropping every reference to it) ends it.
    public final class Listening: Sendable {
        private let cancelling: @Sendable () -> Void

        init(_ cancelling: @escaping @Sendable () -> Void) {
            self.cancelling = cancelling
        }

        /// Stops the listener; a commit published after this returns is not given to it.
        public func cancel() {
            cancelling()
        }

        deinit {
            cancelling()
        }
    }

    private struct State {
        var listeners: [UInt64: @Sendable (Commit) -> Void] = [:]
        var nextID: UInt64 = 0
        /// Commits published so far (what `waitForCommit(after:)` compares with).
        var count: UInt64 = 0
        /// Tasks suspended until the next commit.
        var waiting: [UInt64: CheckedContinuation<Void, Never>] = [:]
    }

    private let state = Mutex(State())

    /// An empty publisher.
    public init() {}

    /// Publishes `commit` to every listener and wakes every `waitForCommit`. Call it once per
    /// write, after the transaction that made it committed.
    public func publish(_ commit: Commit) {
        let (listeners, woken) = state.withLock { state in
            state.count &+= 1
            let woken = Array(state.waiting.values)
            state.waiting = [:]
            return (Array(state.listeners.values), woken)
        }
        for listener in listeners { listener(commit) }
        for continuation in woken { continuation.resume() }
    }

    /// Calls `listener` with each commit published from now on, until the returned registration
    /// is cancelled or released.
    public func listen(_ listener: @escaping @Sendable (Commit) -> Void) -> Listening {
        let id = state.withLock { state in
            state.nextID += 1
            state.listeners[state.nextID] = listener
            return state.nextID
        }
        return Listening { [weak self] in
            _ = self?.state.withLock { $0.listeners.removeValue(forKey: id) }
        }
    }

    /// How many commits were published so far: what a waiter passes to `waitForCommit(after:)`
    /// so that a commit between its read and its wait is not missed.
    public var published: UInt64 {
        state.withLock { $0.count }
    }

    /// Returns once a commit past `seen` (a value of `published`) was published — at once if one
    /// was — or when the task is cancelled.
    public func waitForCommit(after seen: UInt64) async {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    guard state.count == seen, !Task.isCancelled else { return true }
                    state.waiting[id] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            let continuation = state.withLock { $0.waiting.removeValue(forKey: id) }
            continuation?.resume()
        }
    }
}
