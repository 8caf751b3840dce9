import DatabaseAccess
import Foundation
import PhotosModel

/// The purchase funnel of the last days, from the `purchase_funnel` and `buy_exits` views
/// (`photos-admin report funnel`).
public struct FunnelReport: Codable, Sendable, Equatable {
    /// One row of `purchase_funnel`.
    public struct Day: Codable, Sendable, Equatable {
        public var day: String
        public var sessions: Int
        public var viewedPhoto: Int
        public var startedBuy: Int
        public var askedToSignIn: Int
        public var purchased: Int

        // JSON in camelCase like every other output (`viewedPhoto` is the view's `viewed_photo`).

        /// The counts in funnel order.
        public var steps: [Int] { [sessions, viewedPhoto, startedBuy, askedToSignIn, purchased] }
    }

    /// One row of `buy_exits`.
    public struct Exit: Codable, Sendable, Equatable {
        public var day: String
        public var reason: String
        public var flows: Int
    }

    /// The funnel's steps, as the columns name them.
    public static let stepNames = ["sessions", "viewed_photo", "started_buy", "asked_to_sign_in", "purchased"]

    /// The first and last day covered (UTC dates, inclusive).
    public var from: String
    public var until: String
    /// The view's rows for those days, oldest first (days without a counted step are absent).
    public var days: [Day]
    /// The sums of the daily counts (a session active on two days counts on each).
    public var total: Day
    /// Buy flows that ended in those days, by day and reason.
    public var exits: [Exit]

    /// The conversion from each step to the next, in percent (nil where the step before is 0).
    public var conversions: [Double?] {
        let steps = total.steps
        return (1..<steps.count).map { index in steps[index - 1] == 0 ? nil : Double(steps[index]) * 100 / Double(steps[index - 1]) }
    }

    /// The exits of all the days, by reason, most first.
    public var exitsByReason: [(reason: String, flows: Int)] {
        Dictionary(grouping: exits, by: \.reason).map { ($0.key, $0.value.reduce(0) { $0 + $1.flows }) }
            .sorted { $0.flows != $1.flows ? $0.flows > $1.flows : $0.reason < $1.reason }
    }

    /// Reads the report for the `days` days ending with `until` (a UTC date), inside the
    /// caller's read transaction.
    public static func load(days: Int, until: Date, on connection: any DatabaseConnection) async throws -> FunnelReport {
        let last = String(ISO8601Timestamp.string(from: until).prefix(10))
        let first = String(ISO8601Timestamp.string(from: until.addingTimeInterval(-Double(days - 1) * 86_400)).prefix(10))
        let rows = try await connection.query(
            """
            SELECT day, sessions, viewed_photo, started_buy, asked_to_sign_in, purchased FROM purchase_funnel
            WHERE day >= \(first) AND day <= \(last) ORDER BY day
            """
        ).map { Day(day: try $0.string("day"), sessions: try $0.int("sessions"), viewedPhoto: try $0.int("viewed_photo"), startedBuy: try $0.int("started_buy"), askedToSignIn: try $0.int("asked_to_sign_in"), purchased: try $0.int("purchased")) }
        let exits = try await connection.query(
            "SELECT day, coalesce(reason, '(none)') AS exit_reason, flows FROM buy_exits WHERE day >= \(first) AND day <= \(last) ORDER BY day, reason"
        ).map { Exit(day: try $0.string("day"), reason: try $0.string("exit_reason"), flows: try $0.int("flows")) }
        var total = Day(day: "total", sessions: 0, viewedPhoto: 0, startedBuy: 0, askedToSignIn: 0, purchased: 0)
        for row in rows {
            total.sessions += row.sessions
            total.viewedPhoto += row.viewedPhoto
            total.startedBuy += row.startedBuy
            total.askedToSignIn += row.askedToSignIn
            total.purchased += row.purchased
        }
        return FunnelReport(from: first, until: last, days: rows, total: total, exits: exits)
    }
}
