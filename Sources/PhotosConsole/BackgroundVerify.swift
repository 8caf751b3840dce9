import AuditTrail
import DatabaseAccess
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import PhotosCore
import PhotosModel
import Sessions
import Synchronization

/// The console's "verify now": one streaming verify of the audit trail at a time per photosd,
/// run in the background, its progress and its outcome kept for the page to show — in the words
/// `photos-admin audit verify` uses.
final class BackgroundVerify: Sendable {
    struct Status: Sendable {
        var running = false
        var text = "Not run since photosd started."
        /// `ok` or `failed` once a verify has ended (the page's `data-verify`); nil before.
        var outcome: String?
    }

    private let status = Mutex(Status())

    var current: Status { status.withLock { $0 } }

    /// Starts a verify unless one runs; returns false when one does.
    func start(by operatorName: String, _ verify: @escaping @Sendable (@escaping @Sendable (Int) -> Void) async throws -> AuditChains.Verification) -> Bool {
        let started = status.withLock { status -> Bool in
            guard !status.running else { return false }
            status = Status(running: true, text: "Verifying (started by \(operatorName))…")
            return true
        }
        guard started else { return false }
        Task {
            let text: String
            var outcome = "failed"
            do {
                let result = try await verify { checked in
                    self.status.withLock { $0.text = "Verifying: \(checked) rows checked so far…" }
                }
                if let problem = result.problem {
                    text = "audit verify FAILED after \(result.rowsChecked) rows and \(result.checkpointsChecked) checkpoints: \(problem)"
                } else {
                    text = "audit trail intact: \(result.rowsChecked) rows verified, \(result.checkpointsChecked) checkpoints verified"
                    outcome = "ok"
                }
            } catch {
                text = "The verify could not run: \(error)"
            }
            let finished = ISO8601Timestamp.string(from: Date())
            self.status.withLock { $0 = Status(running: false, text: "\(text) (finished \(finished))", outcome: outcome) }
        }
        return true
    }
}
