import SnapshotFormat
@testable import SyncStore
import Testing

@Suite("Store: records")
struct StoreRecordTests {
    /// A record with every kind of value the store must keep verbatim.
    static func richRecord() -> ReadOnly.Record {
        let id = Sample.id(1)
        let bigArray = "[" + (0..<2_000).map { "\($0)" }.joined(separator: ",") + "]"
        let fields = """
            {"name": "Bananes \u{1F34C} naïve 日本語", "e\u{301}": "NFD key", "\u{E9}": "NFC key",
             "nested": {"deeper": [{"ünïcödé": "\u{2028}\\u0000\u{FFFF}"}, null, true, false]},
             "big": 1e20, "tenth": 0.1, "negativeZero": -0, "tiny": 5e-324, "max": 9007199254740991,
             "min": -9007199254740991, "many": \(bigArray), "empty": {}, "none": []}
            """
        let version = Sample.version(
            id, type: "Café \u{2615}", by: "laptop", vector: ["laptop": 3, "phone": 1], offset: 5, fields: fields,
            unknown: #"{"x-future": {"k": [1, "two", null]}, "rank": 2.5}"#, schema: 7)
        let conflict = Sample.version(
            id, type: "Café \u{2615}", by: "phone", vector: ["laptop": 2, "phone": 2], offset: 3,
            fields: #"{"name": "Apples"}"#, unknown: #"{"x-other": "kept"}"#)
        var legacy = Sample.version(id, type: "Café \u{2615}", fields: #"{"name": "legacy"}"#)
        legacy.lastModified = nil
        legacy.modifiedBy = nil
        legacy.versionVector = VersionVector()
        return ReadOnly.Record(version: version, conflicts: [conflict, legacy])
    }

    @Test("A record with conflicts, unknown keys, unicode and unusual numbers reads back equal")
    func richRoundTrip() throws {
        // Given a record with every kind of value
        let store = try SyncStore()
        let record = Self.richRecord()
        // When it is saved and read back
        try store.transaction { try $0.save(record, at: Sample.now) }
        let read = try #require(try store.reading { try $0.record(record.id) })
        // Then it is the same record, value for value, conflicts in order
        #expect(read == record)
        #expect(read.conflicts.map(\.modifiedBy) == [DeviceID("phone"), nil])
        #expect(read.version.fields["big"] == .number(1e20))
        #expect(read.version.fields["tenth"] == .number(0.1))
        #expect(read.version.fields["tiny"] == .number(.leastNonzeroMagnitude))
        #expect(read.version.fields["e\u{301}"] == .string("NFD key"))
        #expect(read.version.fields["\u{E9}"] == .string("NFC key"))
        guard case .array(let many)? = read.version.fields["many"] else {
            Issue.record("the large array was not kept")
            return
        }
        #expect(many.count == 2_000 && many.last == .number(1_999))
        #expect(JSONValue.object(read.normalForm).canonicalBytes == JSONValue.object(record.normalForm).canonicalBytes)
    }

    @Test("Saving a record again replaces all its versions: no stale conflict rows remain")
    func saveReplaces() throws {
        let store = try SyncStore()
        let record = Self.richRecord()
        try store.transaction { try $0.save(record, at: Sample.now) }
        // When the record is saved again without conflicts
        let resolved = ReadOnly.Record(
            version: Sample.version(record.id, type: record.version.type, vector: ["laptop": 4, "phone": 2], offset: 9))
        try store.transaction { try $0.save(resolved, at: Sample.now) }
        // Then only the new version is held
        let read = try store.reading { try $0.record(record.id) }
        #expect(read == resolved)
        #expect(try store.reading { try $0.counts() }.asArray == [1, 0, 0, 0])
    }

    @Test("An unknown record reads as nil")
    func unknownRecord() throws {
        let store = try SyncStore()
        try store.transaction { try $0.save(ReadOnly.Record(version: Sample.version(Sample.id(1))), at: Sample.now) }
        #expect(try store.reading { try $0.record(Sample.id(2)) } == nil)
    }

    @Test("forEachRecord visits records in id order, each with its conflicts in order, whatever the save order")
    func forEachOrder() throws {
        let store = try SyncStore()
        let ids = [7, 3, 250, 1, 42, 0xABC, 9].map(Sample.id)
        try store.transaction { session in
            for (index, id) in ids.enumerated() {
                let conflicts = (0..<(index % 3)).map {
                    Sample.version(id, by: "peer\($0)", vector: ["peer\($0)": 1], offset: -Int64($0) - 1)
                }
                try session.save(ReadOnly.Record(version: Sample.version(id, offset: 10), conflicts: conflicts), at: Sample.now)
            }
        }
        var visited: [ReadOnly.Record] = []
        try store.reading { try $0.forEachRecord { visited.append($0) } }
        #expect(visited.map(\.id) == ids.sorted())
        #expect(visited.map(\.id.rawValue) == ids.map(\.rawValue).sorted())
        for record in visited {
            let index = ids.firstIndex(of: record.id)!
            #expect(record.conflicts.map(\.modifiedBy?.rawValue) == (0..<(index % 3)).map { "peer\($0)" })
        }
        #expect(try store.reading { try $0.records() } == visited)
    }

    @Test("records(type:) returns only that type, by the current version's type, byte for byte")
    func recordsByType() throws {
        let store = try SyncStore()
        try store.transaction { session in
            try session.save(ReadOnly.Record(version: Sample.version(Sample.id(1), type: "Note")), at: Sample.now)
            try session.save(ReadOnly.Record(version: Sample.version(Sample.id(2), type: "ShoppingItem")), at: Sample.now)
            try session.save(ReadOnly.Record(version: Sample.version(Sample.id(3), type: "Note")), at: Sample.now)
            try session.save(ReadOnly.Record(version: Sample.version(Sample.id(4), type: "Caf\u{E9}")), at: Sample.now)
            try session.save(ReadOnly.Record(version: Sample.version(Sample.id(5), type: "Cafe\u{301}")), at: Sample.now)
        }
        let notes = try store.reading { try $0.records(type: "Note") }
        #expect(notes.map(\.id) == [Sample.id(1), Sample.id(3)])
        #expect(try store.reading { try $0.records(type: "ShoppingItem") }.map(\.id) == [Sample.id(2)])
        #expect(try store.reading { try $0.records(type: "Caf\u{E9}") }.map(\.id) == [Sample.id(4)])
        #expect(try store.reading { try $0.records(type: "Missing") }.isEmpty)
        #expect(try store.reading { try $0.records() }.count == 5)
    }

    @Test("counts tell live, deleted, in conflict and benign-only records apart; onlyUnresolved lists those in conflict")
    func counts() throws {
        let store = try SyncStore()
        let live = ReadOnly.Record(version: Sample.version(Sample.id(1), fields: #"{"a": 1}"#))
        let tombstone = ReadOnly.Record(version: Sample.version(Sample.id(2), deleted: true))
        let conflicted = ReadOnly.Record(
            version: Sample.version(Sample.id(3), by: "laptop", fields: #"{"a": 1}"#, schema: 1),
            conflicts: [Sample.version(Sample.id(3), by: "phone", vector: ["phone": 1], offset: -1, fields: #"{"a": 2}"#)])
        let benign = ReadOnly.Record(
            version: Sample.version(Sample.id(4), by: "laptop", fields: #"{"a": 1}"#),
            conflicts: [Sample.version(Sample.id(4), by: "phone", vector: ["phone": 1], offset: -1, fields: #"{"a": 1}"#)])
        let deletedInConflict = ReadOnly.Record(
            version: Sample.version(Sample.id(5), by: "laptop", deleted: true),
            conflicts: [Sample.version(Sample.id(5), by: "phone", vector: ["phone": 1], offset: -1, fields: #"{"a": 3}"#)])
        try store.transaction { session in
            for record in [live, tombstone, conflicted, benign, deletedInConflict] { try session.save(record, at: Sample.now) }
        }
        let counts = try store.reading { try $0.counts() }
        #expect(counts.asArray == [3, 2, 2, 1])
        let unresolved = try store.reading { try $0.records(onlyUnresolved: true) }
        #expect(unresolved.map(\.id) == [Sample.id(3), Sample.id(5)])
        let unresolvedNotes = try store.reading { try $0.records(type: "Note", onlyUnresolved: true) }
        #expect(unresolvedNotes.map(\.id) == [Sample.id(3), Sample.id(5)])
    }

    @Test("A transaction that throws saves nothing")
    func rollback() throws {
        struct Stop: Error {}
        let store = try SyncStore()
        #expect(throws: Stop.self) {
            try store.transaction { session in
                try session.save(ReadOnly.Record(version: Sample.version(Sample.id(1))), at: Sample.now)
                try session.save(Sample.source("laptop.json", inode: 1))
                throw Stop()
            }
        }
        #expect(try store.reading { try $0.records() }.isEmpty)
        #expect(try store.reading { try $0.sources() }.isEmpty)
    }
}

@Suite("Prefixes as ranges of stored ids")
struct PrefixRangeTests {
    @Test("a prefix's ids run from it to the next prefix of its length; the last of each length has no upper bound", arguments: [
        ("1234", "1235"), ("FFFE", "FFFF"), ("FFFF", nil), ("E", "F"), ("F", nil), ("0F", "10"), ("FF", nil), ("ABC", "ABD"),
    ] as [(String, String?)])
    func idRange(prefix: String, upper: String?) throws {
        let range = try #require(PartPrefix(prefix)).idRange
        #expect(range.lower == prefix)
        #expect(range.upper == upper)
    }
}
