import Foundation
import SnapshotFormat
import SyncEngine
import TestSupport
import Testing

/// The names a device publishes under hold what others put there too: a newer release's file, a
/// device whose ID is this one's and a part (`zz.1`), a damaged generation, a file whose records
/// this device could not all take. Publishing never loses any of it.
@Suite("What a publication leaves alone under this device's names")
struct OwnNamesTests {
    /// A format 3 file, as a newer release of this device would write it.
    static let newerFile = #"{"format": 3, "device": "desk", "generation": 9, "records": [], "future": "kept as it is"}"#

    /// `device`'s snapshot at `generation` holding one record (`Wire.id(n)`, under prefix 0000) of
    /// 10,000 `letter`s.
    static func largeRecordFile(_ device: String, _ n: Int, _ letter: String, generation: Int64) -> [UInt8] {
        let text = String(repeating: letter, count: 10_000)
        return Wire.snapshot(
            device, generation: generation,
            versions: [Wire.version(n, by: device, vector: [device: generation], at: generation, fields: #"{"s": "\#(text)"}"#)])
    }

    /// Every record id that `device`'s files in the folder hold, read as a fresh peer would.
    static func idsReadByAPeer(_ sandbox: Sandbox, maxFileSize: Int64 = SyncSettings.defaultMaxFileSize) throws -> Set<RecordID> {
        let reader = try sandbox.device("reader", state: sandbox.state("reader"), maxFileSize: maxFileSize)
        _ = try reader.merge()
        return Set(try reader.records().map(\.id))
    }

    @Test("a file in a newer format under this device's whole name is never overwritten: the snapshot goes out as parts", arguments: [true, false])
    func newerFormatWholeName(afterFirstMerge: Bool) throws {
        // Given phone's 10 records, and desk.json in format 3 (before desk's first merge, or after it)
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        try sandbox.write("phone.json", PartsTests.peerFile("phone", generation: 1, 0..<10))
        let desk = try sandbox.device("desk")
        if afterFirstMerge { _ = try desk.merge() }
        try sandbox.write("desk.json", Self.newerFile)

        // When desk merges (and merges again)
        let report = try desk.merge()
        _ = try desk.merge()

        // Then desk.json is the newer release's file, byte for byte, and reported as left alone
        #expect(try sandbox.read("desk.json") == Array(Self.newerFile.utf8))
        #expect(report.warnings.contains { $0.contains("desk.json is not replaced") && $0.contains("newer format") }, "\(report.warnings)")
        // And desk's records are published in its parts, which a peer reads in full
        #expect(report.publishedFiles.count == 16 && report.publishedFiles.allSatisfy { $0.hasPrefix("desk.") && $0 != "desk.json" })
        #expect(try Self.idsReadByAPeer(sandbox) == Set((0..<10).map(PartsTests.id)))
    }

    @Test("device zz's part 1 and device zz.1's snapshot share a name: each keeps clear of the other's file")
    func partNameOfAnotherDevice() throws {
        // Given device zz.1's snapshot, zz.1.json, and phone's 400 records (parts of one digit for zz)
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let other = Wire.snapshot("zz.1", generation: 1, versions: [Wire.version(7, by: "zz.1")])
        try sandbox.write("zz.1.json", other)
        try sandbox.write("phone.json", PartsTests.peerFile("phone", generation: 1, 0..<400))
        let zz = try sandbox.device("zz", partPolicy: PartsTests.policy)

        // When zz merges, twice
        let first = try zz.merge()
        let second = try zz.merge()

        // Then zz.1.json is still zz.1's file, and zz holds its record
        #expect(try sandbox.read("zz.1.json") == other)
        #expect(try zz.records().contains { $0.id == Wire.id(7) })
        #expect(first.warnings.contains { $0.contains("zz.1.json is not replaced") && $0.contains("device zz.1's own file") }, "\(first.warnings)")
        // And zz's records under 1 are in the 16 parts under it, so that a peer reads all of zz's
        #expect(first.publishedFiles.contains("zz.10.json") && first.publishedFiles.contains("zz.1F.json"))
        #expect(!first.publishedFiles.contains("zz.1.json") && !second.publishedFiles.contains("zz.1.json"))
        let ids = try Self.idsReadByAPeer(sandbox)
        #expect(ids == Set((0..<400).map(PartsTests.id)).union([Wire.id(7)]))

        // When device zz.1 itself merges the folder, where zz's parts now are
        let zz1 = try sandbox.device("zz.1", state: sandbox.state("zz.1"))
        _ = try zz1.merge()
        // Then zz's files are untouched by it, and it holds every record too
        #expect(Set(try zz1.records().map(\.id)) == ids)
        #expect(try SnapshotReader.read(bytes: sandbox.read("zz.10.json"), fileName: "zz.10.json").device.rawValue == "zz")
    }

    /// The ids of the records in `device`'s own files in the folder.
    static func idsPublished(by device: String, in sandbox: Sandbox) throws -> Set<RecordID> {
        var ids: Set<RecordID> = []
        for name in try FileManager.default.contentsOfDirectory(atPath: sandbox.shared)
        where name.hasPrefix(device + ".") && name.hasSuffix(".json") {
            let file = try SnapshotReader.read(bytes: sandbox.read(name), fileName: name)
            if file.device.rawValue == device { ids.formUnion(file.versions.map(\.id)) }
        }
        return ids
    }

    @Test(
        "a part of 4 digits whose name holds another device's file: its records go out in the part of 3 digits above it, kept whole",
        arguments: [false, true])
    func fourDigitPartNameTaken(afterItsFirstPublication: Bool) throws {
        // Given phone's 40 records, all under prefix 0000, and zz splitting parts over 1 KiB
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let text = #"{"text": "a note long enough to make parts split"}"#
        try sandbox.write("phone.json", Wire.snapshot("phone", generation: 1, versions: (0..<40).map { Wire.version($0, by: "phone", fields: text) }))
        let zz = try sandbox.device("zz", partPolicy: PartPolicy(splitBytes: 1 << 10, joinBytes: 256))
        if afterItsFirstPublication {
            // (zz publishes zz.0000.json as its own part first; a sync tool then puts device
            // zz.0000's file there, and phone edits one of the records)
            _ = try zz.merge()
            #expect(try SnapshotReader.read(bytes: sandbox.read("zz.0000.json"), fileName: "zz.0000.json").device.rawValue == "zz")
        }
        // And device zz.0000's whole snapshot at zz.0000.json
        let other = Wire.snapshot("zz.0000", generation: 1, versions: [Wire.version(900, by: "zz.0000")])
        try sandbox.write("zz.0000.json", other)
        if afterItsFirstPublication {
            try sandbox.write("phone.json", Wire.snapshot("phone", generation: 2, versions: (0..<40).map {
                Wire.version($0, by: "phone", vector: ["phone": $0 == 3 ? 2 : 1], at: $0 == 3 ? 1_000 : 0, fields: text)
            }))
        }

        // When zz merges
        let report = try zz.merge()

        // Then zz.0000.json is still zz.0000's, and every record is in zz's own files: those
        // under 0000 in zz.000.json, kept whole, with the warning saying so
        #expect(try sandbox.read("zz.0000.json") == other)
        #expect(report.publishedFiles.contains("zz.000.json"), "\(report.publishedFiles)")
        #expect(report.warnings.contains { $0.contains("zz.0000.json is not replaced") && $0.contains("published in zz.000.json") }, "\(report.warnings)")
        let all = Set((0..<40).map(Wire.id)).union([Wire.id(900)])
        #expect(try Self.idsPublished(by: "zz", in: sandbox) == all)
        #expect(try Self.idsReadByAPeer(sandbox) == all)
        // And the parts under 000 that zz wrote before are gone, and nothing is left to publish
        #expect(!(try FileManager.default.contentsOfDirectory(atPath: sandbox.shared)).contains("zz.0001.json"))
        #expect(try zz.merge().publishedFiles.isEmpty)
        // And an edit under 0000 goes out in zz.000.json
        _ = try zz.put(id: Wire.id(5), type: "Note", fields: Wire.object(#"{"text": "edited"}"#), schemaVersion: nil)
        let part = try SnapshotReader.read(bytes: sandbox.read("zz.000.json"), fileName: "zz.000.json")
        #expect(part.versions.contains { $0.id == Wire.id(5) && $0.fields["text"] == .string("edited") })
        #expect(try sandbox.read("zz.0000.json") == other)
    }

    @Test("device zz.1's whole name holding zz's part 1: zz.1 publishes in parts instead of over it")
    func wholeNameOfAnotherDevicesPart() throws {
        // Given zz's part 1 at zz.1.json (zz publishes parts of one digit)
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        try sandbox.write("phone.json", PartsTests.peerFile("phone", generation: 1, 0..<400))
        let zz = try sandbox.device("zz", partPolicy: PartsTests.policy)
        _ = try zz.merge()
        let part = try sandbox.read("zz.1.json")
        #expect(try SnapshotReader.read(bytes: part, fileName: "zz.1.json").device.rawValue == "zz")

        // When device zz.1 (records of its own) merges
        let zz1 = try sandbox.device("zz.1", state: sandbox.state("zz.1"))
        _ = try zz1.put(id: Wire.id(7), type: "Note", fields: Wire.object(#"{"text":"mine"}"#), schemaVersion: nil)

        // Then zz's part is untouched, and zz.1's record goes out in zz.1's parts, where zz reads it
        #expect(try sandbox.read("zz.1.json") == part)
        _ = try zz.merge()
        #expect(try zz.records().contains { $0.id == Wire.id(7) })
    }

    @Test("a file under this device's name at the largest generation: the device publishes that generation again, never one beyond the format's integers")
    func generationAtTheLimit() throws {
        // Given desk.json written by someone else with generation 2^53 - 1, and phone's records
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let largest = VersionVector.maximumCount
        try sandbox.write("desk.json", Wire.snapshot("desk", generation: largest, versions: [Wire.version(3, by: "desk")]))
        try sandbox.write("phone.json", PartsTests.peerFile("phone", generation: 1, 0..<10))
        let desk = try sandbox.device("desk")

        // When desk merges, and publishes again after an edit
        let first = try desk.merge()
        _ = try desk.put(id: Wire.id(8), type: "Note", fields: Wire.object(#"{"text":"later"}"#), schemaVersion: nil)

        // Then its file carries the largest generation, is valid, and a peer reads all of it
        #expect(first.publishedGeneration == largest)
        #expect(first.warnings.contains { $0.contains("the largest the format allows") }, "\(first.warnings)")
        let reading = try SnapshotReader.read(bytes: sandbox.read("desk.json"), fileName: "desk.json")
        #expect(reading.generation == largest)
        #expect(try Self.idsReadByAPeer(sandbox) == Set((0..<10).map(PartsTests.id)).union([Wire.id(3), Wire.id(8)]))
    }

    @Test("a copy under this device's name that it did not write and that is not signed with its key does not push its generation: a made-up 2^53−1 cannot pin it")
    func impostorGenerationDoesNotCount() throws {
        // Given desk in step with phone (desk.json generation 1), then another writer's copy under
        // desk's name claiming generation 2^53 - 1, unsigned
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        try sandbox.write("phone.json", PartsTests.peerFile("phone", generation: 1, 0..<10))
        let desk = try sandbox.device("desk")
        #expect(try desk.merge().publishedGeneration == 1)
        let copy = "desk.sync-conflict-20261129-000000-ABCDEFG.json"
        try sandbox.write(copy, Wire.snapshot("desk", generation: VersionVector.maximumCount, versions: [Wire.version(3, by: "desk")]))

        // When desk merges it, and publishes after an edit
        let merged = try desk.merge()
        let warning = merged.sources.first { $0.name == copy }?.warning ?? ""
        _ = try desk.put(id: Wire.id(8), type: "Note", fields: Wire.object(#"{"text":"later"}"#), schemaVersion: nil)

        // Then the copy's record merged, it is reported as another device's, and desk goes on at
        // generations 2 (the merge) and 3 (the edit), then 4 once the copy is gone
        #expect(try desk.records().contains { $0.id == Wire.id(3) })
        #expect(warning.contains("ANOTHER DEVICE IS USING THIS DEVICE'S ID") && warning.contains("does not count"), "\(warning)")
        #expect(merged.publishedGeneration == 2)
        #expect(try SnapshotReader.read(bytes: sandbox.read("desk.json"), fileName: "desk.json").generation == 3)
        try FileManager.default.removeItem(atPath: sandbox.sharedPath(copy))
        _ = try desk.put(id: Wire.id(9), type: "Note", fields: Wire.object(#"{"text":"later still"}"#), schemaVersion: nil)
        #expect(try SnapshotReader.read(bytes: sandbox.read("desk.json"), fileName: "desk.json").generation == 4)
    }

    @Test("a file under this device's name holding a record it rejected is copied to the state directory before it is replaced", arguments: [SyncSettings.defaultMaxFileSize, Int64.max])
    func rejectedRecordKeptInACopy(maxFileSize: Int64) throws {
        // Given desk.json (not written by this state directory) with a valid record and one nested
        // 600 levels deep, which a reader rejects alone
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let deep = String(repeating: "[", count: 600) + String(repeating: "]", count: 600)
        let nested = #"{"id": "\#(Wire.id(2))", "type": "Note", "lastModified": "2026-11-20T10:00:00.000Z", "modifiedBy": "desk", "versionVector": {"desk": 1}, "fields": {"deep": \#(deep)}}"#
        let original = Wire.snapshotText("desk", generation: 4, records: [Wire.text(Wire.version(1, by: "desk")), nested])
        try sandbox.write("desk.json", original)
        let desk = try sandbox.device("desk", maxFileSize: maxFileSize)

        // When desk merges and rewrites desk.json
        let report = try desk.merge()
        #expect(report.publishedFiles == ["desk.json"])

        // Then the file it replaced is kept, byte for byte, in the state directory, and the report says where
        let directory = sandbox.state() + "/replaced"
        let copies = try FileManager.default.contentsOfDirectory(atPath: directory)
        #expect(copies.count == 1 && copies[0].hasSuffix("-desk.json"), "\(copies)")
        #expect(FileManager.default.contents(atPath: directory + "/" + copies[0]) == Data(original.utf8))
        #expect(report.warnings.contains { $0.contains("a copy is kept at \(directory)/") }, "\(report.warnings)")
        // And a file it merged whole is replaced without a copy
        _ = try desk.put(id: Wire.id(9), type: "Note", fields: Wire.object(#"{"text":"more"}"#), schemaVersion: nil)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).count == 1)
        // And the same file written again is kept once
        try sandbox.write("desk.json", original)
        let again = try desk.merge()
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).count == 1)
        #expect(again.warnings.contains { $0.contains("a copy of the same content is kept at \(directory)/\(copies[0])") }, "\(again.warnings)")
    }

    @Test("the copies of replaced files take at most four times the largest file read, the newest kept")
    func replacedCopiesBounded() throws {
        // Given desk reading files of up to 4,000 bytes, and another writer putting a different
        // desk.json of about 3,500 bytes, with a record desk rejects, before each of 6 merges
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let desk = try sandbox.device("desk", maxFileSize: 4_000)
        let directory = sandbox.state() + "/replaced"
        var last: [UInt8] = []
        for round in 0..<6 {
            let bad = #"{"id": "\#(Wire.id(100 + round))", "type": "Note", "lastModified": "not a time", "modifiedBy": "desk", "versionVector": {"desk": 1}, "fields": {}}"#
            let text = Wire.snapshotText(
                "desk", generation: Int64(10 + round),
                records: (0..<18).map { Wire.text(Wire.version($0, by: "desk")) } + [bad])
            last = Array(text.utf8)
            try sandbox.write("desk.json", last)
            sandbox.clock.advance(by: 10)
            _ = try desk.merge()
        }
        // Then the copies kept are the newest, at most 16,000 bytes together
        let copies = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
        let sizes = try copies.map { try FileManager.default.attributesOfItem(atPath: directory + "/" + $0)[.size] as! Int }
        #expect(copies.count < 6 && sizes.reduce(0, +) <= 16_000, "\(copies) \(sizes)")
        #expect(FileManager.default.contents(atPath: directory + "/" + copies.last!) == Data(last))
    }

    @Test("one publication replacing many files with what this device did not merge keeps copies within the budget and says which it could not keep")
    func manyCopiesInOnePublication() throws {
        // Given desk publishing phone's 200 records in 16 parts of one digit, then reading files
        // of up to 8,000 bytes (copies: 32,000 bytes at most)
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        try sandbox.write("phone.json", PartsTests.peerFile("phone", generation: 1, 0..<200))
        let first = try sandbox.device("desk", partPolicy: PartsTests.policy).merge()
        let parts = first.publishedFiles.sorted()
        #expect(parts.count == 16, "\(parts)")
        let desk = try sandbox.device("desk", maxFileSize: 8_000, partPolicy: PartsTests.policy)

        // When another writer puts a file of about 7,000 bytes with a record desk rejects at each
        // of its part names, and desk merges once
        let pad = String(repeating: "p", count: 6_500)
        for name in parts {
            let digit = name.split(separator: ".")[1]
            let bad = #"{"id": "\#(digit)0000000-0000-4000-8000-000000000001", "type": "Note", "lastModified": "not a time", "modifiedBy": "desk", "versionVector": {"desk": 1}, "fields": {"pad": "\#(pad)"}}"#
            try sandbox.write(name, #"{"format": 2, "device": "desk", "part": "\#(digit)", "generation": 50, "records": [\#(bad)]}"#)
        }
        let report = try desk.merge()

        // Then desk replaces them all, keeping copies of the first four (28,000 bytes), and says
        // of the other twelve that no copy is kept
        let directory = sandbox.state() + "/replaced"
        let copies = try FileManager.default.contentsOfDirectory(atPath: directory)
        let sizes = try copies.map { try FileManager.default.attributesOfItem(atPath: directory + "/" + $0)[.size] as! Int }
        #expect(copies.count == 4 && sizes.reduce(0, +) <= 32_000, "\(copies) \(sizes)")
        #expect(report.warnings.filter { $0.contains("a copy is kept at") }.count == 4, "\(report.warnings)")
        #expect(report.warnings.filter { $0.contains("no copy is kept: the copies") }.count == 12, "\(report.warnings)")
        for name in parts { #expect(try sandbox.read(name).count < 6_500, "\(name)") }
    }

    @Test(
        "a large file under this device's name that cannot be JSON from its first byte on (saved as UTF-16, zeroed by a crash) is refused from its first bytes, and copied whole before it is replaced"
    )
    func unreadableOwnFileCopiedWhole() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        // Given desk.json as an editor saves it in UTF-16 (FF FE, then two bytes a character), 20 KB
        let text = Wire.snapshotText("desk", generation: 4, records: (1...80).map { Wire.text(Wire.version($0, by: "desk")) })
        let utf16: [UInt8] = [0xFF, 0xFE] + text.utf16.flatMap { unit -> [UInt8] in [UInt8(unit & 0xFF), UInt8(unit >> 8)] }
        #expect(utf16.count > 3 * 4096)
        try sandbox.write("desk.json", utf16)
        let desk = try sandbox.device("desk")
        // When desk merges
        let report = try desk.merge()
        // Then the file is refused as not JSON, replaced, and its copy holds every byte
        #expect(report.source("desk.json")?.status == .skipped, "\(report.sources)")
        let directory = sandbox.state() + "/replaced"
        let copies = try FileManager.default.contentsOfDirectory(atPath: directory)
        #expect(copies.count == 1, "\(copies)")
        #expect(FileManager.default.contents(atPath: directory + "/" + (copies.first ?? "")) == Data(utf16))
    }

    @Test("a directory, or a file over the largest file read, under this device's name is left alone, not read nor copied: the snapshot goes out as parts")
    func directoryOrTooLargeUnderOwnName() throws {
        for blocker in ["directory", "too large"] {
            // Given phone's 10 records, and desk.json a directory, or a file over desk's limit
            let sandbox = try Sandbox()
            defer { sandbox.remove() }
            try sandbox.write("phone.json", PartsTests.peerFile("phone", generation: 1, 0..<10))
            let big = Wire.snapshot("desk", generation: 3, versions: (20..<40).map { Wire.version($0, by: "desk") })
            if blocker == "directory" {
                try FileManager.default.createDirectory(atPath: sandbox.shared + "/desk.json", withIntermediateDirectories: false)
            } else {
                try sandbox.write("desk.json", big)
            }
            let limit = Int64(big.count - 1)
            let desk = try sandbox.device("desk", maxFileSize: limit)

            // When desk merges, twice
            let report = try desk.merge()
            let again = try desk.merge()

            // Then the merge succeeds, desk.json is as it was, and no copy of it was made
            #expect(report.warnings.contains { $0.contains("desk.json is not replaced") }, "\(blocker): \(report.warnings)")
            #expect(report.publishedFiles.count == 16, "\(blocker): \(report.publishedFiles)")
            #expect(again.publishedFiles.isEmpty, "\(blocker): \(again.publishedFiles)")
            if blocker == "directory" {
                var isDirectory: ObjCBool = false
                #expect(FileManager.default.fileExists(atPath: sandbox.shared + "/desk.json", isDirectory: &isDirectory) && isDirectory.boolValue)
            } else {
                #expect(try sandbox.read("desk.json") == big)
            }
            #expect(!FileManager.default.fileExists(atPath: sandbox.state() + "/replaced"), "\(blocker)")
            // (a peer with a larger limit reads desk.json's records too)
            #expect(try Self.idsReadByAPeer(sandbox).isSuperset(of: (0..<10).map(PartsTests.id)), "\(blocker)")
        }
    }

    @Test("a file refused as too large is read once the limit allows it, unchanged as it is")
    func tooLargeReadOnceAllowed() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let file = PartsTests.peerFile("phone", generation: 1, 0..<10)
        try sandbox.write("phone.json", file)
        let small = try sandbox.device("desk", maxFileSize: Int64(file.count - 1))
        let refused = try small.merge()
        #expect(refused.sources.first { $0.name == "phone.json" }?.status == .rejected)
        let larger = try sandbox.device("desk", maxFileSize: Int64(file.count))
        let merged = try larger.merge()
        #expect(merged.sources.first { $0.name == "phone.json" }?.status == .merged, "\(merged.sources)")
        #expect(try larger.records().count == 10)
    }

    @Test("a part of 4 digits larger than the largest file read is published with a warning, and taken as this device's own when read again, not as another writer's file")
    func ownPartOverTheLimit() throws {
        // Given two peers each with one record of 10,000 characters, both under prefix 0000, and
        // desk reading files of up to 15,000 bytes: each peer's file is under it, desk's part is not
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        try sandbox.write("p1.json", Self.largeRecordFile("p1", 0, "a", generation: 1))
        try sandbox.write("p2.json", Self.largeRecordFile("p2", 1, "b", generation: 1))
        let limit: Int64 = 15_000
        let desk = try sandbox.device("desk", maxFileSize: limit, partPolicy: PartsTests.policy)

        // When desk merges: its part 0000 holds both records, over the limit, and is said to be
        let first = try desk.merge()
        #expect(first.sources.allSatisfy { $0.status == .merged }, "\(first.sources)")
        #expect(first.publishedFiles.contains("desk.0000.json"), "\(first.publishedFiles)")
        #expect(first.warnings.contains { $0.contains("desk.0000.json is") && $0.contains("--max-file-size 15000") }, "\(first.warnings)")
        let written = try sandbox.read("desk.0000.json")
        #expect(written.count > limit)

        // Then reading every file again takes desk.0000.json as desk's own (read up to the size
        // desk wrote): not refused, not replaced by a part of 3 digits, nothing published
        let reread = try desk.merge(rereadAll: true)
        #expect(!reread.sources.contains { $0.status == .rejected }, "\(reread.sources)")
        #expect(!reread.warnings.contains { $0.contains("not replaced") }, "\(reread.warnings)")
        #expect(reread.publishedFiles.isEmpty, "\(reread.publishedFiles)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.sharedPath("desk.000.json")))
        #expect(try sandbox.read("desk.0000.json") == written)
        // (also as the same bytes at a new inode and times: a folder moved or restored)
        try FileManager.default.removeItem(atPath: sandbox.sharedPath("desk.0000.json"))
        try sandbox.write("desk.0000.json", written)
        for rereadAll in [false, true] {
            let moved = try desk.merge(rereadAll: rereadAll)
            #expect(!moved.sources.contains { $0.status == .rejected } && moved.publishedFiles.isEmpty, "\(moved.sources)")
            #expect(moved.source("desk.0000.json")?.warning == nil, "\(moved.sources)")
        }

        // And a peer's later edit of one of those records is published in that part, again
        try sandbox.write("p1.json", Self.largeRecordFile("p1", 0, "c", generation: 2))
        let edited = try desk.merge()
        #expect(edited.publishedFiles.contains("desk.0000.json"), "\(edited.publishedFiles)")
        #expect(String(decoding: try sandbox.read("desk.0000.json"), as: UTF8.self).contains("ccccc"))
        let again = try desk.merge(rereadAll: true)
        #expect(!again.sources.contains { $0.status == .rejected } && again.publishedFiles.isEmpty, "\(again.sources)")

        // And a file under desk's name over the limit that desk did not write is still refused
        try sandbox.write("desk.sync-conflict-20261129-000000-ABCDEFG.json", Array(repeating: UInt8(ascii: " "), count: Int(limit) + 1))
        let foreign = try desk.merge(rereadAll: true)
        #expect(foreign.sources.first { $0.name.hasPrefix("desk.sync-conflict") }?.status == .rejected, "\(foreign.sources)")

        // And another writer's file at that part's name, over the limit, with a record desk rejects,
        // is copied whole before desk replaces it
        let rejected = #"{"id": "\#(Wire.id(5))", "type": "Note", "lastModified": "not a time", "modifiedBy": "desk", "versionVector": {"desk": 1}, "fields": {}}"#
        let text = String(repeating: "d", count: 15_500)
        let other = Wire.snapshotText(
            "desk", generation: 40,
            records: [Wire.text(Wire.version(0, by: "desk", vector: ["desk": 9], fields: #"{"s": "\#(text)"}"#)), rejected])
        #expect(other.utf8.count > limit && other.utf8.count < written.count)
        try sandbox.write("desk.0000.json", other)
        let replaced = try desk.merge()
        #expect(replaced.warnings.contains { $0.contains("desk.0000.json is replaced") && $0.contains("a copy is kept at") }, "\(replaced.warnings)")
        let copies = try FileManager.default.contentsOfDirectory(atPath: sandbox.state() + "/replaced")
        #expect(copies.contains { $0.hasSuffix("-desk.0000.json") }, "\(copies)")
    }

    @Test("a part kept whole above a name another file holds is not built again at every pass")
    func keptWholeAboveATakenName() throws {
        // Given desk's part 0000 over the split size, its name then taken by a directory
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        for (n, device) in ["p1", "p2"].enumerated() {
            try sandbox.write("\(device).json", Self.largeRecordFile(device, n, "a", generation: 1))
        }
        let desk = try sandbox.device("desk", partPolicy: PartsTests.policy)
        _ = try desk.merge()
        try FileManager.default.removeItem(atPath: sandbox.sharedPath("desk.0000.json"))
        try FileManager.default.createDirectory(atPath: sandbox.sharedPath("desk.0000.json"), withIntermediateDirectories: false)

        // When desk merges: the records go out in desk.000.json, kept whole, with a warning
        let kept = try desk.merge()
        #expect(kept.publishedFiles == ["desk.000.json"], "\(kept.publishedFiles)")
        #expect(kept.warnings.contains { $0.contains("desk.0000.json is not replaced") }, "\(kept.warnings)")

        // Then the passes after it, with nothing changed, neither build it again nor warn again
        for _ in 0..<2 {
            let idle = try desk.merge()
            #expect(idle.publishedFiles.isEmpty && idle.warnings.isEmpty, "\(idle.publishedFiles) \(idle.warnings)")
        }
    }

    /// desk holding phone's 40 records in its whole desk.json (`whole`, written by a publication
    /// after its first), opened again with a largest file read of half that file's size (`limit`).
    static func wholeFileOverALoweredLimit(_ sandbox: Sandbox) throws -> (desk: SyncDevice, whole: [UInt8], limit: Int64) {
        try sandbox.write("phone.json", PartsTests.peerFile("phone", generation: 1, 0..<1))
        _ = try sandbox.device("desk").merge()
        try sandbox.write("phone.json", PartsTests.peerFile("phone", generation: 2, 0..<40))
        _ = try sandbox.device("desk").merge()
        let whole = try sandbox.read("desk.json")
        let limit = Int64(whole.count / 2)
        return (try sandbox.device("desk", maxFileSize: limit), whole, limit)
    }

    @Test("a largest file read below this device's own file: the file is still its own when read again, and is replaced at once by parts under the limit")
    func limitBelowOwnFile() throws {
        // Given desk publishing phone's 40 records in desk.json, then run with a limit below its size
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let (desk, _, limit) = try Self.wholeFileOverALoweredLimit(sandbox)

        // When it reads every file again
        let reread = try desk.merge(rereadAll: true)

        // Then desk.json is its own (not refused), and desk publishes parts each under the limit
        // in its place
        #expect(reread.source("desk.json")?.status != .rejected, "\(reread.sources)")
        #expect(reread.publishedFiles.count > 1 && !reread.warnings.contains { $0.contains("larger than the largest file read") }, "\(reread.publishedFiles) \(reread.warnings)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.sharedPath("desk.json")))
        for name in reread.publishedFiles { #expect(try sandbox.read(name).count <= limit, "\(name)") }
        // And a device reading with that limit reads all of it
        try FileManager.default.removeItem(atPath: sandbox.sharedPath("phone.json"))
        #expect(try Self.idsReadByAPeer(sandbox, maxFileSize: limit).count == 40)
    }

    @Test("a file this device wrote over the largest file read and then replaced, left in the folder (a pass that died before removing it, a restored folder): read again, merged, and removed, not refused at every pass")
    func replacedLargeOwnFileLeftBehind() throws {
        // Given desk's whole desk.json, replaced by parts under a limit below its size
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let (desk, whole, limit) = try Self.wholeFileOverALoweredLimit(sandbox)
        _ = try desk.merge(rereadAll: true)
        #expect(!FileManager.default.fileExists(atPath: sandbox.sharedPath("desk.json")))

        // When that file is in the folder again, as the pass that replaced it would have left it
        // had it died before removing it, and desk reads every file again
        try sandbox.write("desk.json", whole)
        let rescan = try desk.merge(rereadAll: true)

        // Then it is read as desk's own (not refused as too large), and removed: its parts hold it
        #expect(rescan.source("desk.json")?.status == .merged, "\(rescan.sources)")
        #expect(!rescan.sources.contains { $0.name.hasPrefix("desk.") && $0.reason != nil }, "\(rescan.sources)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.sharedPath("desk.json")))
        // And a file there larger than any desk wrote is refused as too large, unread, and left alone
        let larger = whole + Array(repeating: UInt8(ascii: " "), count: 10)
        try sandbox.write("desk.json", larger)
        let again = try desk.merge(rereadAll: true)
        #expect(again.source("desk.json")?.problemKind == "too_large", "\(again.sources)")
        #expect(try sandbox.read("desk.json") == larger)
        try FileManager.default.removeItem(atPath: sandbox.sharedPath("phone.json"))
        try FileManager.default.removeItem(atPath: sandbox.sharedPath("desk.json"))
        #expect(try Self.idsReadByAPeer(sandbox, maxFileSize: limit).count == 40)
    }

    @Test("a largest file read lowered below this device's parts: its next publication splits every part over it, not only the ones whose records changed")
    func limitLoweredBelowParts() throws {
        // Given desk publishing phone's 400 records in 16 parts
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        try sandbox.write("phone.json", PartsTests.peerFile("phone", generation: 1, 0..<400))
        let first = try sandbox.device("desk", partPolicy: PartsTests.policy).merge()
        #expect(first.publishedFiles.count == 16, "\(first.publishedFiles)")
        let limit = Int64(try first.publishedFiles.map { try sandbox.read($0).count }.min()! - 1)

        // When desk runs with a limit below every part, and one record comes
        let desk = try sandbox.device("desk", maxFileSize: limit, partPolicy: PartsTests.policy)
        try sandbox.write("tablet.json", PartsTests.peerFile("tablet", generation: 1, 400..<401))
        _ = try desk.merge()

        // Then every file desk publishes is under the limit, and a device reading with it reads them all
        let files = try FileManager.default.contentsOfDirectory(atPath: sandbox.shared).filter { $0.hasPrefix("desk.") }
        for name in files { #expect(try sandbox.read(name).count <= limit, "\(name)") }
        try FileManager.default.removeItem(atPath: sandbox.sharedPath("phone.json"))
        #expect(try Self.idsReadByAPeer(sandbox, maxFileSize: limit).count == 401)
    }

    @Test("only this device's own temporary names are cleaned up: not device me.json's, nor a person's .desk.json.tmp")
    func ownTemporaryNamesOnly() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let desk = try sandbox.device("desk")
        let own = [".desk.json.4242.whole.tmp", ".desk.json.17.A.tmp", ".desk.json.17.0F3C.tmp"]
        let others = [".desk.json.json.4242.whole.tmp", ".desk.json.tmp", ".desk.json.x.whole.tmp", ".desk.json.17.G.tmp"]
        for name in own + others { try sandbox.write(name, "{}") }
        _ = try desk.merge()
        let left = Set(try FileManager.default.contentsOfDirectory(atPath: sandbox.shared))
        #expect(left.isDisjoint(with: own), "\(left)")
        #expect(left.isSuperset(of: others), "\(left)")
    }
}
