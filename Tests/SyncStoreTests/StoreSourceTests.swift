import SnapshotFormat
import SyncStore
import Testing

@Suite("Store: identity, sources and publications")
struct StoreSourceTests {
    @Test("A new store has no owner; claiming records it; a second claim is refused")
    func identity() throws {
        let store = try SyncStore()
        #expect(try store.reading { try $0.owner() } == nil)
        try store.transaction { try $0.claim(for: Sample.device("laptop"), at: Sample.now) }
        #expect(try store.reading { try $0.owner() } == Sample.device("laptop"))
        #expect(throws: (any Error).self) {
            try store.transaction { try $0.claim(for: Sample.device("phone"), at: Sample.now) }
        }
        #expect(try store.reading { try $0.owner() } == Sample.device("laptop"))
    }

    @Test("Source rows round-trip, list by name, and update in place")
    func sourcesRoundTrip() throws {
        let store = try SyncStore()
        var phone = Sample.source("phone.json", inode: 7, device: "phone", generation: 3)
        phone.lastMergedAt = Sample.now.milliseconds - 5
        phone.lastProblem = "1 record(s) rejected, first: record #2: type is missing"
        let copy = Sample.source("phone (1).json", inode: 8, device: "phone", generation: 2)
        let unreadable = Sample.source("broken.json", inode: 9)
        try store.transaction { session in
            for row in [phone, copy, unreadable] { try session.save(row) }
        }
        #expect(try store.reading { try $0.source(named: "phone.json") } == phone)
        #expect(try store.reading { try $0.source(named: "missing.json") } == nil)
        #expect(try store.reading { try $0.sources() } == [unreadable, copy, phone])
        // When a row is saved again with a new stat and generation
        var newer = phone
        newer.inode = 70
        newer.generation = 4
        newer.highestGeneration = 4
        newer.lastProblem = nil
        try store.transaction { try $0.save(newer) }
        // Then it replaces the old row
        #expect(try store.reading { try $0.source(named: "phone.json") } == newer)
        #expect(try store.reading { try $0.sources() }.count == 3)
        #expect(!newer.hasSameStat(as: phone))
        #expect(phone.hasSameStat(as: phone))
    }

    @Test("Many source rows saved in one call round-trip, every optional field set and unset")
    func manySourcesRoundTrip() throws {
        let store = try SyncStore()
        let rows = (0..<300).map { index -> StoredSource in
            var row = Sample.source("dev-\(index % 3).\(String(index, radix: 16, uppercase: true)) é.json", inode: Int64(index))
            if index % 2 == 0 {
                row.device = "dev-\(index % 3)"
                row.role = "own"
                row.generation = Int64(index)
                row.highestGeneration = Int64(index + 1)
                row.lastMergedAt = Sample.now.milliseconds - Int64(index)
                row.lastProblem = index % 4 == 0 ? "" : "problem \(index) with \"quotes\" and 日本"
                row.lastWarning = "warning \(index)"
                row.problemKind = "invalid_json"
            }
            row.present = index % 5 != 0
            row.size = Int64.max - Int64(index)
            row.modifiedNanos = -Int64(index)
            return row
        }
        try store.transaction { try $0.save(rows) }
        let saved = try store.reading { try $0.sources() }
        #expect(saved.count == rows.count)
        #expect(Dictionary(uniqueKeysWithValues: saved.map { ($0.name, $0) }) == Dictionary(uniqueKeysWithValues: rows.map { ($0.name, $0) }))
        // Saved again, changed, they replace the rows of their names
        let changed = rows.map { row -> StoredSource in
            var changed = row
            changed.generation = nil
            changed.lastProblem = nil
            changed.inode += 1_000
            return changed
        }
        try store.transaction { try $0.save(changed) }
        let resaved = try store.reading { try $0.sources() }
        #expect(Dictionary(uniqueKeysWithValues: resaved.map { ($0.name, $0) }) == Dictionary(uniqueKeysWithValues: changed.map { ($0.name, $0) }))
    }

    @Test("markAbsent marks every source not named as absent, and forgets none")
    func markAbsent() throws {
        let store = try SyncStore()
        try store.transaction { session in
            for (index, name) in ["a.json", "b.json", "c.json"].enumerated() {
                try session.save(Sample.source(name, inode: Int64(index)))
            }
            try session.markAbsent(except: ["b.json"])
        }
        let rows = try store.reading { try $0.sources() }
        #expect(rows.map(\.name) == ["a.json", "b.json", "c.json"])
        #expect(rows.map(\.present) == [false, true, false])
    }

    @Test("markAbsent given this device forgets the rows of sync tools' copies of peers' files gone from the folder, and keeps every other row")
    func markAbsentForgetsCopies() throws {
        let store = try SyncStore()
        try store.transaction { session in
            for (index, (name, device)) in [
                ("phone.json", "phone"), ("phone.sync-conflict-1.json", "phone"), ("phone.sync-conflict-2.json", "phone"),
                ("desk.json", "desk"), ("desk (1).json", "desk"), ("notes.json", nil),
            ].enumerated() {
                try session.save(Sample.source(name, inode: Int64(index), device: device, generation: 9))
                try session.saveMergedElements([UInt8](repeating: 1, count: 16), of: name)
            }
            // (a copy gone before this release, its row absent already)
            try session.markAbsent(["phone.sync-conflict-2.json"])
            try session.markAbsent(except: ["phone.sync-conflict-1.json"], device: "desk")
        }
        let rows = try store.reading { try $0.sources() }
        #expect(rows.map(\.name) == ["desk (1).json", "desk.json", "notes.json", "phone.json", "phone.sync-conflict-1.json"])
        #expect(rows.map(\.present) == [false, false, false, false, true])
        #expect(try store.reading { try $0.highestGeneration(seenFrom: "desk") } == 9)
        var forgotten = 0
        try store.reading { session in
            for name in ["phone.sync-conflict-2.json", "notes.json"] { try session.forEachMergedElement(of: name) { _ in forgotten += 1 } }
            // (notes.json's elements went when it was marked absent, as before)
        }
        #expect(forgotten == 0)
    }

    @Test("Files written: recorded, found by part and generation, the highest of all, forgotten by generation")
    func filesWritten() throws {
        let store = try SyncStore()
        #expect(try store.reading { try $0.hasWritten() } == false)
        #expect(try store.reading { try $0.highestWrittenGeneration() } == 0)
        // Given the whole file at 1, and parts 3 and 4 at 2
        try store.transaction { session in
            try session.recordWritten(WrittenFile(part: "", generation: 1, fileDigest: "a", writtenAt: 1))
            try session.recordWritten(WrittenFile(part: "3", generation: 2, fileDigest: "b", writtenAt: 2))
            try session.recordWritten(WrittenFile(part: "4", generation: 2, fileDigest: "c", writtenAt: 2))
        }
        #expect(try store.reading { try $0.hasWritten() })
        #expect(try store.reading { try $0.highestWrittenGeneration() } == 2)
        #expect(try store.reading { try $0.writtenFile(part: PartPrefix("3")!, generation: 2) }?.fileDigest == "b")
        #expect(try store.reading { try $0.writtenFile(part: PartPrefix("3")!, generation: 1) } == nil)
        // When generation 2 could not be put in place
        try store.transaction { try $0.forgetWritten(generation: 2) }
        #expect(try store.reading { try $0.highestWrittenGeneration() } == 1)
    }

    @Test("Files written: each part keeps its newest 1,000, the others' untouched; digests by part")
    func filesWrittenPruned() throws {
        let store = try SyncStore()
        try store.transaction { session in
            try session.recordWritten(WrittenFile(part: "4", generation: 1, fileDigest: "four", writtenAt: 1))
            for generation in 1...1_005 {
                try session.recordWritten(
                    WrittenFile(part: "3", generation: Int64(generation), fileDigest: "d\(generation)", writtenAt: 1))
            }
        }
        let three = try store.reading { try $0.writtenFileDigests(of: PartPrefix("3")!) }
        #expect(three.count == StoreSession.writtenFilesKeptPerPart)
        #expect(three.keys.min() == 6 && three[1_005] == "d1005")
        #expect(try store.reading { try $0.writtenFileDigests(of: PartPrefix("4")!) } == [1: "four"])
        #expect(try store.reading { try $0.highestWrittenGeneration() } == 1_005)
    }

    @Test("Own parts: replaced, marked published by generation; changed prefixes kept until their part is written")
    func ownParts() throws {
        let store = try SyncStore()
        let row = { (prefix: String, generation: Int64) in
            OwnPart(prefix: prefix, generation: generation, contentDigest: "d", bytes: 10, records: 1, isPublished: false)
        }
        try store.transaction { try $0.replaceOwnParts(removing: [], saving: [row("", 1)]) }
        try store.transaction { session in
            try session.replaceOwnParts(removing: [""], saving: [row("3", 2), row("4", 2)])
            try session.markPartsPublished(generation: 2)
        }
        #expect(try store.reading { try $0.ownParts() }.map(\.prefix) == ["3", "4"])
        #expect(try store.reading { try $0.ownParts() }.allSatisfy(\.isPublished))
        // Given two records saved in one transaction
        let first = ReadOnly.Record(version: Sample.version(RecordID("3F2504E0-4F89-41D3-9A0C-0305E82C3301")!))
        let second = ReadOnly.Record(version: Sample.version(RecordID("4F2504E0-4F89-41D3-9A0C-0305E82C3301")!))
        try store.transaction { session in
            try session.save(first, at: Sample.now)
            try session.save(second, at: Sample.now)
            // Then both prefixes count as changed inside it, and the one written is forgotten
            #expect(try session.changedPrefixes() == [PartPrefix("3F25")!.value, PartPrefix("4F25")!.value])
            try session.clearChangedPrefixes(within: PartPrefix("3")!)
        }
        // And the other stays, for the next publication
        #expect(try store.reading { try $0.changedPrefixes() } == [PartPrefix("4F25")!.value])
        try store.transaction { try $0.clearChangedPrefixes(within: .whole) }
        #expect(try store.reading { try $0.changedPrefixes() }.isEmpty)
    }
}
