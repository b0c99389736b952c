import Prometheus
import SnapshotFormat
import SyncStore

/// `syncd`'s metrics, in swift-prometheus's registry, written after each pass to a Prometheus
/// text file (the format node_exporter's textfile collector reads), by rename: a reader never sees
/// half a file. No network listener: the file is the interface. Each metric carries its `# HELP`
/// line (made on the registry itself: swift-metrics' API has no place for help text).
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
    private let passes: Counter
    private let failures: Counter
    private let duration: DurationHistogram
    private let lastPass: Gauge
    private let lastSuccess: Gauge
    private let bytesRead: Counter
    private let bytesWritten: Counter
    private let sources: [SourceOutcome.Status: Gauge]
    private let rejected: [String: Gauge]
    private let records: [String: Gauge]

    /// The reasons a file is not merged, as ``SourceOutcome/problemKind`` names them.
    static let reasons = [
        "untrusted", "invalid_json", "invalid_top_level", "newer_format", "misnamed", "too_large", "unreadable",
        "held_back", SyncDevice.notUTF8Kind,
    ]

    /// The histogram's buckets: a pass with nothing to do takes milliseconds, a first merge of a
    /// million records seconds.
    static let durationBuckets: [Duration] = [
        .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
        .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500), .seconds(5), .seconds(10),
        .seconds(30), .seconds(60),
    ]

    init(path: String) {
        self.path = path
        passes = registry.makeCounter(descriptor: .named("snapshotsync_passes_total", help: "Merge passes run."))
        failures = registry.makeCounter(
            descriptor: .named(
                "snapshotsync_pass_failures_total", help: "Merge passes that failed (the log says why)."))
        duration = registry.makeDurationHistogram(
            descriptor: .named("snapshotsync_pass_duration_seconds", help: "How long each merge pass took."),
            buckets: Self.durationBuckets)
        lastPass = registry.makeGauge(
            descriptor: .named(
                "snapshotsync_last_pass_timestamp_seconds", help: "When the last merge pass ended (Unix time)."))
        lastSuccess = registry.makeGauge(
            descriptor: .named(
                "snapshotsync_last_success_timestamp_seconds",
                help: "When the last successful merge pass ended (Unix time)."))
        bytesRead = registry.makeCounter(
            descriptor: .named(
                "snapshotsync_read_bytes_total", help: "Bytes of the shared folder's files read by merge passes."))
        bytesWritten = registry.makeCounter(
            descriptor: .named(
                "snapshotsync_written_bytes_total", help: "Bytes of this device's files written to the shared folder."))
        let registry = registry
        let states: [SourceOutcome.Status] = [.merged, .unchanged, .skipped, .rejected, .heldBack, .ignored]
        sources = Dictionary(
            uniqueKeysWithValues: states.map { state in
                let name = state.rawValue.replacingOccurrences(of: " ", with: "_")
                let help = "Files of the shared folder at the last successful pass, by what it did with them."
                return (
                    state,
                    registry.makeGauge(
                        descriptor: .named("snapshotsync_sources", help: help), labels: [("state", name)])
                )
            })
        rejected = Dictionary(
            uniqueKeysWithValues: Self.reasons.map { reason in
                let help =
                    "Files of the shared folder whose last read did not merge them, by reason (syncctl status names them)."
                return (
                    reason,
                    registry.makeGauge(
                        descriptor: .named("snapshotsync_files_rejected", help: help), labels: [("reason", reason)])
                )
            })
        records = Dictionary(
            uniqueKeysWithValues: ["live", "deleted", "in_conflict"].map { state in
                let help =
                    "Records in the store: live, deleted (tombstones) and in conflict (syncctl conflicts lists them)."
                return (
                    state,
                    registry.makeGauge(
                        descriptor: .named("snapshotsync_records", help: help), labels: [("state", state)])
                )
            })
    }

    /// Takes one pass in: its report (nil when it failed), how long it took, the store's counts.
    func record(_ report: MergeReport?, took: Duration, counts: RecordCounts?, at now: Timestamp) {
        let seconds = Double(now.milliseconds) / 1000
        passes.increment()
        duration.record(took)
        lastPass.set(seconds)
        guard let report else {
            failures.increment()
            return
        }
        lastSuccess.set(seconds)
        bytesRead.increment(by: Int64(report.bytesRead))
        bytesWritten.increment(by: Int64(report.bytesWritten))
        let byState = Dictionary(grouping: report.sources, by: \.status)
        for (state, gauge) in sources { gauge.set(Int64(byState[state]?.count ?? 0)) }
        let byReason = Dictionary(grouping: report.sources.compactMap(\.problemKind), by: { $0 })
        for (reason, gauge) in rejected { gauge.set(Int64(byReason[reason]?.count ?? 0)) }
        if let counts {
            records["live"]?.set(Int64(counts.live))
            records["deleted"]?.set(Int64(counts.deleted))
            records["in_conflict"]?.set(Int64(counts.inConflict))
        }
    }

    /// Writes the file: a temporary beside it, renamed over it.
    func write() throws(SystemCallError) {
        let temporary = path + ".\(SystemCalls.processID).tmp"
        try? SystemCalls.remove(temporary)
        let descriptor = try SystemCalls.createExclusively(temporary, exactMode: true)
        defer { SystemCalls.close(descriptor) }
        do throws(SystemCallError) {
            try SystemCalls.writeAll(descriptor, registry.emitToBuffer(), path: temporary)
            try SystemCalls.rename(temporary, to: path)
        } catch {
            // (A full disk, a directory at the path: no temporary file is left beside it.)
            try? SystemCalls.remove(temporary)
            throw error
        }
    }
}

extension MetricNameDescriptor {
    /// A metric named `name` in full (no namespace, subsystem or unit added), with its `# HELP` text.
    static func named(_ name: String, help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: name, unitName: "", helpText: help)
    }
}
