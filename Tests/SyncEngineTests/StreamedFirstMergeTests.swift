import Foundation
@testable import SnapshotFormat
import SnapshotMerge
@testable import SyncEngine
import SyncStore
import Testing

/// A first merge of large files merged by record id through windows (``StreamedFirstMerge``,
/// forced here with a threshold of 0) against the same folder read whole: the same store rows,
/// source rows, record digests, report and published records. Files it cannot stream make it
/// fall back, with the same result.
@Suite("a streamed first merge against the files read whole")
struct StreamedFirstMergeTests {
    /// Everything a pass leaves that must not depend on how it read.
    struct Outcome: Equatable {
        var report: MergeReport
        var lines: [[UInt8]]
        var sources: [StoredSource]
        var digests: [String: [UInt8]]
        var published: [UInt8]
    }

    /// Writes the folder with `setup` twice, merges one copy streamed and one read whole, and
    /// checks they agree; returns whether the streamed copy did stream.
    @discardableResult
    func expectSame(
        schema: String? = nil, _ setup: (Sandbox) throws -> Void, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> Bool {
        var outcomes: [Outcome] = []
        var streamed = false
        for threshold in [Int64(0), Int64.max] {
            let sandbox = try Sandbox()
            defer { sandbox.remove() }
            try setup(sandbox)
            var schemaFiles: [String] = []
            if let schema {
                schemaFiles = [sandbox.outside + "/note.schema.json"]
                try Data(schema.utf8).write(to: URL(fileURLWithPath: schemaFiles[0]))
            }
            let device = try sandbox.device("desk", streamedFirstMergeThreshold: threshold, schemaFiles: schemaFiles)
            var report = try device.merge()
            if threshold == 0 { streamed = report.timings.streamed }
            #expect(!(threshold > 0 && report.timings.streamed), sourceLocation: sourceLocation)
            report.timings = PassTimings()
            report.ownFile = ""
            let (lines, sources, digests) = try device.store.reading { session in
                let sources = try session.sources()
                let digests = try sources.reduce(into: [String: [UInt8]]()) { $0[$1.name] = try session.recordDigests(of: $1.name) }
                return (try session.records().map(\.interchangeLine), sources, digests)
            }
            // Where and when the files were is not the merge's doing.
            let placeless = sources.map { row in
                var row = row
                (row.fileSystemDevice, row.inode, row.modifiedNanos, row.changedNanos) = (0, 0, 0, 0)
                if row.name == "desk.json" { row.size = 0 }
                return row
            }
            let published = (try? sandbox.read("desk.json")).map(FastPathMergeTests.recordsPart(of:)) ?? []
            outcomes.append(Outcome(report: report, lines: lines, sources: placeless, digests: digests, published: published))
            #expect(try FastPathMergeTests.temporaryFiles(in: sandbox.shared).isEmpty, sourceLocation: sourceLocation)
        }
        #expect(outcomes[0].report == outcomes[1].report, sourceLocation: sourceLocation)
        #expect(outcomes[0].lines == outcomes[1].lines, sourceLocation: sourceLocation)
        #expect(outcomes[0].sources == outcomes[1].sources, sourceLocation: sourceLocation)
        // Compared file by file: a difference shows which file, not two megabytes of digests.
        #expect(outcomes[0].digests.keys.sorted() == outcomes[1].digests.keys.sorted(), sourceLocation: sourceLocation)
        for (name, digests) in outcomes[0].digests {
            let other = outcomes[1].digests[name]
            #expect(
                Bool(digests == other),
                "\(name): \(digests.count / 16) digests streamed, \((other?.count ?? 0) / 16) read whole, first difference at \(zip(digests, other ?? []).enumerated().first { $0.element.0 != $0.element.1 }.map { $0.offset / 16 } ?? -1)",
                sourceLocation: sourceLocation)
        }
        #expect(outcomes[0].published == outcomes[1].published, sourceLocation: sourceLocation)
        #expect(!outcomes[0].lines.isEmpty || outcomes[0].report.added == 0, sourceLocation: sourceLocation)
        return streamed
    }

    @Test("the benchmark's generated folder (records in any order, overlapping devices, conflicts, tombstones)")
    func generated() throws {
        let streamed = try expectSame { sandbox in
            try FastPathMergeTests.generate(into: sandbox.shared, records: 3000)
        }
        #expect(streamed)
    }

    @Test("the same folder as SnapshotSync writes it (records in id order, read a stretch at a time)")
    func sortedFiles() throws {
        let streamed = try expectSame { sandbox in
            try FastPathMergeTests.generate(into: sandbox.shared, records: 3000)
            for name in ["device-0.json", "device-1.json", "device-2.json"] {
                let reading = try SnapshotReader.readPlain(bytes: sandbox.read(name), fileName: name)
                let grouped = Dictionary(grouping: reading.versions, by: \.id).values.map { versions in
                    ReadOnly.Record(version: versions[0], conflicts: Array(versions.dropFirst()))
                }.sorted { $0.id < $1.id }
                try sandbox.write(
                    name,
                    SnapshotWriter.bytes(
                        of: ReadOnly.Snapshot(
                            device: reading.device, generation: reading.generation, writtenAt: nil, records: grouped)))
                #expect(try SnapshotReader.index(read: { buffer, offset in
                    let bytes = try! sandbox.read(name)
                    let count = min(buffer.count, bytes.count - offset)
                    bytes.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + offset, byteCount: count) }
                    return count
                })?.isSorted == true)
            }
        }
        #expect(streamed)
    }

    @Test("warnings from the records and the top level: future dates, an invalid writtenAt, the header last, an empty file")
    func warnings() throws {
        let streamed = try expectSame { sandbox in
            let future = Wire.version(1, by: "phone", at: 40 * 86_400_000)
            try sandbox.write("phone.json", Wire.snapshot("phone", generation: 3, versions: [future, Wire.version(2, by: "phone")]))
            try sandbox.write(
                "laptop.json",
                #"{"records":[\#(Wire.text(Wire.version(2, by: "laptop", at: 5))),\#(Wire.text(Wire.version(3, by: "laptop")))],"writtenAt":"yesterday","generation":2,"device":"laptop","format":1}"#
            )
            try sandbox.write("tablet.json", Wire.snapshotText("tablet", generation: 1, records: []))
        }
        #expect(streamed)
    }

    @Test("schema files: versions newer than the schemas are counted per file; a version that does not fit makes it fall back")
    func schemas() throws {
        let schema = #"{"format": 1, "types": [{"type": "Note", "versions": [{"schemaVersion": 1, "fields": {"text": "string"}}]}]}"#
        func newer(_ n: Int, by device: String) -> ReadOnly.Version {
            var version = Wire.version(n, by: device, fields: #"{"text": 7}"#)
            version.schemaVersion = 2
            return version
        }
        let streamed = try expectSame(schema: schema) { sandbox in
            let fitting = (0..<5).map { Wire.version($0, by: "phone", fields: #"{"text": "milk"}"#) }
            try sandbox.write("phone.json", Wire.snapshot("phone", generation: 2, versions: fitting + [newer(8, by: "phone")]))
            try sandbox.write("laptop.json", Wire.snapshot("laptop", generation: 2, versions: [newer(8, by: "phone"), newer(9, by: "laptop")]))
        }
        #expect(streamed)
        let fellBack = try expectSame(schema: schema) { sandbox in
            try sandbox.write(
                "phone.json",
                Wire.snapshot("phone", generation: 2, versions: [Wire.version(1, by: "phone", fields: #"{"text": 42}"#)]))
        }
        #expect(!fellBack)
    }

    @Test("files it cannot stream make the pass read them whole, with the same result", arguments: Fallback.allCases)
    func fallsBack(_ fallback: Fallback) throws {
        let streamed = try expectSame { sandbox in
            try sandbox.write("phone.json", Wire.snapshot("phone", generation: 3, versions: (0..<50).map { Wire.version($0, by: "phone") }))
            switch fallback {
            case .repeatedID:
                let text = Wire.text(Wire.version(7, by: "laptop"))
                try sandbox.write("laptop.json", Wire.snapshotText("laptop", generation: 1, records: [text, text]))
            case .invalidRecord:
                try sandbox.write(
                    "laptop.json",
                    Wire.snapshotText(
                        "laptop", generation: 1,
                        records: [Wire.text(Wire.version(1, by: "laptop")), #"{"id":"\#(Wire.id(9))","type":7}"#]))
            case .invalidJSON:
                try sandbox.write("laptop.json", #"{"format":1,"device":"laptop","generation":1,"records":[{"id":"#)
            case .idlessRecord:
                try sandbox.write("laptop.json", Wire.snapshotText("laptop", generation: 1, records: ["7", #"{"type":"Note"}"#]))
            case .ownFile:
                try sandbox.write("desk.json", Wire.snapshot("desk", generation: 4, versions: [Wire.version(60, by: "desk")]))
            case .manyFiles:
                for device in 0..<StreamedFirstMerge.filesAtMost {
                    try sandbox.write(
                        "peer\(device).json", Wire.snapshot("peer\(device)", generation: 1, versions: [Wire.version(device, by: "peer\(device)")]))
                }
            case .newerFormat:
                try sandbox.write("laptop.json", Wire.snapshotText("laptop", generation: 1, format: 3, records: []))
            }
        }
        #expect(!streamed)
    }

    enum Fallback: CaseIterable, Sendable {
        case repeatedID, invalidRecord, invalidJSON, idlessRecord, ownFile, newerFormat, manyFiles
    }

    @Test("a file that changes after it was indexed is declined when the merge ends")
    func changedFile() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        try sandbox.write("phone.json", Wire.snapshot("phone", generation: 3, versions: [Wire.version(1, by: "phone")]))
        let device = try sandbox.device("desk")
        let status = try SystemCalls.status(sandbox.sharedPath("phone.json"))
        let indexed = StreamedFirstMerge.indexing(
            [("phone.json", status)], folder: device.folder, device: DeviceID("desk")!, maxFileSize: 1 << 30,
            schemas: device.schemas, now: Timestamp(milliseconds: Wire.base), clockSkewMargin: 0)
        let streamed = try indexed.get()
        #expect(throws: Never.self) { try streamed.finished() }
        // Rewritten in place (not replaced): the open descriptor sees the change.
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: sandbox.sharedPath("phone.json")))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(" ".utf8))
        try handle.close()
        #expect(throws: StreamedFirstMerge.Declined.self) { try streamed.finished() }
    }
}
