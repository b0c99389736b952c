import Foundation
import SnapshotFormat
import SyncEngine
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("Engine: merging a folder with problem files")
struct MergeProblemFilesTests {
    static let limit: Int64 = 4_000

    /// Fills the shared folder with one valid peer, a valid copy, and every kind of problem.
    static func fillProblemFolder(_ sandbox: Sandbox) throws {
        let valid = [Wire.version(1, by: "laptop"), Wire.version(2, by: "laptop", fields: #"{"a": "b"}"#)]
        // Two invalid records mixed with the valid ones.
        let invalid = [#"{"id": "not-a-uuid", "type": "Note"}"#, #"{"id": "0000AAAA-0000-4000-8000-000000000099", "type": ""}"#]
        try sandbox.write("laptop.json", Wire.snapshotText("laptop", generation: 3, records: valid.map(Wire.text) + invalid))
        try sandbox.write("laptop (1).json", Wire.snapshot("laptop", generation: 2, versions: [Wire.version(3, by: "laptop")]))
        // A file naming another device, a truncated file, invalid UTF-8, a newer format, duplicate keys.
        try sandbox.write("phone.json", Wire.snapshot("laptop", generation: 9, versions: [Wire.version(10, by: "laptop")]))
        let whole = Wire.snapshot("tv", generation: 1, versions: [Wire.version(11, by: "tv"), Wire.version(12, by: "tv")])
        try sandbox.write("tv.json", Array(whole.prefix(whole.count / 2)))
        var watch = Array(Wire.snapshotText("watch", generation: 1, records: [#"{"id": "0000AAAA-0000-4000-8000-000000000013", "type": "Note", "fields": {"x": "QQ"}}"#]).utf8)
        let marker = watch.firstIndex(of: UInt8(ascii: "Q"))!
        watch[marker] = 0xC3
        watch[marker + 1] = 0x28
        try sandbox.write("watch.json", watch)
        try sandbox.write("future.json", Wire.snapshotText("future", generation: 1, format: 3, records: [#"{"id": "0000AAAA-0000-4000-8000-000000000014", "type": "Note"}"#]))
        try sandbox.write("dup.json", #"{"format": 1, "device": "dup", "generation": 1, "generation": 2, "records": [{"id": "0000AAAA-0000-4000-8000-000000000015", "type": "Note"}]}"#)
        // A symbolic link to a valid snapshot outside, a FIFO, a directory, and a file over the limit.
        let outsideFile = sandbox.outside + "/x.json"
        try Data(Wire.snapshot("x", generation: 1, versions: [Wire.version(16, by: "x")])).write(to: URL(fileURLWithPath: outsideFile))
        try FileManager.default.createSymbolicLink(atPath: sandbox.sharedPath("x.json"), withDestinationPath: outsideFile)
        #expect(mkfifo(sandbox.sharedPath("f.json"), 0o644) == 0)
        try FileManager.default.createDirectory(atPath: sandbox.sharedPath("d.json"), withIntermediateDirectories: false)
        let padding = String(repeating: "z", count: Int(limit))
        try sandbox.write("big.json", Wire.snapshot("big", generation: 1, versions: [Wire.version(17, by: "big", fields: #"{"pad": "\#(padding)"}"#)]))
        // Names a reader never considers.
        try sandbox.write("notes.txt", "not a snapshot")
        try sandbox.write(".hidden.json", "{}")
    }

    @Test("large whole snapshots with a record that is not valid JSON, each in another part of the ids: one pass finds them all, and the pass starts again once, not once per file")
    func invalidLargeSnapshotsFoundInOnePass() throws {
        // Given three whole snapshots of 3 MB each (a pass of over 8 MiB reads them group by
        // group), each with one record holding a duplicate key (JSON, but not I-JSON) among its
        // last ones, and a valid fourth
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let pad = String(repeating: "p", count: 1_000)
        for (n, device) in ["a", "b", "c", "d"].enumerated() {
            var records = (0..<3_000).map { Wire.text(PartsTests.version(n * 10_000 + $0, by: device, text: pad)) }
            if device != "d" {
                records.insert(#"{"id": "F\#(n)000000-0000-4000-8000-000000000001", "type": "Note", "fields": {"x": 1, "x": 2}}"#, at: 2_990)
            }
            try sandbox.write("\(device).json", Wire.snapshotText(device, generation: 1, records: records))
        }

        // When desk merges
        let report = try sandbox.device("desk").merge()

        // Then the three are not merged, each for its duplicate key, the fourth is, and the
        // pass started twice: once to find them, once without them
        for name in ["a.json", "b.json", "c.json"] {
            #expect(report.source(name)?.status == .skipped && report.source(name)?.reason?.contains("duplicate key") == true,
                "\(String(describing: report.source(name)))")
        }
        #expect(report.source("d.json")?.status == .merged)
        #expect(report.timings.passes == 2, "\(report.timings)")
    }

    @Test("Each problem file gets an outcome naming its problem, every valid record merges, and the folder is untouched but for the own file")
    func problemFolder() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        try Self.fillProblemFolder(sandbox)
        let before = try folderListing(sandbox.shared)
        // When the device merges the folder
        let device = try sandbox.device(maxFileSize: Self.limit)
        let report = try device.merge()

        // Then every entry has the outcome its problem calls for, with a reason naming it
        func expectOutcome(_ name: String, _ status: SourceOutcome.Status, mentions words: [String]) {
            guard let outcome = report.source(name) else {
                Issue.record("no outcome for \(name)")
                return
            }
            #expect(outcome.status == status, "\(name): \(outcome)")
            let reason = outcome.reason ?? ""
            for word in words {
                #expect(reason.localizedCaseInsensitiveContains(word), "\(name): reason \"\(reason)\" does not mention \(word)")
            }
        }
        expectOutcome("phone.json", .rejected, mentions: ["phone", "laptop"])
        expectOutcome("tv.json", .skipped, mentions: ["not valid JSON", "end of input"])
        expectOutcome("watch.json", .skipped, mentions: ["UTF-8"])
        expectOutcome("future.json", .skipped, mentions: ["format 3"])
        expectOutcome("dup.json", .skipped, mentions: ["duplicate key", "generation"])
        expectOutcome("x.json", .ignored, mentions: ["symbolic link"])
        expectOutcome("f.json", .ignored, mentions: ["FIFO"])
        expectOutcome("d.json", .ignored, mentions: ["directory"])
        expectOutcome("big.json", .rejected, mentions: ["over the limit", "\(Self.limit)"])
        let laptop = try #require(report.source("laptop.json"))
        #expect(laptop.status == .merged && laptop.role == "own" && laptop.generation == 3 && laptop.records == 4)
        #expect(laptop.rejectedRecords.count == 2)
        #expect(laptop.rejectedRecords.contains { $0.contains("not-a-uuid") })
        #expect(laptop.rejectedRecords.contains { $0.contains("0000AAAA-0000-4000-8000-000000000099") && $0.contains("type") })
        let copy = try #require(report.source("laptop (1).json"))
        #expect(copy.status == .merged && copy.role == "copy" && copy.rejectedRecords.isEmpty)
        #expect(report.ignoredNames.sorted() == [".hidden.json", "notes.txt"])
        #expect(report.hasRejections)

        // And exactly the valid records merged: none from the link, the misnamed or the skipped files
        #expect(try device.records(includeDeleted: true).map(\.id) == [1, 2, 3].map(Wire.id))
        #expect(report.added == 3)

        // And the folder holds exactly what it held, plus this device's own file
        let after = try folderListing(sandbox.shared)
        #expect(Set(after.keys) == Set(before.keys).union(["desk.json"]))
        for (name, entry) in before {
            #expect(after[name] == entry, "\(name) changed: was \(entry), now \(after[name].map(String.init(describing:)) ?? "gone")")
        }
        let published = try readPublished(sandbox)
        #expect(published.reading.problems.isEmpty && published.reading.generation == 1)
        #expect(published.records == (try heldRecords(device)))
    }

    @Test("A second merge of the same problem folder reports the standing problems as unchanged, without publishing")
    func problemsStand() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        try Self.fillProblemFolder(sandbox)
        let device = try sandbox.device(maxFileSize: Self.limit)
        _ = try device.merge()
        let second = try device.merge()
        #expect(second.publishedGeneration == nil)
        #expect(second.hasRejections)
        #expect(second.source("laptop.json")?.status == .unchanged)
        #expect(second.source("laptop.json")?.reason?.contains("rejected") == true)
        #expect(second.source("desk.json")?.status == .unchanged)
        #expect(second.source("x.json")?.status == .ignored)
        #expect(second.added == 0 && second.changed == 0)
    }

    @Test("A record nested deeper than the parsers go is rejected alone: its file's other records merge, first and later")
    func deepRecord() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        // Given a peer's file whose second record's fields nest 600 arrays deep (valid JSON: the
        // contract sets no depth), between two plain records
        let deep = String(repeating: "[", count: 600) + "1" + String(repeating: "]", count: 600)
        let deepRecord = #"{"id": "\#(Wire.id(2))", "type": "Note", "versionVector": {"phone": 1}, "fields": {"x": \#(deep)}}"#
        func file(generation: Int64, note: String) -> String {
            Wire.snapshotText(
                "phone", generation: generation,
                records: [
                    Wire.text(Wire.version(1, by: "phone", vector: ["phone": generation], fields: #"{"note": "\#(note)"}"#)),
                    deepRecord, Wire.text(Wire.version(3, by: "phone")),
                ])
        }
        try sandbox.write("phone.json", file(generation: 1, note: "first"))
        let device = try sandbox.device()

        // When the device merges it
        let first = try device.merge()

        // Then the plain records merge, and the deep one is rejected by itself, with its id and why
        let outcome = try #require(first.source("phone.json"))
        #expect(outcome.status == .merged && outcome.records == 3)
        #expect(outcome.rejectedRecords.count == 1)
        #expect(outcome.rejectedRecords.first?.contains(Wire.id(2).description) == true)
        #expect(outcome.rejectedRecords.first?.contains("nested deeper than 512 levels") == true)
        #expect(try device.records(includeDeleted: true).map(\.id) == [Wire.id(1), Wire.id(3)])

        // And when the peer edits a plain record, the edit merges and the deep record stays rejected
        try sandbox.write("phone.json", file(generation: 2, note: "second"))
        let second = try device.merge()
        #expect(second.changed == 1)
        #expect(second.source("phone.json")?.rejectedRecords.count == 1)
        #expect(try device.records(includeDeleted: true).map(\.version.fields["note"]) == [.string("second"), nil])
    }

    @Test("What was merged from a file stays when the file later becomes truncated or invalid")
    func mergedStays() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let versions = [Wire.version(1, by: "phone", fields: #"{"v": 1}"#), Wire.version(2, by: "phone")]
        let whole = Wire.snapshot("phone", generation: 1, versions: versions)
        try sandbox.write("phone.json", whole)
        let device = try sandbox.device()
        #expect(try device.merge().added == 2)
        let held = try heldRecords(device)

        for broken in [
            Array(whole.prefix(whole.count - 10)),
            Array(Wire.snapshotText("phone", generation: 2, records: []).utf8) + [0xFF],
            Array(#"{"format": 1, "device": "phone", "generation": 3, "records": {}}"#.utf8),
            Array(Wire.snapshotText("laptop", generation: 4, records: []).utf8),
        ] {
            // When the file is replaced by a broken one
            try sandbox.write("phone.json", broken)
            let report = try device.merge()
            // Then it is not merged, and nothing merged from it before is lost, here or in the own file
            #expect(report.source("phone.json")?.status != .merged)
            #expect(report.source("phone.json")?.reason != nil)
            #expect(report.publishedGeneration == nil)
            #expect(try heldRecords(device) == held)
            #expect(try readPublished(sandbox).records == held)
        }
        // And an empty but valid file deletes nothing either
        try sandbox.write("phone.json", Wire.snapshot("phone", generation: 5, versions: []))
        #expect(try device.merge().source("phone.json")?.status == .merged)
        #expect(try heldRecords(device) == held)
    }

    @Test("A peer file that disappears is marked absent in status, and its records stay")
    func peerVanishes() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        try sandbox.write("phone.json", Wire.snapshot("phone", generation: 1, versions: [Wire.version(1, by: "phone")]))
        let device = try sandbox.device()
        _ = try device.merge()
        try FileManager.default.removeItem(atPath: sandbox.sharedPath("phone.json"))
        let report = try device.merge()
        #expect(report.source("phone.json") == nil && report.publishedGeneration == nil && report.deleted == 0)
        #expect(try device.records().map(\.id) == [Wire.id(1)])
        let phone = try #require(try device.status().sources.first { $0.name == "phone.json" })
        #expect(!phone.present && phone.generation == 1)
    }

    @Test("A peer file with a byte-order mark and CRLF whitespace merges")
    func byteOrderMark() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let text = Wire.snapshotText("phone", generation: 1, records: [Wire.text(Wire.version(1, by: "phone"))])
        try sandbox.write("phone.json", [0xEF, 0xBB, 0xBF] + Array(text.replacingOccurrences(of: ", ", with: ",\r\n  ").utf8))
        let report = try sandbox.device().merge()
        #expect(report.source("phone.json")?.status == .merged && report.added == 1 && !report.hasRejections)
    }

    @Test(
        "A large file that cannot be JSON from its first byte on (zeros, a binary) is skipped from its first bytes, with the message a whole read gives; one that starts as JSON is read whole"
    )
    func cannotBeJSONFromItsFirstByte() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        try sandbox.write("phone.json", Wire.snapshot("phone", generation: 1, versions: [Wire.version(1, by: "phone")]))
        // 8 MiB of zeros, as a crash or a tool that makes room first leaves them; a binary after a BOM and blank lines
        try sandbox.write("tv.json", [UInt8](repeating: 0, count: 8 << 20))
        try sandbox.write("watch.json", [0xEF, 0xBB, 0xBF, 0x0D, 0x0A, 0x20, 0x7F, 0x45, 0x4C, 0x46] + [UInt8](repeating: 1, count: 1 << 20))
        // 1 MiB of a truncated array: it may be JSON until its end, so it is read whole
        try sandbox.write("pad.json", Array(("[" + String(repeating: "1,", count: 1 << 19)).utf8))
        let report = try sandbox.device().merge()
        #expect(report.source("phone.json")?.status == .merged)
        let tv = try #require(report.source("tv.json"))
        #expect(tv.status == .skipped && tv.reason?.contains("at byte 0: unexpected character U+0000") == true, "\(tv)")
        let watch = try #require(report.source("watch.json"))
        #expect(watch.status == .skipped && watch.reason?.contains("at byte 6: unexpected character U+007F") == true, "\(watch)")
        #expect(report.source("pad.json")?.status == .skipped)
        // Then the two are read no further than their opening bytes, the array whole
        let folder = try SharedFolder(path: sandbox.shared)
        #expect(try folder.readSnapshotBytes("tv.json", limit: 1 << 30, forMerging: true).bytes.count == 4096)
        #expect(try folder.readSnapshotBytes("watch.json", limit: 1 << 30, forMerging: true).bytes.count == 4096)
        #expect(
            try folder.readSnapshotBytes("pad.json", limit: 1 << 30, forMerging: true).bytes.count == 1 + 2 * (1 << 19))
        // (and whole when the bytes are kept, not merged: a copy of a file replaced)
        #expect(try folder.readSnapshotBytes("tv.json", limit: 1 << 30).bytes.count == 8 << 20)
        // A file gone since the listing is said to be gone, not unreadable (no permissions advice)
        #expect(throws: SnapshotFileReadError.vanished) { try folder.readSnapshotBytes("gone.json", limit: 1 << 30) }
        #expect(!SnapshotFileReadError.vanished.description.contains("permissions"))
    }

    @Test("A *.json file whose name is not valid UTF-8 (a copy made under another encoding may hold versions no other file has) is skipped with what to do, at every merge; the rest merges")
    func nameNotUTF8() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let snapshot = Wire.snapshot("phone", generation: 1, versions: [Wire.version(1, by: "phone")])
        try sandbox.write("phone.json", snapshot)
        // "ph\xFFone.json" and a copy name with a bad byte, holding valid snapshots
        for bytes in [Array("ph".utf8) + [0xFF] + Array("one.json".utf8), Array("phone (copy ".utf8) + [0xC3, 0x28] + Array(").json".utf8)] {
            let path = Array(sandbox.shared.utf8) + [UInt8(ascii: "/")] + bytes + [0]
            let descriptor = path.withUnsafeBufferPointer { $0.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_WRONLY | O_CREAT, 0o644) } }
            try #require(descriptor >= 0)
            #expect(snapshot.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) } == snapshot.count)
            close(descriptor)
        }
        // and a directory so named, which is no file to read
        let directory = Array(sandbox.shared.utf8) + [UInt8(ascii: "/")] + Array("tv (".utf8) + [0xFE] + Array(").json".utf8) + [0]
        try #require(directory.withUnsafeBufferPointer { $0.withMemoryRebound(to: CChar.self) { mkdir($0.baseAddress!, 0o755) } } == 0)
        let device = try sandbox.device()
        for pass in 0..<2 {
            let report = try device.merge()
            #expect(report.hasRejections, "\(report.sources)")
            #expect(report.source("phone.json")?.status == (pass == 0 ? .merged : .unchanged))
            #expect(report.source(#"tv (\xFE).json"#)?.status == .ignored, "\(report.sources)")
            let skipped = report.sources.filter { $0.name.contains(#"\x"#) && $0.status != .ignored }
            #expect(skipped.count == 2 && skipped.allSatisfy { $0.status == .skipped && $0.problemKind == "name_not_utf8" })
            #expect(skipped.allSatisfy { $0.reason?.contains("rename it") == true }, "\(skipped)")
            #expect(report.ignoredNames.isEmpty, "\(report.ignoredNames)")
        }
    }
}

@Suite("an entry squatting this device's temporary name")
struct TemporaryNameSquatTests {
    @Test("a directory under this device's temporary name fails the publication saying which entry to remove; removed, the next merge publishes")
    func directoryOnTemporaryName() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        try sandbox.write("phone.json", Wire.snapshot("phone", generation: 1, versions: [Wire.version(1, by: "phone")]))
        // A directory (not empty, so no unlink removes it) where this process writes desk.json's temporary
        let squat = sandbox.shared + "/.desk.json.\(getpid()).whole.tmp"
        try FileManager.default.createDirectory(atPath: squat, withIntermediateDirectories: true)
        try Data("x".utf8).write(to: URL(fileURLWithPath: squat + "/x"))
        let device = try sandbox.device()
        do {
            _ = try device.merge()
            Issue.record("published through a directory")
        } catch let error as EngineError {
            guard case .publishFailed(_, _, let advice) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(advice?.contains(".desk.json.\(getpid()).whole.tmp") == true && advice?.contains("remove it") == true, "\(error)")
        }
        try FileManager.default.removeItem(atPath: squat)
        #expect(try device.merge().publishedGeneration == 1)
    }
}
