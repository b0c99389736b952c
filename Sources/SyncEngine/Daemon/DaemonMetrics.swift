import CoreMetrics
import Prometheus
import SnapshotFormat
import SyncStore

/// `syncd`'s metrics, through swift-metrics with swift-prometheus as its backend, written after
/// each pass to a Prometheus text file (the format node_exporter's textfile collector reads), by
/// rename: a reader never sees half a file. No network listener: the file is the interface.
///
/// The metrics (docs/daemon.md, "Metrics"):
/// - `snapshotsync_passes_total`, `snapshotsync_pass_failures_total`: passes run, and failed.
/// - `snapshotsync_pass_duration_seconds`: a histogram of pass durations.
/// - `snapshotsync_last_pass_timestamp_seconds`, `snapshotsync_last_success_timestamp_seconds`.
/// - `snapshotsync_sources{state}`: files of the last successful pass, by what it did with them.
/// - `snapshotsync_files_rejected{reason}`: files in the folder whose last read did not merge them.
/// - `snapshotsync_records{state}`: records live, deleted and in conflict.
/// - `snapshotsync_read_bytes_total`, `snapshotsync_written_bytes_total`.
final class DaemonMetrics: Sendable {
    /// Where the file is written.
    let path: String
    private let registry = PrometheusCollectorRegistry()
    private let passes: CoreMetrics.Counter
    private let failures: CoreMetrics.Counter
    private let duration: CoreMetrics.Timer
    private let lastPass: CoreMetrics.Gauge
    private let lastSuccess: CoreMetrics.Gauge
    private let bytesRead: CoreMetrics.Counter
    private let bytesWritten: CoreMetrics.Counter
    private let sources: [SourceOutcome.Status: CoreMetrics.Gauge]
    private let rejected: [String: CoreMetrics.Gauge]
    private let records: [String: CoreMetrics.Gauge]

    /// The reasons a file is not merged, as ``SourceOutcome/problemKind`` names them.
    static let reasons = [
        "untrusted", "invalid_json", "invalid_top_level", "newer_format", "misnamed", "too_large", "unreadable",
        "held_back",
    ]

    init(path: String) {
        self.path = path
        let factory = PrometheusMetricsFactory(registry: registry)
        passes = CoreMetrics.Counter(label: "snapshotsync_passes_total", factory: factory)
        failures = CoreMetrics.Counter(label: "snapshotsync_pass_failures_total", factory: factory)
        duration = CoreMetrics.Timer(label: "snapshotsync_pass_duration_seconds", factory: factory)
        lastPass = CoreMetrics.Gauge(label: "snapshotsync_last_pass_timestamp_seconds", factory: factory)
        lastSuccess = CoreMetrics.Gauge(label: "snapshotsync_last_success_timestamp_seconds", factory: factory)
        bytesRead = CoreMetrics.Counter(label: "snapshotsync_read_bytes_total", factory: factory)
        bytesWritten = CoreMetrics.Counter(label: "snapshotsync_written_bytes_total", factory: factory)
        let states: [SourceOutcome.Status] = [.merged, .unchanged, .skipped, .rejected, .heldBack, .ignored]
        sources = Dictionary(uniqueKeysWithValues: states.map { state in
            let name = state.rawValue.replacingOccurrences(of: " ", with: "_")
            return (state, CoreMetrics.Gauge(label: "snapshotsync_sources", dimensions: [("state", name)], factory: factory))
        })
        rejected = Dictionary(uniqueKeysWithValues: Self.reasons.map { reason in
            (reason, CoreMetrics.Gauge(label: "snapshotsync_files_rejected", dimensions: [("reason", reason)], factory: factory))
        })
        records = Dictionary(uniqueKeysWithValues: ["live", "deleted", "in_conflict"].map { state in
            (state, CoreMetrics.Gauge(label: "snapshotsync_records", dimensions: [("state", state)], factory: factory))
        })
    }

    /// Takes one pass in: its report (nil when it failed), how long it took, the store's counts.
    func record(_ report: MergeReport?, took: Duration, counts: RecordCounts?, at now: Timestamp) {
        let seconds = Double(now.milliseconds) / 1000
        passes.increment()
        duration.recordNanoseconds(took.components.seconds * 1_000_000_000 + took.components.attoseconds / 1_000_000_000)
        lastPass.record(seconds)
        guard let report else {
            failures.increment()
            return
        }
        lastSuccess.record(seconds)
        bytesRead.increment(by: Int64(report.bytesRead))
        bytesWritten.increment(by: Int64(report.bytesWritten))
        let byState = Dictionary(grouping: report.sources, by: \.status)
        for (state, gauge) in sources { gauge.record(byState[state]?.count ?? 0) }
        let byReason = Dictionary(grouping: report.sources.compactMap(\.problemKind), by: { $0 })
        for (reason, gauge) in rejected { gauge.record(byReason[reason]?.count ?? 0) }
        if let counts {
            records["live"]?.record(counts.live)
            records["deleted"]?.record(counts.deleted)
            records["in_conflict"]?.record(counts.inConflict)
        }
    }

    /// Writes the file: a temporary beside it, renamed over it.
    func write() throws(SystemCallError) {
        let temporary = path + ".\(SystemCalls.processID).tmp"
        try? SystemCalls.remove(temporary)
        let descriptor = try SystemCalls.createExclusively(temporary, exactMode: true)
        do throws(SystemCallError) {
            defer { SystemCalls.close(descriptor) }
            try SystemCalls.writeAll(descriptor, registry.emitToBuffer(), path: temporary)
        } catch {
            try? SystemCalls.remove(temporary)
            throw error
        }
        try SystemCalls.rename(temporary, to: path)
    }
}
