import AuditTrail
import Foundation
import PhotosCore
import PhotosModel

extension SessionCoordinator {
    /// What one sweep did.
    public struct SweepReport: Sendable, Equatable {
        /// False when another instance holds the sweep's lease (nothing was done).
        public var ran = false
        /// Sessions ended (idle past the expiry).
        public var ended = 0
        /// Rows past their windows, deleted.
        public var pruned = SessionSweep.Pruned()
    }

    /// Ends every session idle past the expiry (`session.expired`, through the same write as an
    /// action) and prunes tokens, sign-in attempts and trusted addresses past their windows —
    /// if `holder` gets the sweep's lease (one instance at a time), which it keeps for `leaseFor`
    /// and renews as it goes. A session used while the sweep looks at it lives on: each is
    /// ended only if still idle when its write commits.
    public func sweep(holder: String, leaseFor: TimeInterval = 300, pageSize: Int = 500) async throws -> SweepReport {
        let sweep = SessionSweep(database: database)
        var report = SweepReport()
        guard try await sweep.takeLease(holder: holder, now: auth.now(), until: auth.now().addingTimeInterval(leaseFor)) else { return report }
        report.ran = true
        if idleExpiry > 0 {
            var after = SessionSweep.Cursor.start
            while true {
                let page = try await sweep.page(idleBefore: auth.now().addingTimeInterval(-idleExpiry), after: after, limit: pageSize)
                for id in page.idle where try await expireIfIdle(sessionID: id) { report.ended += 1 }
                guard let next = page.next else { break }
                after = next
                // Still ours? A sweep that outlived its lease stops rather than run beside another.
                guard try await sweep.takeLease(holder: holder, now: auth.now(), until: auth.now().addingTimeInterval(leaseFor)) else { return report }
            }
        }
        report.pruned = try await sweep.prune(now: auth.now(), signInWindow: auth.signInWindow, trustedFor: auth.trustedAddressWindow)
        return report
    }

    /// Gives the sweep's lease up, if `holder` has it (at shutdown: the next instance, or this
    /// one restarted, sweeps at once instead of waiting for the lease to run out).
    public func releaseSweepLease(holder: String) async throws {
        try await MaintenanceLease(database: database, name: SessionSweep.lease).release(holder: holder)
    }
}
