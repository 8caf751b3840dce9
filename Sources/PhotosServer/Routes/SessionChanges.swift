import Foundation
import Synchronization

/// What `GET /v1/sessions/{id}/changes` waits on: a change counter per session that someone is
/// waiting for, bumped when this process applies an action to it, so that a waiting device
/// hears of it within a tick. Changes made elsewhere (another instance, photos-admin, the
/// console) are seen by the wait's re-read of the session, once a second.
///
/// Only watched sessions have an entry, removed with their last watcher, so the table is as
/// large as the number of open long polls.
final class SessionChanges: Sendable {
    private struct Entry {
        var watchers: Int
        var generation: Int
    }

    private let entries = Mutex<[String: Entry]>([:])

    /// How often a wait looks at the counter.
    static let tick: Duration = .milliseconds(50)
    /// How often a wait reads the session again whatever the counter says.
    static let reread: Duration = .seconds(1)
    /// The longest a client may ask to wait (below `server.idleTimeoutSeconds`' default, 60).
    static let maxWaitSeconds = 25

    /// This process changed `id`.
    func changed(_ id: String) {
        entries.withLock { entries in entries[id]?.generation += 1 }
    }

    /// Starts watching `id`; returns its counter now.
    func watch(_ id: String) -> Int {
        entries.withLock { entries in
            entries[id, default: Entry(watchers: 0, generation: 0)].watchers += 1
            return entries[id]!.generation
        }
    }

    /// The counter of a watched session.
    func generation(_ id: String) -> Int {
        entries.withLock { $0[id]?.generation ?? 0 }
    }

    /// Stops watching `id`.
    func unwatch(_ id: String) {
        entries.withLock { entries in
            entries[id]?.watchers -= 1
            if entries[id]?.watchers ?? 0 <= 0 { entries[id] = nil }
        }
    }

    /// Reads the session with `read` until its version is past `after` or `wait` has passed,
    /// and returns the last read. Reads again at once when this process changes the session,
    /// and once a second otherwise; stops early when its task is cancelled. (A wait whose client
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
        var nextRead = clock.now + Self.reread
        while clock.now < deadline, !Task.isCancelled {
            try? await Task.sleep(for: Self.tick)
            let now = generation(id)
            guard now != seen || clock.now >= nextRead || clock.now >= deadline else { continue }
            seen = now
            nextRead = clock.now + Self.reread
            current = try await read()
            if version(current) > after { return current }
        }
        return current
    }
}
