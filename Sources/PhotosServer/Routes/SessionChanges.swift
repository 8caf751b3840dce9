import AuditTrail
import Foundation
import Synchronization

/// What `GET /v1/sessions/{id}/changes` waits on: a change counter per session that someone is
/// waiting for, and the waits to wake when this process commits a write to it (`AuditCommits`:
/// a client's action, the console's operator, the sweep), so that a waiting device hears of it
/// at once. Changes made elsewhere (another instance, photos-admin) are seen by the wait's
/// re-read of the session, once a second.
///
/// Only watched sessions have an entry, removed with their last watcher, so the table is as
/// large as the number of open long polls. A wait costs one session read a second, and nothing
/// between (measured: docs/bench/history.md, "The change feed").
final class SessionChanges: Sendable {
    private struct Entry {
        var watchers = 0
        var generation = 0
        /// The waits suspended until the next change, by token.
        var waiting: [UUID: CheckedContinuation<Void, Never>] = [:]
    }

    private let entries = Mutex<[String: Entry]>([:])

    /// How often a wait reads the session again whatever this process saw (1 s; tests set
    /// more, to see that a change wakes a wait by itself).
    let reread: Duration

    /// Keeps `changed` fed with `following`'s commits while this lives.
    private let listening = Mutex<AuditCommits.Listening?>(nil)

    init(reread: Duration = .seconds(1), following commits: AuditCommits? = nil) {
        self.reread = reread
        if let commits {
            let listening = commits.listen { [weak self] commit in self?.changed(commit.sessionID) }
            self.listening.withLock { $0 = listening }
        }
    }
    /// The longest a client may ask to wait (below `server.idleTimeoutSeconds`' default, 60).
    static let maxWaitSeconds = 25

    /// This process committed a change to `id`: the waits on it wake.
    func changed(_ id: String) {
        let woken = entries.withLock { entries -> [CheckedContinuation<Void, Never>] in
            guard var entry = entries[id] else { return [] }
            entry.generation += 1
            let woken = Array(entry.waiting.values)
            entry.waiting = [:]
            entries[id] = entry
            return woken
        }
        for continuation in woken { continuation.resume() }
    }

    /// Reads the session with `read` until its version is past `after` or `wait` has passed,
    /// and returns the last read. Reads again as soon as this process changes the session, and
    /// once a second otherwise; stops early when its task is cancelled. (A wait whose client
    /// went away may still run out its `wait`, at one read a second: bounded by
    /// `maxWaitSeconds`.)
    func wait<Session: Sendable>(
        for id: String, after: Int, wait: Duration, version: (Session) -> Int, read: () async throws -> Session
    ) async throws -> Session {
        // Watching before the first read: a change between the two is not missed.
        var seen = watch(id)
        defer { unwatch(id) }
        var current = try await read()
        guard version(current) <= after, wait > .zero else { return current }
        let clock = ContinuousClock()
        let deadline = clock.now + wait
        while clock.now < deadline, !Task.isCancelled {
            await nextChange(of: id, after: seen, orAfter: min(reread, deadline - clock.now))
            seen = generation(id)
            current = try await read()
            if version(current) > after { return current }
        }
        return current
    }

    private func watch(_ id: String) -> Int {
        entries.withLock { entries in
            entries[id, default: Entry()].watchers += 1
            return entries[id]!.generation
        }
    }

    private func unwatch(_ id: String) {
        entries.withLock { entries in
            entries[id]?.watchers -= 1
            if entries[id]?.watchers ?? 0 <= 0 { entries[id] = nil }
        }
    }

    /// Sessions watched now, and waits suspended now (for tests: both 0 when no wait runs).
    var counts: (watched: Int, suspended: Int) {
        entries.withLock { entries in (entries.count, entries.values.reduce(0) { $0 + $1.waiting.count }) }
    }

    private func generation(_ id: String) -> Int {
        entries.withLock { $0[id]?.generation ?? 0 }
    }

    /// Returns when `id` changes past generation `seen`, when `timeout` has passed, or when the
    /// task is cancelled, whichever comes first.
    private func nextChange(of id: String, after seen: Int, orAfter timeout: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await Task.sleep(for: timeout) }
            group.addTask { await self.change(of: id, after: seen) }
            await group.next()
            group.cancelAll()
        }
    }

    /// Suspends until `id` changes past generation `seen` (at once if it has), or the task is
    /// cancelled. The continuation is registered and removed under the lock, and resumed once:
    /// by `changed`, by the cancellation handler, or here when the change or the cancellation
    /// came first.
    private func change(of id: String, after seen: Int) async {
        let token = UUID()
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = entries.withLock { entries -> Bool in
                    guard var entry = entries[id], entry.generation == seen, !Task.isCancelled else { return true }
                    entry.waiting[token] = continuation
                    entries[id] = entry
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            let continuation = entries.withLock { $0[id]?.waiting.removeValue(forKey: token) }
            continuation?.resume()
        }
    }
}
