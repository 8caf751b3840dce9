import Foundation
import PhotosCore

/// Counts failed sign-ins per username in a sliding window; past the limit, further attempts
/// are refused with `429 too_many_attempts` until the oldest failure leaves the window.
///
/// In memory, per process: a restart forgets the counts (documented in the README).
actor SignInLimiter {
    private let maxAttempts: Int
    private let window: TimeInterval
    private let now: @Sendable () -> Date
    private var failures: [String: [Date]] = [:]
    /// Bound on remembered usernames, so a flood of made-up names cannot grow memory forever.
    private let maxTracked = 100_000

    init(maxAttempts: Int, windowSeconds: Int, now: @escaping @Sendable () -> Date = Date.init) {
        self.maxAttempts = maxAttempts
        self.window = TimeInterval(windowSeconds)
        self.now = now
    }

    private func key(_ username: String) -> String { String(username.lowercased().prefix(128)) }

    /// Throws `too_many_attempts` if `username` is locked out now.
    func check(_ username: String) throws {
        let cutoff = now().addingTimeInterval(-window)
        let recent = (failures[key(username)] ?? []).filter { $0 > cutoff }
        if recent.count >= maxAttempts {
            let wait = Int((recent[0].addingTimeInterval(window).timeIntervalSince(now())).rounded(.up))
            throw PhotosError(.tooManyAttempts, "too many failed sign-ins for this username; try again in \(max(wait, 1)) s")
        }
    }

    /// Counts one failure.
    func recordFailure(_ username: String) {
        let cutoff = now().addingTimeInterval(-window)
        if failures.count >= maxTracked {
            failures = failures.filter { $0.value.contains { $0 > cutoff } }
            if failures.count >= maxTracked { failures.removeAll() }
        }
        failures[key(username), default: []].removeAll { $0 <= cutoff }
        failures[key(username), default: []].append(now())
    }

    /// Forgets the failures after a successful sign-in.
    func reset(_ username: String) {
        failures[key(username)] = nil
    }
}
