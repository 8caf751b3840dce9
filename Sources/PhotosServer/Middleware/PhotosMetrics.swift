import AuditTrail
import DatabaseAccess
import Metrics
import Navigation
import PhotosBuildInfo
import PhotosModel
import Prometheus
import Sessions

/// The process's metrics: swift-metrics backed by one Prometheus registry, bootstrapped once.
///
/// Hummingbird's `MetricsMiddleware` counts requests and times them per route; this adds
/// actions per outcome (the client's answers), and from the published commits
/// (`AuditCommits`: whoever wrote — a client, an operator, the sweep) the writes to sessions and
/// the audit rows they appended; and the writer's group-commit batches.
final class PhotosMetrics: Sendable {
    /// The registry every `photosd` application in this process reports to. swift-metrics can
    /// be bootstrapped only once per process, and tests build many applications.
    static let shared = PhotosMetrics()

    let registry: PrometheusCollectorRegistry
    /// Made once: looking a counter up in the registry on every action was measurable.
    private let actions: [ActionOutcome: Metrics.Counter]
    private let auditRows: Metrics.Counter
    private let commits: [AuditCommits.Kind: Metrics.Counter]
    /// Checkpoints refused because the log does not extend the signed tree head (`LogFork`).
    private let signRefusals: Metrics.Counter

    private init() {
        let registry = PrometheusCollectorRegistry()
        self.registry = registry
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        var actions: [ActionOutcome: Metrics.Counter] = [:]
        for outcome in ActionOutcome.allCases {
            actions[outcome] = Counter(label: "photosd_actions_total", dimensions: [("outcome", outcome.rawValue)])
        }
        self.actions = actions
        self.auditRows = Counter(label: "photosd_audit_rows_written_total")
        var commits: [AuditCommits.Kind: Metrics.Counter] = [:]
        for kind in AuditCommits.Kind.allCases {
            commits[kind] = Counter(label: "photosd_session_commits_total", dimensions: [("kind", kind.rawValue)])
        }
        self.commits = commits
        self.signRefusals = Counter(label: "photosd_log_sign_refused_total")
    }

    /// One checkpoint refused over a log that does not extend what the key signed.
    func logSignRefused() {
        signRefusals.increment()
    }

    /// One committed write to a session, whoever made it (a client, an operator, the sweep),
    /// and the audit rows it appended.
    func committed(_ commit: AuditCommits.Commit) {
        commits[commit.kind]?.increment()
        if commit.auditRows > 0 { auditRows.increment(by: commit.auditRows) }
    }

    /// One action answered to a client, by its outcome (a replayed answer too: it wrote nothing).
    func record(_ result: ActionResult) {
        actions[result.outcome]?.increment()
    }

    /// What a scrape reads besides the counters: the readiness checks, this process, the
    /// background jobs (each nil when it could not be read).
    struct Figures: Sendable {
        var readiness: Readiness.Report?
        var process: ProcessFigures?
        /// Seconds since this instance's last finished session sweep.
        var sweepAgeSeconds: Double?
        /// Seconds since the oldest row still in `audit_events` was written.
        var oldestAuditRowAgeSeconds: Double?
    }

    /// The Prometheus text, with the writer's counters and `figures` brought up to date first.
    /// (Only SQLite has a writer; on PostgreSQL there are no writer figures.)
    func render(writer: GroupCommitStatistics?, figures: Figures = Figures()) -> String {
        Gauge(label: "photosd_build_info", dimensions: [("version", PhotosVersion.current), ("commit", PhotosBuild.commit)]).record(1)
        if let readiness = figures.readiness {
            Gauge(label: "photosd_storage_up").record(readiness.storageUp ? 1 : 0)
            Gauge(label: "photosd_ready").record(readiness.failed == nil ? 1 : 0)
            if let age = readiness.checkpointAgeSeconds { Gauge(label: "photosd_audit_checkpoint_age_seconds").record(age) }
        }
        if let process = figures.process {
            Gauge(label: "process_cpu_seconds_total").record(process.cpuSeconds)
            Gauge(label: "process_resident_memory_bytes").record(process.residentBytes)
            Gauge(label: "process_open_fds").record(process.openDescriptors)
        }
        if let age = figures.sweepAgeSeconds { Gauge(label: "photosd_session_sweep_age_seconds").record(age) }
        if let age = figures.oldestAuditRowAgeSeconds { Gauge(label: "photosd_audit_oldest_row_age_seconds").record(age) }
        if let writer {
            Gauge(label: "photosd_writer_commits").record(writer.commits)
            Gauge(label: "photosd_writer_requests").record(writer.requests)
            Gauge(label: "photosd_writer_largest_batch").record(writer.largestBatch)
            Gauge(label: "photosd_writer_reopens").record(writer.reopens)
            Gauge(label: "photosd_writer_mean_batch").record(writer.commits == 0 ? 0 : Double(writer.requests) / Double(writer.commits))
        }
        return registry.emitToString()
    }
}
