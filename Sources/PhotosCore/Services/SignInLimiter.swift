import Foundation
import PhotosModel
import Synchronization

/// Limits password checks per username: at most `maxAttempts` failed sign-ins in a sliding
/// window. Past the limit, attempts are refused with `429 too_many_attempts` — before bcrypt
/// runs — until the oldest failure leaves the window.
///
/// An attempt takes its place under the lock *before* the password is checked (`begin`) and
/// gives it back or turns it into a failure after (`finish`), so concurrent attempts cannot all
/// pass the check and then all be counted: of 50 simultaneous wrong passwords, exactly
/// `maxAttempts` reach bcrypt.
///
/// In memory, per process: a restart forgets the counts (documented in the README). This is the
/// SQLite store's limiter (one process serves the file); on PostgreSQL, where several instances
/// serve one database, `SharedSignInLimiter` keeps the counts in the database instead.
public final class SignInLimiter: Sendable {
    private let maxAttempts: Int
    private let window: TimeInterval
    private let now: @Sendable () -> Date
    private let state = Mutex(State())
    /// Bound on remembered usernames, so a flood of made-up names cannot grow memory forever.
    private let maxTracked = 100_000

    private struct State {
        var failures: [String: [Date]] = [:]
        var inFlight: [String: Int] = [:]
    }

    /// One attempt that holds a place until `finish`.
    public struct Attempt: Sendable {
        fileprivate let key: String
    }

    /// How an attempt ended.
    public enum Outcome: Sendable {
        /// The password matched: the username's failures are forgotten.
        case succeeded
        /// It did not: one failure is counted.
        case failed
        /// The check did not happen (a storage error): nothing is counted.
        case abandoned
    }

    /// Allows `maxAttempts` failures per username in `windowSeconds`, as of the clock `now`.
    public init(maxAttempts: Int, windowSeconds: Int, now: @escaping @Sendable () -> Date = Date.init) {
        self.maxAttempts = maxAttempts
        self.window = TimeInterval(windowSeconds)
        self.now = now
    }

    /// The username as limits count it: lower-cased, at most 128 characters.
    static func key(_ username: String) -> String { String(username.lowercased().prefix(128)) }

    /// Takes a place for one password check of `username`, or throws `too_many_attempts` when
    /// recent failures and checks in flight already reach the limit.
    public func begin(_ username: String) throws -> Attempt {
        let key = Self.key(username)
        let at = now()
        let cutoff = at.addingTimeInterval(-window)
        return try state.withLock { state in
            let recent = (state.failures[key] ?? []).filter { $0 > cutoff }
            state.failures[key] = recent.isEmpty ? nil : recent
            let inFlight = state.inFlight[key] ?? 0
            if recent.count + inFlight >= maxAttempts {
                let wait = recent.first.map { Int($0.addingTimeInterval(window).timeIntervalSince(at).rounded(.up)) } ?? 1
                throw PhotosError(.tooManyAttempts, "too many failed sign-ins for this username; try again in \(max(wait, 1)) s", retryAfter: max(wait, 1))
            }
            state.inFlight[key] = inFlight + 1
            return Attempt(key: key)
        }
    }

    /// Ends an attempt: a failure is counted; a success forgets the username's failures.
    public func finish(_ attempt: Attempt, _ outcome: Outcome) {
        let at = now()
        let cutoff = at.addingTimeInterval(-window)
        state.withLock { state in
            let inFlight = (state.inFlight[attempt.key] ?? 1) - 1
            state.inFlight[attempt.key] = inFlight > 0 ? inFlight : nil
            switch outcome {
            case .succeeded:
                state.failures[attempt.key] = nil
                return
            case .abandoned:
                return
            case .failed:
                break
            }
            if state.failures.count >= maxTracked {
                state.failures = state.failures.filter { $0.value.contains { $0 > cutoff } }
                if state.failures.count >= maxTracked { state.failures.removeAll() }
            }
            state.failures[attempt.key, default: []].removeAll { $0 <= cutoff }
            state.failures[attempt.key, default: []].append(at)
        }
    }
}
