import Foundation
import PhotosModel
import Synchronization

/// Decides which refusals by the sign-in limits are audited: the first for each limit and key
/// in each window gets an `auth.signInFailed` row; the others in that window are only counted,
/// and the next recorded row says how many there were (`unrecordedBefore`). A client hammering
/// a limit writes one row per window, not one per request.
///
/// Per process: on PostgreSQL each instance writes at most one row per window and key.
final class SignInRefusalTally: Sendable {
    private let window: TimeInterval
    private let now: @Sendable () -> Date
    private let state = Mutex<[String: Entry]>([:])
    private let maxTracked = 100_000

    private struct Entry {
        var since: Date
        var unrecorded: Int
    }

    init(windowSeconds: Int, now: @escaping @Sendable () -> Date) {
        self.window = TimeInterval(windowSeconds)
        self.now = now
    }

    /// The detail to add to the refusal's audit row (`limit`, and `unrecordedBefore` when
    /// refusals went unrecorded since the last row), or nil when this one is only counted.
    func note(_ refused: SignInRefused, username: String, address: String) -> JSONObject? {
        // What the limit counts: a client hammering the address limit with fresh usernames
        // still writes one row per window.
        let counted = switch refused.limit {
        case .usernameAndAddress: [SignInLimits.usernameKey(username), SignInLimits.addressKey(address)]
        case .address: [SignInLimits.addressKey(address)]
        case .username: [SignInLimits.usernameKey(username)]
        }
        let key = ([refused.limit.rawValue] + counted).joined(separator: "\u{0}")
        let at = now()
        let window = self.window
        return state.withLock { entries -> JSONObject? in
            if var entry = entries[key], at < entry.since.addingTimeInterval(window) {
                entry.unrecorded += 1
                entries[key] = entry
                return nil
            }
            if entries.count >= maxTracked {
                entries = entries.filter { at < $0.value.since.addingTimeInterval(window) }
                if entries.count >= maxTracked { entries.removeAll() }
            }
            let unrecorded = entries[key]?.unrecorded ?? 0
            entries[key] = Entry(since: at, unrecorded: 0)
            var detail: JSONObject = ["limit": .string(refused.limit.rawValue)]
            if unrecorded > 0 { detail["unrecordedBefore"] = .int(Int64(unrecorded)) }
            return detail
        }
    }
}
