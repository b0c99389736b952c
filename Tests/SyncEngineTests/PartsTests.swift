import Foundation
import SnapshotFormat
import SyncEngine
import SyncStore
import TestSupport
import Testing

/// Parts: a device's snapshot split into `<device>.<prefix>.json` files once it is large, each
/// written only when its records change, split and joined as the policy says.
@Suite("Parts of this device's snapshot")
struct PartsTests {
    /// Small limits, so that a few hundred records make parts.
    static let policy = PartPolicy(splitBytes: 16 << 10, joinBytes: 4 << 10)

    /// Record ids spread over every leading hex digit.
    static func id(_ n: Int) -> RecordID {
        let leading = UInt32(truncatingIfNeeded: UInt64(n + 1) &* 2_654_435_761)
        return RecordID(String(format: "%08X-0000-4000-8000-%012d", leading, n))!
    }

    static func version(_ n: Int, by device: String, count: Int64 = 1, text: String = "a note of some length", deleted: Bool = false)
        -> ReadOnly.Version
    {
        var fields = JSONObject()
        if !deleted { fields["text"] = .string("\(text) \(n)") }
        return ReadOnly.Version(
            id: id(n), type: "Note", lastModified: Timestamp(milliseconds: Wire.base + Int64(n) + 1000 * count),
            modifiedBy: DeviceID(device), versionVector: VersionVector([DeviceID(device)!: count]), deleted: deleted,
            fields: fields)
    }

    /// A peer's whole snapshot with records `range`.
    static func peerFile(_ device: String, generation: Int64, _ range: Range<Int>, count: Int64 = 1, text: String = "a note of some length", deleted: Bool = false) -> [UInt8] {
        Wire.snapshot(device, generation: generation, versions: range.map { version($0, by: device, count: count, text: text, deleted: deleted) })
    }

    @Test("a small snapshot is one file; once larger than the split size it is published in parts, and the one file is removed")
    func splitsWhenLarge() throws {
        // Given desk holding 10 records of phone's: one file
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        try sandbox.write("phone.json", Self.peerFile("phone", generation: 1, 0..<10))
        let desk = try sandbox.device("desk", partPolicy: Self.policy)
        _ = try desk.merge()
        #expect(try PublishedSnapshot.read(folder: sandbox.shared, device: "desk")?.files == ["desk.json"])

        // When phone's file grows to 400 records (about 40 KiB)
        try sandbox.write("phone.json", Self.peerFile("phone", generation: 2, 0..<400))
        let report = try desk.merge()

        // Then desk publishes 16 parts, each under the split size, and removes desk.json
        let published = try #require(try PublishedSnapshot.read(folder: sandbox.shared, device: "desk"))
        #expect(published.files.count == 16, "\(published.files)")
        #expect(published.parts.map(\.digits) == Array(repeating: 1, count: 16))
        #expect(published.recordCount == 400 && published.problems.isEmpty)
        #expect(Set(published.versions.map(\.id)) == Set((0..<400).map(Self.id)))
        #expect(report.publishedFiles.count == 16)
        #expect(report.removedFiles == ["desk.json"])
        // And status at once lists desk.json as no longer in the folder, no warning about it
        let status = try desk.status()
        #expect(status.sources.first { $0.name == "desk.json" }?.present == false, "\(status.sources)")
        let present = status.sources.filter { $0.present && $0.device == "desk" }.map(\.name)
        #expect(present == published.files, "\(present)")
        #expect(status.warnings.isEmpty, "\(status.warnings)")
        for name in published.files {
            let size = try sandbox.read(name).count
            #expect(size <= Self.policy.splitBytes, "\(name): \(size) bytes")
        }
        // And a merge with nothing changed writes and removes nothing
        let again = try desk.merge()
        #expect(again.publishedFiles.isEmpty && again.removedFiles.isEmpty)
    }

    @Test("a first merge whose part cannot be written says so and leaves none of its files behind; the next merge publishes every part")
    func firstPublicationFails() throws {
        // Given phone's 400 records (16 parts for desk) and, where desk's first merge writes part
        // 7 before renaming it, a directory: writing it fails, root or not
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        try sandbox.write("phone.json", Self.peerFile("phone", generation: 1, 0..<400))
        let desk = try sandbox.device("desk", partPolicy: Self.policy)
        let blocking = ".desk.json.\(getpid()).7.tmp"
        try FileManager.default.createDirectory(atPath: sandbox.sharedPath(blocking), withIntermediateDirectories: false)

        // When desk merges for the first time
        // Then the merge fails as a publication that failed, and no file of desk's is left in the
        // folder: neither the parts written before nor after part 7 (two threads write them)
        #expect {
            try desk.merge()
        } throws: { error in
            guard case EngineError.publishFailed = error else { return false }
            return true
        }
        let left = try FileManager.default.contentsOfDirectory(atPath: sandbox.shared).filter { $0.contains("desk") }
        #expect(left == [blocking])

        // And once the directory is gone, the next merge publishes all 16 parts with every record
        try FileManager.default.removeItem(atPath: sandbox.sharedPath(blocking))
        let report = try desk.merge()
        let published = try #require(try PublishedSnapshot.read(folder: sandbox.shared, device: "desk"))
        #expect(published.files.count == 16, "\(published.files)")
        #expect(published.recordCount == 400 && published.problems.isEmpty)
        #expect(report.publishedFiles.count == 16)
    }

    @Test("an edit rewrites only the part that holds the record; every other part file is left as it was")
    func editRewritesOnePart() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        try sandbox.write("phone.json", Self.peerFile("phone", generation: 1, 0..<400))
        let desk = try sandbox.device("desk", partPolicy: Self.policy)
        _ = try desk.merge()
        let files = try #require(try PublishedSnapshot.read(folder: sandbox.shared, device: "desk")).files
        let before = Dictionary(uniqueKeysWithValues: files.map { ($0, fileIdentity(sandbox.sharedPath($0))!) })

        // When desk edits one record
        sandbox.clock.advance()
        let edited = Self.id(123)
        let report = try desk.put(id: edited, type: "Note", fields: Wire.object(#"{"text": "changed"}"#), schemaVersion: nil)

        // Then exactly the part holding it is written again
        let part = PartPrefix(of: edited, digits: 1)
        #expect(report.merge.publishedFiles == [part.fileName(for: DeviceID("desk")!)])
        for name in files {
            let now = try #require(fileIdentity(sandbox.sharedPath(name)))
            let changed = now.inode != before[name]!.inode || now.modified != before[name]!.modified
            #expect(changed == (name == part.fileName(for: DeviceID("desk")!)), "\(name)")
        }
    }

    @Test("a merge after a peer changed one record of its parts reads that part's file alone")
    func peerPartReadAlone() throws {
        // Given phone and desk in step, phone's snapshot in parts
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        try sandbox.write("seed.json", Self.peerFile("seed", generation: 1, 0..<400))
        let phone = try sandbox.device("phone", state: sandbox.state("phone"), partPolicy: Self.policy)
        let desk = try sandbox.device("desk", partPolicy: Self.policy)
        _ = try phone.merge()
        _ = try desk.merge()
        _ = try phone.merge()
        _ = try desk.merge()

        // When phone edits one record
        sandbox.clock.advance()
        let edited = Self.id(7)
        let edit = try phone.put(id: edited, type: "Note", fields: Wire.object(#"{"text": "by phone"}"#), schemaVersion: nil)
        let changedPart = PartPrefix(of: edited, digits: 1).fileName(for: DeviceID("phone")!)
        #expect(edit.merge.publishedFiles == [changedPart])

        // Then desk reads that one file, merges the record, and rewrites its own part of it
        let report = try desk.merge()
        #expect(report.sources.filter { $0.status == .merged }.map(\.name) == [changedPart])
        #expect(report.changed == 1)
        #expect(report.publishedFiles == [PartPrefix(of: edited, digits: 1).fileName(for: DeviceID("desk")!)])
        #expect(try desk.record(edited)?.version.fields == Wire.object(#"{"text": "by phone"}"#))
    }

    @Test("a peer's part first merged among other files: its first change reads what changed, not the versions that lost")
    func firstChangeOfPeerPart() throws {
        // Given phone's snapshot in parts, holding seed's 400 records
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        try sandbox.write("seed.json", Self.peerFile("seed", generation: 1, 0..<400))
        let phone = try sandbox.device("phone", state: sandbox.state("phone"), partPolicy: Self.policy)
        _ = try phone.merge()
        // And a record of the part that phone will edit, edited concurrently by late, which
        // phone does not see
        let edited = 7
        let prefix = PartPrefix(of: Self.id(edited), digits: 1)
        let contested = try #require((0..<400).first { $0 != edited && prefix.contains(Self.id($0)) })
        try sandbox.write("late.json", Wire.snapshot("late", generation: 1, versions: [Self.version(contested, by: "late", text: "late's note")]))

        // When desk merges the folder for the first time: phone's element of the contested
        // record is not desk's line of it (desk keeps both versions, in conflict)
        let desk = try sandbox.device("desk", partPolicy: Self.policy)
        let cold = try desk.merge()
        #expect(cold.added == 400 && cold.newConflicts == 1)
        #expect(desk.progress.current.versions == 400 * 2 + 1)
        // Phone's other elements are desk's lines byte for byte: only the contested one is kept
        var kept = 0
        try desk.store.reading { session in
            try session.forEachMergedElement(of: prefix.fileName(for: DeviceID("phone")!)) { _ in kept += 1 }
        }
        #expect(kept == 1)
        try FileManager.default.removeItem(atPath: sandbox.sharedPath("late.json"))

        // And phone edits another record of the same part, without seeing desk's files (which
        // would bring it the conflict, and its part would then hold desk's line)
        let deskFiles = try FileManager.default.contentsOfDirectory(atPath: sandbox.shared).filter { $0.hasPrefix("desk.") }
        for name in deskFiles {
            try FileManager.default.moveItem(atPath: sandbox.sharedPath(name), toPath: sandbox.outside + "/" + name)
        }
        sandbox.clock.advance()
        let edit = try phone.put(id: Self.id(edited), type: "Note", fields: Wire.object(#"{"text": "by phone"}"#), schemaVersion: nil)
        #expect(edit.merge.publishedFiles == [prefix.fileName(for: DeviceID("phone")!)])
        for name in deskFiles {
            try FileManager.default.moveItem(atPath: sandbox.outside + "/" + name, toPath: sandbox.sharedPath(name))
        }

        // Then desk's next merge reads the edited record alone: the contested one's element was
        // kept as merged by the first merge, not read again
        let report = try desk.merge()
        #expect(report.changed == 1)
        #expect(desk.progress.current.versions == 1)
        #expect(try desk.record(Self.id(edited))?.version.fields == Wire.object(#"{"text": "by phone"}"#))
        #expect(try desk.record(Self.id(contested))?.unresolvedConflicts.count == 1)
    }

    @Test("a split seen half-way (the old file beside the new parts) merges to the same state, and the writer removes the old file at its next pass")
    func splitSeenHalfWay() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        try sandbox.write("phone.json", Self.peerFile("phone", generation: 1, 0..<10))
        let desk = try sandbox.device("desk", partPolicy: Self.policy)
        _ = try desk.merge()
        let oldWhole = try sandbox.read("desk.json")
        try sandbox.write("phone.json", Self.peerFile("phone", generation: 2, 0..<400, count: 2))
        _ = try desk.merge()
        #expect(!FileManager.default.fileExists(atPath: sandbox.sharedPath("desk.json")))

        // Given desk.json back beside the parts, as a reader sees the folder between the two
        // steps of a split (or after a crash between them), and phone's file gone
        try sandbox.write("desk.json", oldWhole)
        try FileManager.default.removeItem(atPath: sandbox.sharedPath("phone.json"))

        // When another device merges the folder
        let tablet = try sandbox.device("tablet", state: sandbox.state("tablet"), partPolicy: Self.policy)
        _ = try tablet.merge()

        // Then it holds what desk holds: the old file's older versions change nothing
        #expect(try heldRecords(tablet) == heldRecords(desk))
        // And desk's next pass removes its old file, which it wrote and which its parts replace
        let report = try desk.merge()
        #expect(report.removedFiles == ["desk.json"])
        #expect(!FileManager.default.fileExists(atPath: sandbox.sharedPath("desk.json")))
        #expect(report.warnings.isEmpty, "\(report.warnings)")
    }

    @Test("parts whose records shrink below the join size together are joined back into their parent")
    func joinsWhenSmall() throws {
        // Given desk's snapshot in parts
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let long = String(repeating: "long text ", count: 40)
        try sandbox.write("phone.json", Self.peerFile("phone", generation: 1, 0..<80, text: long))
        let desk = try sandbox.device("desk", partPolicy: PartPolicy(splitBytes: 40 << 10, joinBytes: 20 << 10))
        _ = try desk.merge()
        #expect(try PublishedSnapshot.read(folder: sandbox.shared, device: "desk")!.files.count == 16)

        // When phone deletes every record (tombstones carry no fields: a few KiB in all)
        try sandbox.write("phone.json", Self.peerFile("phone", generation: 2, 0..<80, count: 2, deleted: true))
        let report = try desk.merge(acceptDeletions: ["phone.json"])

        // Then desk's parts are joined into one file again
        let published = try #require(try PublishedSnapshot.read(folder: sandbox.shared, device: "desk"))
        #expect(published.files == ["desk.json"])
        #expect(published.recordCount == 80 && published.versions.allSatisfy(\.deleted))
        #expect(report.removedFiles.count == 16)
    }

    @Test("a sync tool's copy of a part merges like the part, and tidy removes it once this device's parts hold it")
    func copiesOfParts() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        try sandbox.write("seed.json", Self.peerFile("seed", generation: 1, 0..<400))
        let phone = try sandbox.device("phone", state: sandbox.state("phone"), partPolicy: Self.policy)
        _ = try phone.merge()
        // Given a Syncthing copy of one of phone's parts holding a concurrent version
        let part = PartPrefix(of: Self.id(5), digits: 1)
        let copyName = "phone.\(part.rawValue).sync-conflict-20261122-101010-ABCDEFG.json"
        var concurrent = Self.version(5, by: "laptop")
        concurrent.fields = Wire.object(#"{"text": "laptop's"}"#)
        var copy = ReadOnly.Snapshot(
            device: DeviceID("phone")!, generation: 1, writtenAt: nil,
            records: [ReadOnly.Record(version: concurrent)])
        copy.part = part
        try sandbox.write(copyName, SnapshotWriter.bytes(of: copy))

        // When desk merges the folder
        let desk = try sandbox.device("desk", partPolicy: Self.policy)
        let report = try desk.merge()

        // Then the copy merged: the record has the copy's version as a conflict
        #expect(report.source(copyName)?.status == .merged && report.source(copyName)?.role == "copy")
        #expect(try desk.record(Self.id(5))?.conflicts.count == 1)
        // And tidy removes the copy: every version in it is in desk's parts now
        let tidy = try desk.tidy()
        #expect(tidy.removed == [copyName], "\(tidy.kept)")
    }

    @Test("a file named like a part that is another device's whole snapshot (pi.37.json of device pi.37) is merged whole, in a large pass too")
    func misleadingPartName() throws {
        // Given a folder large enough to be read in groups, with pi.37's whole snapshot
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let long = String(repeating: "padding ", count: 40)
        try sandbox.write("seed.json", Self.peerFile("seed", generation: 1, 0..<30_000, text: long))
        try sandbox.write("pi.37.json", Self.peerFile("pi.37", generation: 1, 30_000..<30_100))

        // When desk merges it
        let desk = try sandbox.device("desk", partPolicy: Self.policy)
        let report = try desk.merge()

        // Then every record of pi.37 merged, whatever group its id falls in
        #expect(report.source("pi.37.json")?.status == .merged)
        #expect(report.added == 30_100)
        for n in 30_000..<30_100 { #expect(try desk.record(Self.id(n)) != nil) }
    }

    @Test("the policy splits a part while it is too large and joins 16 siblings only when all are leaves and small together")
    func policy() {
        let policy = PartPolicy(splitBytes: 100, joinBytes: 40)
        // 3 is large (160): split; its children 30..3F are 10 each but 3F, 20: leaves.
        let sizes: [PartPrefix: Int] = [.whole: 500, PartPrefix("3")!: 160]
        let leaves = policy.leaves(replacing: .whole) { part in
            if let size = sizes[part] { return PartPolicy.Size(records: 20, fileBytes: size) }
            return PartPolicy.Size(records: 1, fileBytes: part.isWithin(PartPrefix("3")!) ? 10 : 20)
        }
        #expect(leaves.count == 31 && leaves.contains(PartPrefix("30")!) && !leaves.contains(PartPrefix("3")!))
        // A part holding one record is not split, however large
        let single = policy.leaves(replacing: .whole) { part in
            part == .whole
                ? PartPolicy.Size(records: 3, fileBytes: 1_000)
                : PartPolicy.Size(records: part == PartPrefix("3") ? 1 : 0, fileBytes: part == PartPrefix("3") ? 900 : 300)
        }
        #expect(single.count == 16 && single.contains(PartPrefix("3")!))
        let children = Set(PartPrefix("3")!.children)
        func bytes(_ count: Int) -> PartPolicy.Size { PartPolicy.Size(records: 2, fileBytes: count) }
        #expect(policy.joinedParent(of: PartPrefix("31")!, leaves: children) { _ in bytes(2) } == PartPrefix("3"))
        #expect(policy.joinedParent(of: PartPrefix("31")!, leaves: children) { _ in bytes(3) } == nil)
        #expect(policy.joinedParent(of: PartPrefix("31")!, leaves: children.subtracting([PartPrefix("3F")!])) { _ in bytes(1) } == nil)
        #expect(policy.joinedParent(of: PartPrefix("31")!, leaves: children) { $0 == PartPrefix("3F") ? nil : bytes(1) } == nil)
        #expect(policy.joinedParent(of: .whole, leaves: [.whole]) { _ in bytes(0) } == nil)
        // 16 siblings holding one record in all join, however large it is (it is never split)
        let lonely = policy.joinedParent(of: PartPrefix("31")!, leaves: children) { part in
            part == PartPrefix("34") ? PartPolicy.Size(records: 1, fileBytes: 900) : PartPolicy.Size(records: 0, fileBytes: 300)
        }
        #expect(lonely == PartPrefix("3"))
    }

    @Test("the policy's size of a part is never short of its file: the longest device ID, a part of 4 digits, the largest generation, a key and a signature")
    func sizeCoversTheWholeFile() throws {
        let device = try #require(DeviceID(String(repeating: "d", count: DeviceID.maximumLength)))
        let key = try #require(PublicKey(bytes: Array(repeating: 7, count: 32)))
        let line = Wire.text(Wire.version(1, by: "desk")).utf8
        var bytes = SnapshotWriter.header(
            device: device, part: try #require(PartPrefix("ABCD")), generation: 9_007_199_254_740_991,
            writtenAt: Timestamp(milliseconds: 253_402_300_799_999), key: key)
        SnapshotWriter.appendLine(Array(line), isFirst: true, into: &bytes)
        bytes += SnapshotWriter.signedEnd + SnapshotWriter.signatureFooter(Array(repeating: 1, count: 64))
        #expect(bytes.count <= PartPolicy.Size(records: 1, lineBytes: line.count).fileBytes, "\(bytes.count)")
    }
}

/// A record larger than the split size lands in a part of 4 digits, which cannot split further,
/// unless it is alone in a part of fewer digits.
@Suite("Parts of 4 digits")
struct DeepestPartsTests {
    @Test(
        "a record larger than the split size, alone under its first digit, is published in that part of one digit: 16 files, not 61",
        arguments: [false, true])
    func lonelyLargeRecord(firstMerge: Bool) throws {
        // Given desk with small parts, one large record and small ones under other first digits,
        // made by desk itself or merged from a peer's file by desk's first merge
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let big = Wire.object(#"{"text": "\#(String(repeating: "b", count: 40 << 10))"}"#)
        let small = Wire.object(#"{"text": "small"}"#)
        let ids = ["1234", "5000", "A000", "F000"].map { RecordID("\($0)ABCD-0000-4000-8000-000000000001")! }
        let maker = try sandbox.device(firstMerge ? "pi" : "desk", state: sandbox.state(firstMerge ? "pi" : "desk"), partPolicy: PartsTests.policy)
        for id in ids { _ = try maker.put(id: id, type: "Note", fields: id == ids[0] ? big : small, schemaVersion: nil) }
        let desk = firstMerge ? try sandbox.device("desk", state: sandbox.state("desk"), partPolicy: PartsTests.policy) : maker
        if firstMerge { _ = try desk.merge() }

        // Then desk's parts are the 16 of one digit, the large record alone in desk.1.json
        let published = try #require(try PublishedSnapshot.read(folder: sandbox.shared, device: "desk"))
        #expect(published.problems.isEmpty, "\(published.problems)")
        #expect(published.files.count == 16, "\(published.files)")
        let byFile = Dictionary(uniqueKeysWithValues: zip(published.files, published.readings))
        #expect(byFile["desk.1.json"]?.versions.map(\.id) == [ids[0]])
        #expect(published.recordCount == ids.count)

        // And an edit of a small record keeps that layout
        _ = try desk.put(id: ids[1], type: "Note", fields: Wire.object(#"{"text": "edited"}"#), schemaVersion: nil)
        let after = try #require(try PublishedSnapshot.read(folder: sandbox.shared, device: "desk"))
        #expect(after.files.count == 16, "\(after.files)")
    }

    @Test("a record larger than the split size is published alone in its part of 4 digits, FFFF included, and nowhere else")
    func recordLargerThanASplit() throws {
        // Given desk with small parts, records around 1234 and at FFFF, two of them 20 KiB
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let desk = try sandbox.device("desk", partPolicy: PartsTests.policy)
        let big = Wire.object(#"{"text": "\#(String(repeating: "b", count: 20 << 10))"}"#)
        let small = Wire.object(#"{"text": "small"}"#)
        let ids = ["1230", "1233", "1234", "1235", "123F", "FFFE", "FFFF"].map {
            RecordID("\($0)ABCD-0000-4000-8000-000000000001")!
        }
        for id in ids {
            let isBig = id.rawValue.hasPrefix("1234") || id.rawValue.hasPrefix("FFFF")
            _ = try desk.put(id: id, type: "Note", fields: isBig ? big : small, schemaVersion: nil)
        }

        // Then every published part holds only ids of its prefix, the big ones alone in theirs
        let published = try #require(try PublishedSnapshot.read(folder: sandbox.shared, device: "desk"))
        #expect(published.problems.isEmpty, "\(published.problems)")
        #expect(published.recordCount == ids.count)
        let byFile = Dictionary(uniqueKeysWithValues: zip(published.files, published.readings))
        #expect(byFile["desk.1234.json"]?.versions.map(\.id) == [ids[2]])
        #expect(byFile["desk.FFFF.json"]?.versions.map(\.id) == [ids[6]])
        // And a fresh device merges every record, rejecting nothing
        let fresh = try sandbox.device("fresh", state: sandbox.state("fresh"))
        let report = try fresh.merge()
        #expect(!report.hasRejections, "\(report.sources.filter { $0.status != .merged })")
        #expect(Set(try fresh.records().map(\.id)) == Set(ids))
    }
}
