import Foundation
import GRDB
import SnapshotFormat
import SyncStore
import Testing

/// `StoreSession.NewRecords`: a first merge's inserts, saved `batchSize` rows per statement and
/// the rest by ``NewRecords/flush()``.
@Suite("Store: new records, several per statement")
struct NewRecordsTests {
    /// Record `n`: every third deleted, every fifth with a conflict (half of them differing in
    /// content, half not), types of several lengths.
    static func record(_ n: Int) -> ReadOnly.Record {
        let id = Sample.id(n)
        let type = ["Note", "Café \u{2615}", String(repeating: "t", count: n % 40 + 1)][n % 3]
        let fields = n % 3 == 0 ? "{}" : #"{"n": \#(n)}"#
        let version = Sample.version(id, type: type, offset: Int64(n), deleted: n % 3 == 0, fields: fields)
        guard n % 5 == 0 else { return ReadOnly.Record(version: version) }
        let other = Sample.version(
            id, type: type, by: "phone", offset: Int64(n) - 1, deleted: n % 3 == 0 && n % 10 == 0,
            fields: n % 10 == 0 ? fields : #"{"other": \#(n)}"#)
        return ReadOnly.Record(version: version, conflicts: [other])
    }

    /// Every column of every row, in id order.
    static func rows(_ path: String) throws -> [[DatabaseValue]] {
        try DatabaseQueue(path: path).read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT id, type, deleted, unresolvedConflicts, conflicts, changedAt, line, lineDigest
                    FROM record ORDER BY id
                    """
            ).map { Array($0.databaseValues) }
        }
    }

    @Test(
        "rows saved through NewRecords, in batches and one by one, are the rows save(isNew:) writes",
        arguments: [0, 1, 15, StoreSession.NewRecords.batchSize - 1, StoreSession.NewRecords.batchSize,
            StoreSession.NewRecords.batchSize + 1, 2 * StoreSession.NewRecords.batchSize + 7])
    func sameRows(count: Int) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let records = (0..<count).map(Self.record)

        let batched = try SyncStore(path: directory.path("batched.sqlite"))
        try batched.transaction { session in
            let inserts = try session.newRecords(at: Sample.now)
            for record in records { try inserts.insert(record, as: StoredLine(of: record)) }
            try inserts.flush()
        }
        let single = try SyncStore(path: directory.path("single.sqlite"))
        try single.transaction { session in
            for record in records { try session.save(record, at: Sample.now, isNew: true) }
        }

        let rows = try Self.rows(directory.path("batched.sqlite"))
        #expect(rows.count == count)
        // Both kinds of conflict are there when there are enough records
        #expect(count < 15 || records.contains { $0.conflicts.count > $0.unresolvedConflicts.count })
        #expect(count < 15 || records.contains { !$0.unresolvedConflicts.isEmpty })
        #expect(rows == (try Self.rows(directory.path("single.sqlite"))))
        for record in records {
            #expect(try batched.reading { try $0.record(record.id) } == record)
        }
    }

    @Test("an insert of a record the store holds fails, in a batch as alone, and the transaction saves nothing")
    func duplicateFails() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SyncStore(path: directory.path("store.sqlite"))
        for count in [StoreSession.NewRecords.batchSize, 3] {
            #expect(throws: DatabaseError.self) {
                try store.transaction { session in
                    let inserts = try session.newRecords(at: Sample.now)
                    for n in 0..<(count - 1) { try inserts.insert(Self.record(n), as: StoredLine(of: Self.record(n))) }
                    try inserts.insert(Self.record(0), as: StoredLine(of: Self.record(0)))
                    try inserts.flush()
                }
            }
        }
        #expect(try Self.rows(directory.path("store.sqlite")).isEmpty)
    }
}
