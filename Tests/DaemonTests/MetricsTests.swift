import Foundation
import SnapshotFormat
import TestSupport
import Testing

extension DaemonTests {
    /// The samples of a Prometheus text file: `name{labels}` to value.
    static func samples(_ text: String) -> [String: Double] {
        var samples: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else {
                continue
            }
            samples[String(line[..<space])] = value
        }
        return samples
    }

    @Test(
        "syncd writes its metrics after each pass, by rename, where --metrics-file says: passes, records, files rejected by reason, bytes"
    )
    func metricsFile() throws {
        // Given a peer's file with 3 records and a file that is not valid JSON
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        try sandbox.publish(
            "phone.json",
            Snapshots.file("phone", records: (1...3).map { (Snapshots.id($0), Snapshots.fields("note \($0)")) }))
        try sandbox.publish("tablet.json", Array(#"{"format": 1, "device": "tablet", "records": [{"#.utf8))
        let path = sandbox.path("textfile/syncd.prom")
        try FileManager.default.createDirectory(atPath: sandbox.path("textfile"), withIntermediateDirectories: true)

        // When syncd runs its first pass
        let daemon = try Daemon("desk", in: sandbox, extra: ["--metrics-file", path])
        defer { daemon.stop() }
        try daemon.waitUntilReady()

        // Then the file says so, in the Prometheus text format
        var samples: [String: Double] = [:]
        #expect(
            eventually(within: 10) {
                samples = Self.samples((try? String(contentsOfFile: path, encoding: .utf8)) ?? "")
                return (samples["snapshotsync_passes_total"] ?? 0) >= 1
            }, "\(daemon.log)")
        #expect(samples["snapshotsync_pass_failures_total"] == 0)
        #expect(samples[#"snapshotsync_records{state="live"}"#] == 3)
        #expect(samples[#"snapshotsync_files_rejected{reason="invalid_json"}"#] == 1)
        #expect(samples[#"snapshotsync_files_rejected{reason="untrusted"}"#] == 0)
        #expect((samples["snapshotsync_read_bytes_total"] ?? 0) > 0)
        #expect((samples["snapshotsync_written_bytes_total"] ?? 0) > 0)
        #expect((samples["snapshotsync_last_success_timestamp_seconds"] ?? 0) > 1_700_000_000)
        #expect((samples["snapshotsync_pass_duration_seconds_count"] ?? 0) >= 1)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.contains("# TYPE snapshotsync_passes_total counter"))
        // Every metric says what it means, once per name
        for name in [
            "snapshotsync_passes_total", "snapshotsync_pass_failures_total", "snapshotsync_pass_duration_seconds",
            "snapshotsync_last_pass_timestamp_seconds", "snapshotsync_last_success_timestamp_seconds",
            "snapshotsync_read_bytes_total", "snapshotsync_written_bytes_total", "snapshotsync_sources",
            "snapshotsync_files_rejected", "snapshotsync_records",
        ] {
            #expect(text.components(separatedBy: "# HELP \(name) ").count == 2, "\(name)\n\(text)")
        }
        #expect(text.contains("# TYPE snapshotsync_pass_duration_seconds histogram"))

        // And a later pass updates it (the broken file fixed: nothing rejected any more)
        try sandbox.publish(
            "tablet.json", Snapshots.file("tablet", records: [(Snapshots.id(9), Snapshots.fields("fixed"))]))
        #expect(
            eventually(within: 10) {
                samples = Self.samples((try? String(contentsOfFile: path, encoding: .utf8)) ?? "")
                return samples[#"snapshotsync_records{state="live"}"#] == 4
            }, "\(daemon.log)")
        #expect(samples[#"snapshotsync_files_rejected{reason="invalid_json"}"#] == 0)
        // And no temporary file is left beside it
        #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.path("textfile")) == ["syncd.prom"])
    }

    @Test(
        "a metrics path that names a directory is warned about and leaves no temporary file beside it; an empty one is refused at start (64 as an option, 78 as a setting), not taken for off"
    )
    func metricsPathMistakes() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let directory = sandbox.path("textfile")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let daemon = try Daemon("desk", in: sandbox, extra: ["--metrics-file", directory])
        defer { daemon.stop() }
        try daemon.waitUntilReady()
        #expect(eventually(within: 10) { daemon.log.contains("cannot write the metrics file") }, "\(daemon.log)")
        #expect(daemon.stop() == 0, "\(daemon.log)")
        let beside = try FileManager.default.contentsOfDirectory(atPath: sandbox.root).filter { $0.hasSuffix(".tmp") }
        #expect(beside.isEmpty, "\(beside)")

        // An empty option is a usage error (64), as the daemon's other option values out of range
        let empty = try Daemon("desk", in: sandbox, extra: ["--metrics-file", ""])
        defer { empty.stop() }
        #expect(empty.launched.exitStatus(within: 30) == 64, "\(empty.log)")
        #expect(empty.log.contains("--metrics-file must name a file"), "\(empty.log)")
        // and an empty variable a setting that is wrong (78), naming the variable
        let emptyVariable = try Daemon("desk", in: sandbox, environment: ["SYNCD_METRICS_FILE": ""])
        defer { emptyVariable.stop() }
        #expect(emptyVariable.launched.exitStatus(within: 30) == 78, "\(emptyVariable.log)")
        #expect(emptyVariable.log.contains("metricsFile is empty (from SYNCD_METRICS_FILE in the environment)"), "\(emptyVariable.log)")
    }
}
