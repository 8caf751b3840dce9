import Logging
import ServiceLifecycle
import UnixSignals

/// SIGHUP never ends photosd (its default action would, exit 129): `logrotate` scripts and
/// terminals that close send it. There is nothing to reopen — photosd writes its log to standard
/// error, which the service manager (journald) keeps and rotates — and its configuration is read
/// once, at start: so the signal is logged, saying how to apply a change, and otherwise ignored.
struct HangUpNotice: Service {
    let logger: Logger

    func run() async throws {
        // Trapping replaces the default action (which ends the process) before the first await.
        let signals = await UnixSignalsSequence(trapping: .sighup)
        for await _ in signals.cancelOnGracefulShutdown() {
            logger.notice("SIGHUP received and ignored: photosd reads its configuration only at start (restart it to apply a change); its log goes to standard error, which needs no reopening")
        }
    }
}
