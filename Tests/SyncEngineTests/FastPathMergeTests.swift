import Foundation
import TestSupport
@testable import SnapshotFormat
import SnapshotMerge
@testable import SyncEngine
import Testing

/// A large generated folder merged by the engine (the record scanner, fields as bytes, skipping
/// records already merged) against the plain path: every file read as a tree, every record merged
/// by ``RecordMerge``, every line serialized from the tree. The published bytes must be equal.
@Suite("the engine's fast merge against the plain path, on a generated folder")
struct FastPathMergeTests {
    static let records = 3000

    @Test("cold merge, a one-record change, and a second device reading the first one's conflicts: byte for byte the plain merge")
    func generatedFolder() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        try Self.generate(into: sandbox.shared, records: Self.records)
        let inputs = try ["device-0.json", "device-1.json", "device-2.json"].map { ($0, try sandbox.read($0)) }
        for (name, bytes) in inputs {
            // The generated files are read by the scanner, not handed to the plain path.
            #expect(try SnapshotReader.readFast(bytes: bytes, fileName: name) != nil)
        }

        // A cold merge publishes exactly the plain merge of the three files.
        let desk = try sandbox.device("desk")
        let cold = try desk.merge()
        #expect(cold.added + cold.deleted == Self.records)
        #expect(cold.conflicts > 0)
        var seen = try inputs.flatMap { try SnapshotReader.readPlain(bytes: $0.1, fileName: $0.0).versions }
        #expect(try Self.recordsPart(of: sandbox.read("desk.json")) == Self.plainBody(seen))
        // The part recorded describes what the store holds (the digests of its rows, in id order)
        // as well as the file.
        let (recorded, stored) = try desk.store.reading { session -> ([String], String) in
            var digest = ContentDigest()
            try session.forEachLineDigest(in: .whole) { digest.add(lineDigest: $0) }
            return (try session.ownParts().map(\.contentDigest), digest.finalize())
        }
        #expect(recorded == [stored])
        #expect(PublishedLayout.recordsDigest(of: try sandbox.read("desk.json")) == stored)
        // Nothing to publish again, and no temporary file left.
        #expect(try desk.merge().publishedGeneration == nil)
        #expect(try Self.temporaryFiles(in: sandbox.shared).isEmpty)
        // Read again, desk.json is recognized as the file the intent describes (its digest was
        // recorded before the writer thread finished it).
        let reread = try desk.merge(rereadAll: true)
        #expect(reread.publishedGeneration == nil)
        #expect(!reread.warnings.contains { $0.contains("ANOTHER DEVICE") })
        #expect(reread.sources.first { $0.name == "desk.json" }?.status == .merged)

        // One record changed in device-1.json: the pass reads that record alone, and the result is
        // still the plain merge of everything seen.
        let before = try SnapshotReader.readPlain(bytes: inputs[1].1, fileName: "device-1.json")
        var changed = before.versions
        let index = changed.indices.first { changed[$0].hasVector && !changed[$0].deleted }!
        changed[index].versionVector[DeviceID("device-1")!] += 1
        changed[index].lastModified = Timestamp(milliseconds: changed[index].lastModified!.milliseconds + 86_400_000)
        changed[index].modifiedBy = DeviceID("device-1")
        changed[index].fields["note"] = .string("changed once, ünïcode \"quoted\"")
        try sandbox.write(
            "device-1.json",
            SnapshotWriter.bytes(
                of: ReadOnly.Snapshot(
                    device: before.device, generation: before.generation + 1, writtenAt: nil,
                    records: changed.map { ReadOnly.Record(version: $0) })))
        let incremental = try desk.merge()
        #expect(incremental.changed == 1 && incremental.added == 0)
        seen += changed
        let deskFile = try sandbox.read("desk.json")
        #expect(Self.recordsPart(of: deskFile) == Self.plainBody(seen))

        // A second device reads everything, desk.json and its conflict entries included: the same records.
        let phone = try sandbox.device("phone", state: sandbox.state("phone"))
        _ = try phone.merge()
        #expect(try Self.recordsPart(of: sandbox.read("phone.json")) == Self.recordsPart(of: deskFile))

        // desk's store lost, its key kept (restored from a backup of the key alone): a new store
        // merges everything (a cold merge, whose file is written while the records are inserted),
        // finds that desk.json already holds exactly that, signed with its key, and adopts it
        // instead of publishing: the file written meanwhile is removed.
        try FileManager.default.createDirectory(atPath: sandbox.state("desk-restored"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: sandbox.state() + "/signing.key", toPath: sandbox.state("desk-restored") + "/signing.key")
        let restored = try sandbox.device("desk", state: sandbox.state("desk-restored"))
        let adopted = try restored.merge()
        #expect(adopted.added + adopted.deleted == Self.records)
        #expect(adopted.publishedGeneration == nil)
        #expect(try sandbox.read("desk.json") == deskFile)
        #expect(try Self.temporaryFiles(in: sandbox.shared).isEmpty)

        // Its key lost too: the same records, published again signed with its new key (peers that
        // trust desk's key must be able to tell its files from anyone's)
        let anew = try sandbox.device("desk", state: sandbox.state("desk-anew"))
        let republished = try anew.merge()
        #expect(republished.publishedGeneration != nil)
        let file = try SnapshotReader.read(bytes: try sandbox.read("desk.json"), fileName: "desk.json")
        #expect(file.key == anew.key.publicKey)
        #expect(Self.recordsPart(of: try sandbox.read("desk.json")) == Self.recordsPart(of: deskFile))
        #expect(try Self.temporaryFiles(in: sandbox.shared).isEmpty)
    }

    @Test("a file that repeats a record byte for byte, alone or after another file holding it, merges it once")
    func repeatedElement() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let repeated = Wire.text(Wire.version(1, by: "laptop"))
        let other = Wire.text(Wire.version(2, by: "laptop"))
        try sandbox.write("laptop.json", Wire.snapshotText("laptop", generation: 1, records: [repeated, other, repeated]))
        try sandbox.write("phone.json", Wire.snapshotText("phone", generation: 1, records: [repeated, repeated]))
        let desk = try sandbox.device("desk")
        let report = try desk.merge()
        #expect(report.added == 2)
        #expect(report.sources.filter { $0.status == .merged }.count == 2)
        #expect(try desk.merge().publishedGeneration == nil)
        // The same, on a store that holds the records already (the general path).
        try sandbox.write("tablet.json", Wire.snapshotText("tablet", generation: 1, records: [other, other]))
        let again = try desk.merge()
        #expect(again.added == 0 && again.changed == 0)
    }

    /// Temporary files of an interrupted or abandoned publication left in `folder`.
    static func temporaryFiles(in folder: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasPrefix(".") && $0.hasSuffix(".tmp") }
    }

    /// The plain merge of `versions`: grouped by id, merged, each record's tree serialized.
    static func plainBody(_ versions: [ReadOnly.Version]) -> [UInt8] {
        let merged = Dictionary(grouping: versions, by: \.id).values.compactMap { RecordMerge.merge($0) }
        var body: [UInt8] = []
        for (index, record) in merged.sorted(by: { $0.id < $1.id }).enumerated() {
            body += index == 0 ? [0x0A] : [0x2C, 0x0A]
            body += JSONValue.object(record.normalForm).interchangeBytes
        }
        return body
    }

    /// The bytes between `"records":[` and the closing footer of a file this code wrote.
    static func recordsPart(of file: [UInt8]) -> [UInt8] {
        let opening = Array(#","records":["#.utf8)
        guard let start = file.firstRange(of: opening)?.upperBound else { return [] }
        // The records end at the last line feed before "]" (the signature member follows).
        guard let end = file.indices.last(where: { $0 + 1 < file.count && file[$0] == 0x0A && file[$0 + 1] == 0x5D })
        else { return [] }
        return Array(file[start..<end])
    }

    /// Runs the benchmark's generator (bench/generate.py) for three devices.
    static func generate(into folder: String, records: Int) throws {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("bench/generate.py").path
        let status = try SpawnedProcess.run(
            "/usr/bin/python3", [script, folder, "--devices", "3", "--records", "\(records)", "--seed", "3"])
        try #require(status == 0, "bench/generate.py failed")
    }
}
