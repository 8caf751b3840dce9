import Foundation
import PhotosModel
import Synchronization

/// The sign-in limits (`SignInLimits`) counted in memory: failed sign-ins in a sliding window
/// per (username, address), per address and per username. Past a limit, attempts are refused
/// with `429 too_many_attempts` — before bcrypt runs — until the oldest failure leaves the window.
///
/// An attempt takes its place under the lock *before* the password is checked (`begin`) and
/// gives it back or turns it into a failure after (`finish`), so concurrent attempts cannot all
/// pass the check and then all be counted: of 50 simultaneous wrong passwords, exactly
/// `perUsernameAndAddress` reach bcrypt.
///
/// Per process: a restart forgets the counts (documented in the README). This is the SQLite
/// store's limiter (one process serves the file); on PostgreSQL, where several instances serve
/// one database, `SharedSignInLimiter` keeps the same counts in the database instead.
public final class SignInLimiter: Sendable {
    private let limits: SignInLimits
    private let now: @Sendable () -> Date
    private let state = Mutex(State())
    /// Bound on remembered keys, so a flood of made-up names cannot grow memory forever.
    private let maxTracked = 100_000

    /// What a failure is counted against.
    fileprivate enum Key: Hashable {
        case pair(username: String, address: String)
        case address(String)
        case username(String)
    }

    private struct State {
        var failures: [Key: [Date]] = [:]
        var inFlight: [Key: Int] = [:]
        /// (username, address) pairs that signed in successfully, and when.
        var trusted: [Key: Date] = [:]
    }

    /// One attempt that holds a place until `finish`.
    public struct Attempt: Sendable {
        fileprivate let keys: [Key]
        fileprivate let pair: Key
    }

    /// How an attempt ended.
    public enum Outcome: Sendable {
        /// The password matched: this username's failures from this address are forgotten, and
        /// the address is trusted for the username.
        case succeeded
        /// It did not: one failure is counted against each limit.
        case failed
        /// The check did not happen (a storage error): nothing is counted.
        case abandoned
    }

    /// Counts by `limits`, as of the clock `now`.
    public init(limits: SignInLimits, now: @escaping @Sendable () -> Date = Date.init) {
        self.limits = limits
        self.now = now
    }

    /// Takes a place for one password check of `username` from `address`, or throws
    /// `SignInRefused` when recent failures and checks in flight already reach a limit.
    public func begin(username: String, address: String) throws(SignInRefused) -> Attempt {
        let pair = Key.pair(username: SignInLimits.usernameKey(username), address: SignInLimits.addressKey(address))
        let byAddress = Key.address(SignInLimits.addressKey(address))
        let byUsername = Key.username(SignInLimits.usernameKey(username))
        let at = now()
        let cutoff = at.addingTimeInterval(-TimeInterval(limits.windowSeconds))
        let trustedSince = at.addingTimeInterval(-TimeInterval(limits.trustedAddressSeconds))
        let limits = self.limits
        return try state.withLock { (state) throws(SignInRefused) -> Attempt in
            let trusted = state.trusted[pair].map { $0 > trustedSince } ?? false
            let refused = limits.refusal(trusted: trusted, at: at) { which in
                let key = switch which {
                case .usernameAndAddress: pair
                case .address: byAddress
                case .username: byUsername
                }
                let recent = (state.failures[key] ?? []).filter { $0 > cutoff }
                state.failures[key] = recent.isEmpty ? nil : recent
                return SignInLimits.Tally(counted: recent.count + (state.inFlight[key] ?? 0), oldestFailure: recent.first)
            }
            if let refused { throw refused }
            let keys = [pair, byAddress, byUsername]
            for key in keys { state.inFlight[key, default: 0] += 1 }
            return Attempt(keys: keys, pair: pair)
        }
    }

    /// Ends an attempt: a failure is counted against each limit; a success forgets the pair's
    /// failures (not the address's or the username's: those may be someone else's) and trusts
    /// the address for the username.
    public func finish(_ attempt: Attempt, _ outcome: Outcome) {
        let at = now()
        let cutoff = at.addingTimeInterval(-TimeInterval(limits.windowSeconds))
        state.withLock { state in
            for key in attempt.keys {
                let inFlight = (state.inFlight[key] ?? 1) - 1
                state.inFlight[key] = inFlight > 0 ? inFlight : nil
            }
            switch outcome {
            case .succeeded:
                state.failures[attempt.pair] = nil
                if state.trusted.count >= maxTracked {
                    let since = at.addingTimeInterval(-TimeInterval(limits.trustedAddressSeconds))
                    state.trusted = state.trusted.filter { $0.value > since }
                    if state.trusted.count >= maxTracked { state.trusted.removeAll() }
                }
                state.trusted[attempt.pair] = at
            case .abandoned:
                return
            case .failed:
                if state.failures.count >= maxTracked {
                    state.failures = state.failures.filter { $0.value.contains { $0 > cutoff } }
                    if state.failures.count >= maxTracked { state.failures.removeAll() }
                }
                for key in attempt.keys {
                    state.failures[key, default: []].removeAll { $0 <= cutoff }
                    state.failures[key, default: []].append(at)
                }
            }
        }
    }
}
