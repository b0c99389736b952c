import Foundation
@testable import SnapshotFormat
@testable import SyncEngine
import Testing

/// A whole snapshot written by another tool: its record elements are not this device's lines
/// (keys in another order, spaces), so the store's line digests cannot tell which of them are
/// merged already. The store keeps the digests of the elements each such file merged, so that
/// its next change reads only the elements that differ (store v10).
@Suite("another tool's whole snapshot: a change reads what changed")
struct ForeignWriterTests {
    /// A record as another tool might write it: keys in reverse order, spaces after separators.
    static func element(_ n: Int, edit: Int = 1) -> String {
        """
            { "versionVector": { "tool": \(edit) }, "type": "Item", "modifiedBy": "tool", \
            "lastModified": "2026-01-01T00:00:\(String(format: "%02d", edit % 60)).000Z", "id": "\(id(n))", \
            "fields": { "z": \(n), "note": "record \(n), edit \(edit), ünïcode" } }
            """
    }

    /// tool.json: `count` records, the one at `changed` (if any) edited a second time, and one
    /// record the contract rejects (its date is not a date).
    static func file(count: Int, generation: Int64, changed: Int? = nil) -> String {
        var records = (0..<count).map { element($0, edit: $0 == changed ? 2 : 1) }
        records.append(#"{ "lastModified": "yesterday", "id": "FFFFFFFF-0000-4000-8000-000000000001", "type": "Item" }"#)
        return Wire.snapshotText("tool", generation: generation, records: records)
    }

    @Test(
        "a one-record change reads that record alone; a rejected record is still read and reported; rereading reads all",
        arguments: [300, 24_000])  // one group, and over 8 MB: read first and divided among groups
    func changeReadsWhatChanged(count: Int) throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        try sandbox.write("tool.json", Self.file(count: count, generation: 1))
        let desk = try sandbox.device("desk")

        let cold = try desk.merge()
        #expect(cold.added == count)
        #expect(cold.source("tool.json")?.rejectedRecords.count == 1)
        #expect(desk.progress.current.versions == count)

        try sandbox.write("tool.json", Self.file(count: count, generation: 2, changed: count / 2))
        let incremental = try desk.merge()
        #expect(incremental.changed == 1 && incremental.added == 0)
        // Only the changed record was read (the rejected one is read again too, and yields no version)
        #expect(desk.progress.current.versions == 1)
        #expect(incremental.source("tool.json")?.status == .merged)
        #expect(incremental.source("tool.json")?.rejectedRecords.count == 1)
        let held = try #require(try desk.store.reading { try $0.record(RecordID(Self.id(count / 2))!) })
        #expect(held.version.fields["note"] == .string("record \(count / 2), edit 2, ünïcode"))

        // Reading everything again (as a change of trusted keys asks) reads every record
        _ = try desk.merge(rereadAll: true)
        #expect(desk.progress.current.versions == count)
    }

    @Test("two files holding the same elements byte for byte: each keeps its digests (hashed once for both)")
    func sameElementsInTwoFiles() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let count = 24_000
        let records = (0..<count).map { Self.element($0) }
        try sandbox.write("tool.json", Wire.snapshotText("tool", generation: 1, records: records))
        try sandbox.write("other.json", Wire.snapshotText("other", generation: 1, records: records))
        let desk = try sandbox.device("desk")
        #expect(try desk.merge().added == count)

        // When one record changes in each file, at different places
        var changed = records
        changed[10] = Self.element(10, edit: 2)
        try sandbox.write("tool.json", Wire.snapshotText("tool", generation: 2, records: changed))
        changed = records
        changed[count - 10] = Self.element(count - 10, edit: 2)
        try sandbox.write("other.json", Wire.snapshotText("other", generation: 2, records: changed))
        let incremental = try desk.merge()

        // Then only those two records are read: the digests kept for each file were its own elements'
        #expect(incremental.changed == 2)
        #expect(desk.progress.current.versions == 2)
    }

    /// tool.A.json, a part of another tool's snapshot: `count` records written as ``element(_:edit:)``
    /// writes them, with ids in part A, those in `edited` edited a second time.
    static func part(count: Int, generation: Int64, edited: Set<Int> = []) -> String {
        let records = (0..<count).map { n in
            element(n, edit: edited.contains(n) ? 2 : 1).replacingOccurrences(of: id(n), with: partID(n))
        }
        return #"{"format": 2, "device": "tool", "part": "A", "generation": \#(generation), "records": [\#(records.joined(separator: ","))]}"#
    }

    static func partID(_ n: Int) -> String { String(format: "A%07X-0000-4000-8000-%012d", n, n) }

    @Test("another tool's part: each change of it, the first one too, reads only what changed")
    func partChangeReadsWhatChanged() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let count = 200
        try sandbox.write("tool.A.json", Self.part(count: count, generation: 1))
        let desk = try sandbox.device("desk")
        #expect(try desk.merge().added == count)

        // A first merge reads parts by id, then keeps the digests of the elements that are not
        // the lines it stores (here every one: another tool spells records its own way), so the
        // first change reads the changed record alone
        try sandbox.write("tool.A.json", Self.part(count: count, generation: 2, edited: [5]))
        #expect(try desk.merge().changed == 1)
        #expect(desk.progress.current.versions == 1)

        // And so does the next change
        try sandbox.write("tool.A.json", Self.part(count: count, generation: 3, edited: [5, 150]))
        let second = try desk.merge()
        #expect(second.changed == 1 && second.added == 0)
        #expect(desk.progress.current.versions == 1)
        let held = try #require(try desk.store.reading { try $0.record(RecordID(Self.partID(150))!) })
        #expect(held.version.fields["note"] == .string("record 150, edit 2, ünïcode"))

        // And reading everything again reads every record
        _ = try desk.merge(rereadAll: true)
        #expect(desk.progress.current.versions == count)
    }

    static func id(_ n: Int) -> String {
        String(format: "%08X-0000-4000-8000-%012d", UInt32(truncatingIfNeeded: UInt64(n + 1) &* 2_654_435_761), n)
    }
}
