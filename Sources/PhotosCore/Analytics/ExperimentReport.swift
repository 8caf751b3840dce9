import DatabaseAccess
import Foundation
import PhotosModel

/// One experiment's variants compared, from the audit trail (`photos-admin report funnel
/// --experiment NAME`, docs/analytics.md).
///
/// A session counts in the variant of its first exposure to the experiment, and what it did
/// after that exposure counts for that variant: reached the buy screen, was asked to sign in by a
/// purchase flow, signed in, purchased. Everything comes from the `experiment_exposures` view
/// and `audit_trail`'s rows, so an analyst can recompute it in SQL (the query is `sql`).
public struct ExperimentReport: Codable, Sendable, Equatable {
    /// One variant's funnel.
    public struct Variant: Codable, Sendable, Equatable {
        public var variant: String
        /// Sessions whose first exposure took this variant.
        public var exposed: Int
        public var reachedBuy: Int
        public var askedToSignIn: Int
        public var signedIn: Int
        public var purchased: Int
        /// purchased ÷ exposed, as a fraction (nil when none was exposed).
        public var conversion: Double?
        /// Against the control (nil for the control itself, or when either has no exposure).
        public var difference: Difference?

        /// The counts in funnel order.
        public var steps: [Int] { [exposed, reachedBuy, askedToSignIn, signedIn, purchased] }
    }

    /// A variant's conversion minus the control's, with its 95 % interval and a test.
    public struct Difference: Codable, Sendable, Equatable {
        /// The difference of the conversions (a fraction: 0.05 is 5 percentage points).
        public var estimate: Double
        /// The 95 % confidence interval of the difference (Newcombe's hybrid score interval).
        public var lower: Double
        public var upper: Double
        /// Two-sided p-value of the pooled two-proportion z-test.
        public var pValue: Double
    }

    public var experiment: String
    public var point: String
    public var control: String
    public var running: Bool
    /// The variants in the experiment's order (the control first), then any other variant
    /// found in the trail.
    public var variants: [Variant]
    /// How the interval and the p-value are computed.
    public var method: String

    /// The funnel's steps, as the JSON names them.
    public static let stepNames = ["exposed", "reachedBuy", "askedToSignIn", "signedIn", "purchased"]
    public static let methodDescription = "95 % interval of the difference to the control: Newcombe's hybrid score interval (from Wilson score intervals, Newcombe 1998, method 10); p: two-sided two-proportion z-test, pooled"

    /// The query: per variant, the sessions of experiment `name` by their first exposure and
    /// what they did after it.
    public static func sql(experiment name: String) -> SQL {
        """
        WITH firsts AS (
            SELECT session_id, min(seq) AS seq FROM experiment_exposures WHERE experiment = \(name) GROUP BY session_id
        ), exposed AS (
            SELECT f.session_id, f.seq, x.variant
            FROM firsts f JOIN experiment_exposures x ON x.session_id = f.session_id AND x.seq = f.seq
        )
        SELECT e.variant,
               count(*) AS exposed,
               sum(CASE WHEN EXISTS (SELECT 1 FROM audit_events a WHERE a.session_id = e.session_id AND a.seq > e.seq
                                     AND a.step IN ('screen.push', 'screen.present') AND a.screen = 'buy') THEN 1 ELSE 0 END) AS reached_buy,
               sum(CASE WHEN EXISTS (SELECT 1 FROM audit_events a WHERE a.session_id = e.session_id AND a.seq > e.seq
                                     AND a.step IN ('screen.push', 'screen.present') AND a.screen = 'signIn'
                                     AND a.coordinator LIKE '%/buy') THEN 1 ELSE 0 END) AS asked_to_sign_in,
               sum(CASE WHEN EXISTS (SELECT 1 FROM audit_events a WHERE a.session_id = e.session_id AND a.seq > e.seq
                                     AND a.step = 'auth.signIn') THEN 1 ELSE 0 END) AS signed_in,
               sum(CASE WHEN EXISTS (SELECT 1 FROM audit_events a WHERE a.session_id = e.session_id AND a.seq > e.seq
                                     AND a.step = 'purchase.completed') THEN 1 ELSE 0 END) AS purchased
        FROM exposed e
        GROUP BY e.variant
        """
    }

    /// Reads the report of experiment `name`, inside the caller's read transaction. Throws
    /// `not_found` for an experiment that does not exist.
    public static func load(experiment name: String, on connection: any DatabaseConnection) async throws -> ExperimentReport {
        guard let listing = try await connection.queryOne(ExperimentService.selectAll + " WHERE name = \(name)").map(ExperimentService.listing) else {
            throw PhotosError.notFound("no experiment \(name)")
        }
        let experiment = listing.experiment
        var counts: [String: [Int]] = [:]
        for row in try await connection.query(sql(experiment: name)) {
            counts[try row.string("variant")] = try ["exposed", "reached_buy", "asked_to_sign_in", "signed_in", "purchased"].map { try row.int($0) }
        }
        let order = experiment.variants.map(\.name) + counts.keys.filter { key in !experiment.variants.contains { $0.name == key } }.sorted()
        var variants = order.map { name in
            let c = counts[name] ?? [0, 0, 0, 0, 0]
            return Variant(
                variant: name, exposed: c[0], reachedBuy: c[1], askedToSignIn: c[2], signedIn: c[3], purchased: c[4],
                conversion: c[0] == 0 ? nil : Double(c[4]) / Double(c[0]), difference: nil)
        }
        if let control = variants.first, control.exposed > 0 {
            for index in variants.indices.dropFirst() where variants[index].exposed > 0 {
                variants[index].difference = difference(
                    purchased: variants[index].purchased, of: variants[index].exposed,
                    againstPurchased: control.purchased, of: control.exposed)
            }
        }
        return ExperimentReport(
            experiment: name, point: experiment.point.rawValue, control: experiment.control, running: experiment.running,
            variants: variants, method: methodDescription)
    }

    // MARK: Statistics

    /// z for a two-sided 95 % interval.
    static let z95 = 1.959963984540054

    /// The Wilson score interval of x successes in n (95 %).
    static func wilson(_ x: Int, _ n: Int) -> (lower: Double, upper: Double) {
        let p = Double(x) / Double(n), nn = Double(n), z2 = z95 * z95
        let centre = (p + z2 / (2 * nn)) / (1 + z2 / nn)
        let half = z95 * ((p * (1 - p) / nn + z2 / (4 * nn * nn)).squareRoot()) / (1 + z2 / nn)
        return (centre - half, centre + half)
    }

    /// x1/n1 − x2/n2 with Newcombe's hybrid score interval and the pooled z-test's p-value.
    public static func difference(purchased x1: Int, of n1: Int, againstPurchased x2: Int, of n2: Int) -> Difference {
        let p1 = Double(x1) / Double(n1), p2 = Double(x2) / Double(n2)
        let (l1, u1) = wilson(x1, n1), (l2, u2) = wilson(x2, n2)
        let d = p1 - p2
        let lower = d - ((p1 - l1) * (p1 - l1) + (u2 - p2) * (u2 - p2)).squareRoot()
        let upper = d + ((u1 - p1) * (u1 - p1) + (p2 - l2) * (p2 - l2)).squareRoot()
        let pooled = Double(x1 + x2) / Double(n1 + n2)
        let se = (pooled * (1 - pooled) * (1 / Double(n1) + 1 / Double(n2))).squareRoot()
        let pValue = se == 0 ? 1 : erfc(abs(d) / se / 2.0.squareRoot())
        return Difference(estimate: d, lower: lower, upper: upper, pValue: pValue)
    }
}
