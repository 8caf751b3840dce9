import Foundation
import PhotosModel

/// How many failed sign-ins are allowed, counted three ways in one sliding window
/// (`auth.signInWindowSeconds`), as OWASP's authentication guidance suggests:
///
/// - per **(username, address)** (`auth.signInMaxAttempts`): the tight limit on guessing one
///   account from one place;
/// - per **client address**, all usernames (`auth.signInMaxAttemptsPerAddress`): bounds the bcrypt
///   work one address can cause, also when it tries a fresh username every time;
/// - per **username**, all addresses (`auth.signInMaxAttemptsPerUsername`): a modest limit on a
///   distributed guess at one account. So that an attacker elsewhere cannot turn it into a
///   lock-out, it does not apply from an address where that user signed in successfully within
///   `trustedAddressSeconds`.
///
/// Usernames are case-sensitive (`alice` and `Alice` are two users), and so are the limits:
/// failures for `ALICE` count against `ALICE` only. Checks in flight count as failures until they
/// end, so concurrent attempts cannot all pass the count.
public struct SignInLimits: Sendable, Equatable {
    /// Failures per (username, address) in the window.
    public var perUsernameAndAddress: Int
    /// Failures per client address in the window, all usernames; 0: no limit.
    public var perAddress: Int
    /// Failures per username in the window, all addresses; 0: no limit.
    public var perUsername: Int
    /// The sliding window, in seconds.
    public var windowSeconds: Int
    /// How long a successful sign-in exempts its address from the per-username limit.
    public var trustedAddressSeconds: Int

    /// The limits; the defaults are the configuration's.
    public init(
        perUsernameAndAddress: Int = 5, perAddress: Int = 20, perUsername: Int = 50,
        windowSeconds: Int = 300, trustedAddressSeconds: Int = 30 * 86_400
    ) {
        self.perUsernameAndAddress = perUsernameAndAddress
        self.perAddress = perAddress
        self.perUsername = perUsername
        self.windowSeconds = windowSeconds
        self.trustedAddressSeconds = trustedAddressSeconds
    }

    /// What one limit finds for an attempt: the attempts in its window that count (failures, and
    /// checks still in flight), and when the oldest of its failures was.
    public struct Tally: Sendable, Equatable {
        /// Failures in the window plus checks in flight.
        public var counted: Int
        /// The oldest failure in the window (when it leaves the window, a place frees).
        public var oldestFailure: Date?

        /// A tally.
        public init(counted: Int, oldestFailure: Date?) {
            self.counted = counted
            self.oldestFailure = oldestFailure
        }
    }

    /// The rule both limiters follow (in memory, and in the database's tables for several
    /// instances): the limits in order — (username, address), address, username (not from an
    /// address `trusted` for the username) — and the first whose tally reaches it refuses, with
    /// `Retry-After` when its oldest failure leaves the window (1 s when only checks in flight
    /// fill it). A limit of 0 is no limit. Nil: the attempt may go ahead.
    public func refusal(trusted: Bool, at now: Date, tally: (SignInLimit) throws -> Tally) rethrows -> SignInRefused? {
        let window = TimeInterval(windowSeconds)
        for which in SignInLimit.allCases {
            let limit = switch which {
            case .usernameAndAddress: perUsernameAndAddress
            case .address: perAddress
            case .username: trusted ? 0 : perUsername
            }
            guard limit > 0 else { continue }
            let found = try tally(which)
            if found.counted >= limit {
                let wait = found.oldestFailure.map { Int($0.addingTimeInterval(window).timeIntervalSince(now).rounded(.up)) } ?? 1
                return SignInRefused(limit: which, error: which.error(retryAfter: wait))
            }
        }
        return nil
    }

    /// The username as the limits count it: exact, at most 128 characters (a longer name cannot
    /// belong to a user; it only needs a bounded key).
    static func usernameKey(_ username: String) -> String { String(username.prefix(128)) }
    /// The client address as the limits count it (at most 64 characters).
    static func addressKey(_ address: String) -> String { String(address.prefix(64)) }
}

/// Which of the sign-in limits refused an attempt (in the order they are checked).
public enum SignInLimit: String, Sendable, CaseIterable {
    /// `auth.signInMaxAttempts`: this username from this address.
    case usernameAndAddress
    /// `auth.signInMaxAttemptsPerAddress`: this address, any username.
    case address
    /// `auth.signInMaxAttemptsPerUsername`: this username, from anywhere not trusted for it.
    case username

    /// The refusal's message: what was limited, and when to try again.
    func error(retryAfter seconds: Int) -> PhotosError {
        let wait = max(seconds, 1)
        let what = switch self {
        case .usernameAndAddress: "too many failed sign-ins for this username from this address"
        case .address: "too many failed sign-ins from this address"
        case .username: "too many failed sign-ins for this username"
        }
        return PhotosError(.tooManyAttempts, "\(what); try again in \(wait) s", retryAfter: wait)
    }
}

/// Thrown by the limiters' `begin`: the attempt was refused before its password was checked.
public struct SignInRefused: Error, Sendable {
    /// The limit that refused it.
    public let limit: SignInLimit
    /// What the client is told (`429 too_many_attempts` with `Retry-After`).
    public let error: PhotosError
}
