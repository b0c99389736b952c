import Foundation
import TestSupport
import SnapshotFormat
import SyncEngine
import Testing

/// Every merge and random conformance vector through the real engine: real files copied with
/// their links, a real store, and the merged state read back from SQLite.
@Suite("Conformance vectors through the engine")
struct VectorConformanceTests {
    static var vectors: URL { ConformanceVectors.root }

    static var cases: [String] {
        let folders = ["merge", "random"].flatMap { group in
            ((try? FileManager.default.contentsOfDirectory(atPath: vectors.appendingPathComponent(group).path)) ?? [])
                .map { "\(group)/\($0)" }
        }
        // No folders means no vectors: one case that fails, saying where they were looked for.
        return folders.isEmpty ? ["missing"] : folders.sorted()
    }

    @Test("the engine's merged state equals expected.jsonl byte for byte", arguments: cases)
    func vector(_ name: String) throws {
        let folder = Self.vectors.appendingPathComponent(name)
        try #require(
            name != "missing",
            "conformance vectors not found at \(Self.vectors.path); set SNAPSHOT_VECTORS to shared/spec/vectors")
        // Given a copy of the case's shared folder, links preserved
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        try FileManager.default.removeItem(atPath: sandbox.shared)
        try #require(try SpawnedProcess.run("/bin/cp", ["-a", folder.appendingPathComponent("input").path, sandbox.shared]) == 0)

        // When a new device merges it
        let device = try sandbox.device("zz-vector")
        let report = try device.merge()

        // Then the store holds exactly the expected records, and the published file says the same
        let lines = try device.records(includeDeleted: true).map { JSONValue.object($0.normalForm).canonicalString + "\n" }
        let expected = try String(contentsOf: folder.appendingPathComponent("expected.jsonl"), encoding: .utf8)
        #expect(lines.joined() == expected)
        #expect(!lines.joined().contains("BADBADBA-"))
        let published = try SnapshotReader.read(bytes: sandbox.read("zz-vector.json"), fileName: "zz-vector.json")
        #expect(published.problems.isEmpty)
        #expect(published.recordCount == lines.count)
        let about = (try? String(contentsOf: folder.appendingPathComponent("about.txt"), encoding: .utf8)) ?? ""
        #expect(report.publishedGeneration == 1, "\(about)")
    }
}
