import Foundation
import GRDB
import SnapshotFormat
@testable import SyncStore
import Testing

/// Each migration after the first: open a database written at the previous version, migrate,
/// and check that every row survives.
@Suite("Store migrations")
struct MigrationTests {
    @Test("every migration is registered by name, in order")
    func names() throws {
        let store = try SyncStore()
        #expect(
            try store.appliedMigrations() == [
                "v1: versions, records, sources, publications", "v2: source warnings apart from problems",
                "v3: each record's published line", "v4: publications adopted from another writer",
                "v5: one row per record, digests of each source's records", "v6: each record's line digest",
                "v7: no index on record type", "v8: format 2 parts", "v9: trusted keys",
                "v10: merged elements of whole snapshots", "v11: the count of records in conflict, kept",
                "v12: the key this device's files are signed with", "v13: the size of each file this device wrote",
            ])
    }

    @Test("v2 keeps every row a v1 database holds, and adds the source warning column")
    func v1ToV2() throws {
        // Given a database written at v1 with records, conflicts, sources and publications
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("store.sqlite")
        let record = Self.recordWithConflict()
        do {
            let old = try SyncStore(path: path, upTo: "v1: versions, records, sources, publications")
            #expect(try old.appliedMigrations() == ["v1: versions, records, sources, publications"])
            try old.transaction { session in
                try session.claim(for: DeviceID("laptop")!, at: Timestamp(milliseconds: 1))
                try Self.saveBeforeV3(record, in: session)
                var source = StoredSource(
                    name: "phone.json", fileSystemDevice: 1, inode: 2, size: 3, modifiedNanos: 4, changedNanos: 5, lastSeenAt: 6)
                source.device = "phone"
                source.generation = 7
                source.lastProblem = "1 record(s) rejected"
                try Self.saveV1(source, in: session)
                try session.db.execute(
                    sql: "INSERT INTO publication (generation, contentDigest, fileDigest, writtenAt, isPublished) VALUES (3, 'c', 'f', 9, 1)")
            }
        }

        // When the current code opens it
        let store = try SyncStore(path: path)

        // Then it is migrated and every row is there, unchanged
        #expect(try store.appliedMigrations().count == 13)
        try store.reading { session in
            #expect(try session.owner() == DeviceID("laptop"))
            #expect(try session.record(record.id) == record)
            let source = try #require(try session.source(named: "phone.json"))
            #expect(source.generation == 7 && source.inode == 2 && source.lastProblem == "1 record(s) rejected")
            #expect(source.lastWarning == nil)
            #expect(try session.writtenFile(part: .whole, generation: 3)?.isLegacyDigest == true)
            #expect(try session.ownParts().map(\.generation) == [3])
            #expect(try session.counts().inConflict == 1)
        }
    }

    @Test("v3 keeps every row a v2 database holds, and publishes records written before it")
    func v2ToV3() throws {
        // Given a database written at v2 holding a record with a conflict (no stored line)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("store.sqlite")
        let record = Self.recordWithConflict()
        do {
            let old = try SyncStore(path: path, upTo: "v2: source warnings apart from problems")
            try old.transaction { session in
                try Self.saveBeforeV3(record, in: session)
            }
        }

        // When the current code opens it
        let store = try SyncStore(path: path)

        // Then the record is intact and its published line is its normal form
        try store.reading { session in
            #expect(try session.record(record.id) == record)
            var lines: [[UInt8]] = []
            try session.forEachPublishedLine { lines.append(Array($0)) }
            #expect(lines == [JSONValue.object(record.normalForm).interchangeBytes])
        }
    }

    @Test("v4 keeps every publication a v3 database holds, none of them adopted (as files written since v8)")
    func v3ToV4() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("store.sqlite")
        do {
            let old = try SyncStore(path: path, upTo: "v3: each record's published line")
            try old.transaction { session in
                try session.db.execute(
                    sql: "INSERT INTO publication (generation, contentDigest, fileDigest, writtenAt, isPublished) VALUES (7, 'c', 'f', 9, 1)")
            }
        }
        let store = try SyncStore(path: path)
        let written = try store.reading { try $0.writtenFile(part: .whole, generation: 7) }
        #expect(
            written
                == WrittenFile(part: "", generation: 7, fileDigest: "f", writtenAt: 9, isAdopted: false, isLegacyDigest: true))
    }

    @Test("v5 keeps every record a v4 database holds, as its line alone, and drops the version rows")
    func v4ToV5() throws {
        // Given a database written at v4 with two records: one saved with its line (as v3 and v4
        // wrote them), one with version rows only (written before v3, never rewritten)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("store.sqlite")
        let withLine = Self.recordWithConflict()
        var withoutLine = ReadOnly.Record(
            version: ReadOnly.Version(
                id: RecordID("00000000-0000-4000-8000-000000000001")!, type: "Note", schemaVersion: 3,
                lastModified: Timestamp(milliseconds: 1_700_000_000_000), modifiedBy: DeviceID("tablet"),
                versionVector: VersionVector([DeviceID("tablet")!: 4]), deleted: true))
        withoutLine.version.unknownKeys = JSONObject([("zeta", .array([.number(1e20), .string("é")]))])
        do {
            let old = try SyncStore(path: path, upTo: "v4: publications adopted from another writer")
            try old.transaction { session in
                try Self.saveBeforeV3(withLine, in: session)
                try session.db.execute(
                    sql: "UPDATE record SET line = ? WHERE id = ?",
                    arguments: [Data(JSONValue.object(withLine.normalForm).interchangeBytes), withLine.id.rawValue])
                try Self.saveBeforeV3(withoutLine, in: session)
            }
        }

        // When the current code opens it
        let store = try SyncStore(path: path)

        // Then both records read back unchanged, each line is its normal form, and the version table is gone
        try store.reading { session in
            #expect(try session.record(withLine.id) == withLine)
            #expect(try session.record(withoutLine.id) == withoutLine)
            var lines: [[UInt8]] = []
            try session.forEachPublishedLine { lines.append(Array($0)) }
            #expect(
                lines == [withoutLine, withLine].map { JSONValue.object($0.normalForm).interchangeBytes })
            #expect(try session.records().map(\.id) == [withoutLine.id, withLine.id])
            #expect(try session.counts() == RecordCounts(live: 1, deleted: 1, inConflict: 1, benignOnly: 0))
            #expect(try session.db.tableExists("version") == false)
        }
    }

    @Test("v6 gives every record written at v5 its line digest, and a line changed by another program loses it")
    func v5ToV6() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("store.sqlite")
        let record = Self.recordWithConflict()
        let line = JSONValue.object(record.normalForm).interchangeBytes
        do {
            let old = try SyncStore(path: path, upTo: "v5: one row per record, digests of each source's records")
            try old.transaction { session in
                try session.db.execute(
                    sql: """
                        INSERT INTO record (id, type, deleted, unresolvedConflicts, conflicts, changedAt, line)
                        VALUES (?, ?, 0, 1, 1, 5, ?)
                        """,
                    arguments: [record.id.rawValue, record.version.type, Data(line)])
            }
        }
        let store = try SyncStore(path: path)
        let expected = line.withUnsafeBytes { LineDigest.of($0) }
        func digests() throws -> [[UInt8]] {
            try store.reading { session in
                var found: [[UInt8]] = []
                try session.forEachLineDigest { found.append(Array($0)) }
                return found
            }
        }
        #expect(try digests() == [expected])
        let stored = try store.reading { try Data.fetchOne($0.db, sql: "SELECT lineDigest FROM record") }
        #expect(stored.map { [UInt8]($0) } == expected)

        // Another program rewrites the line without the digest: the trigger clears it, and the
        // digest read is the new line's.
        let changed = Array(String(decoding: line, as: UTF8.self).replacingOccurrences(of: "phone", with: "tablet").utf8)
        try store.transaction { session in
            try session.db.execute(sql: "UPDATE record SET line = ?", arguments: [Data(changed)])
        }
        #expect(try store.reading { try Data.fetchOne($0.db, sql: "SELECT lineDigest FROM record") } == nil)
        #expect(try digests() == [changed.withUnsafeBytes { LineDigest.of($0) }])
    }

    @Test("v7 keeps every record a v6 database holds and drops the type index; listing by type still works")
    func v6ToV7() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("store.sqlite")
        let record = Self.recordWithConflict()
        do {
            let old = try SyncStore(path: path, upTo: "v6: each record's line digest")
            try old.transaction { try $0.save(record, at: Timestamp(milliseconds: 5), isNew: true) }
        }
        let store = try SyncStore(path: path)
        try store.reading { session in
            #expect(try session.record(record.id) == record)
            #expect(try session.records(type: record.version.type) == [record])
            #expect(try session.records(type: "Other").isEmpty)
            #expect(try session.counts() == RecordCounts(live: 1, deleted: 0, inConflict: 1, benignOnly: 0))
            let indexes = try String.fetchAll(session.db, sql: "SELECT name FROM sqlite_master WHERE type = 'index'")
            #expect(!indexes.contains("index_record_on_type"))
        }
    }

    @Test("v9 keeps every part and source a v8 database holds, marks every part to be published again (signed), and trusts no key")
    func v8ToV9() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("store.sqlite")
        do {
            let old = try SyncStore(path: path, upTo: "v8: format 2 parts")
            try old.transaction { session in
                try session.replaceOwnParts(
                    removing: [],
                    saving: [
                        OwnPart(prefix: "0", generation: 4, contentDigest: "a", bytes: 10, records: 1, isPublished: true),
                        OwnPart(prefix: "1", generation: 5, contentDigest: "b", bytes: 20, records: 2, isPublished: true),
                    ])
                var source = StoredSource(
                    name: "phone.json", fileSystemDevice: 1, inode: 2, size: 3, modifiedNanos: 4, changedNanos: 5, lastSeenAt: 6)
                source.device = "phone"
                try session.db.execute(
                    sql: """
                        INSERT INTO source (name, device, fileSystemDevice, inode, size, modifiedNanos, changedNanos,
                                            lastSeenAt, present)
                        VALUES (?, ?, 1, 2, 3, 4, 5, 6, 1)
                        """, arguments: [source.name, source.device])
            }
        }
        let store = try SyncStore(path: path)
        try store.reading { session in
            let parts = try session.ownParts()
            #expect(parts.map(\.prefix) == ["0", "1"] && parts.map(\.generation) == [4, 5])
            #expect(parts.allSatisfy { !$0.isPublished })
            let source = try #require(try session.source(named: "phone.json"))
            #expect(source.device == "phone" && source.inode == 2 && !source.isUntrusted)
            #expect(try session.trustedKeys().isEmpty)
        }
    }

    @Test("v10 keeps what a v9 database holds; the merged elements of a whole snapshot are kept, replaced, and forgotten with the file")
    func v9ToV10() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("store.sqlite")
        do {
            let old = try SyncStore(path: path, upTo: "v9: trusted keys")
            try old.transaction { session in
                var source = StoredSource(
                    name: "phone.json", fileSystemDevice: 1, inode: 2, size: 3, modifiedNanos: 4, changedNanos: 5, lastSeenAt: 6)
                source.device = "phone"
                try session.save(source)
            }
        }
        let store = try SyncStore(path: path)
        let first = (0..<32).map { UInt8($0) }
        try store.transaction { session in
            #expect(try session.source(named: "phone.json")?.device == "phone")
            var seen: [[UInt8]] = []
            try session.forEachMergedElement(of: "phone.json") { seen.append(Array($0)) }
            #expect(seen.isEmpty)
            try session.saveMergedElements(first, of: "phone.json")
            try session.forEachMergedElement(of: "phone.json") { seen.append(Array($0)) }
            #expect(seen == [Array(first[0..<16]), Array(first[16..<32])])
            // Saved again: replaced, not added to
            try session.saveMergedElements(Array(first[16..<32]), of: "phone.json")
            seen = []
            try session.forEachMergedElement(of: "phone.json") { seen.append(Array($0)) }
            #expect(seen == [Array(first[16..<32])])
            // The file gone from the folder: forgotten
            try session.markAbsent(except: [])
            seen = []
            try session.forEachMergedElement(of: "phone.json") { seen.append(Array($0)) }
            #expect(seen.isEmpty)
        }
    }

    @Test("v13 keeps every written file a v12 database holds, without a size; the largest published file of each part over a size is found, adopted ones left out")
    func v12ToV13() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("store.sqlite")
        do {
            let old = try SyncStore(path: path, upTo: "v12: the key this device's files are signed with")
            try old.transaction { session in
                try session.db.execute(
                    sql: """
                        INSERT INTO writtenFile (part, generation, fileDigest, writtenAt, isAdopted, isLegacyDigest)
                        VALUES ('3', 4, 'f', 9, 0, 0)
                        """)
            }
        }
        let store = try SyncStore(path: path)
        try store.transaction { session in
            #expect(
                try session.writtenFile(part: PartPrefix("3")!, generation: 4)
                    == WrittenFile(part: "3", generation: 4, fileDigest: "f", writtenAt: 9))
            #expect(try session.largestWrittenFiles(largerThan: 0).isEmpty)
            try session.recordWritten(WrittenFile(part: "3", generation: 5, fileDigest: "g", writtenAt: 10, bytes: 700))
            try session.recordWritten(WrittenFile(part: "3", generation: 6, fileDigest: "h", writtenAt: 11, bytes: 90))
            try session.recordWritten(WrittenFile(part: "", generation: 6, fileDigest: "i", writtenAt: 11, bytes: 500))
            try session.recordWritten(
                WrittenFile(part: "4", generation: 6, fileDigest: "j", writtenAt: 11, isAdopted: true, bytes: 900))
            let largest = try session.largestWrittenFiles(largerThan: 100).sorted { $0.bytes < $1.bytes }
            #expect(largest.map(\.part) == [.whole, PartPrefix("3")!] && largest.map(\.bytes) == [500, 700], "\(largest)")
        }
    }

    @Test("the largest written files are found through the index on their sizes, and still found when someone dropped it")
    func largestWrittenFilesWithoutTheirIndex() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SyncStore(path: directory.path("store.sqlite"))
        try store.transaction { session in
            try session.recordWritten(WrittenFile(part: "3", generation: 5, fileDigest: "g", writtenAt: 10, bytes: 700))
            try session.recordWritten(WrittenFile(part: "3", generation: 6, fileDigest: "h", writtenAt: 11, bytes: 90))
            let plan = try Row.fetchAll(
                session.db, sql: "EXPLAIN QUERY PLAN " + StoreSession.largestWrittenFilesQuery, arguments: [100]
            ).map { $0["detail"] as String }.joined(separator: " | ")
            #expect(plan.contains("USING INDEX writtenFileBytes"), "\(plan)")
            // An app or the sqlite3 shell dropped the index: every pass asks, so the query must still work.
            try session.db.execute(sql: "DROP INDEX writtenFileBytes")
            let largest = try session.largestWrittenFiles(largerThan: 100)
            #expect(largest.map(\.part) == [PartPrefix("3")!] && largest.map(\.bytes) == [700], "\(largest)")
        }
    }

    /// Writes a record with only the columns v1 and v2 had (no published line).
    static func saveBeforeV3(_ record: ReadOnly.Record, in session: StoreSession) throws {
        for (position, version) in ([record.version] + record.conflicts).enumerated() {
            try StoredVersion(version, position: position).insert(session.db)
        }
        try session.db.execute(
            sql: """
                INSERT INTO record (id, type, deleted, unresolvedConflicts, conflicts, changedAt)
                VALUES (?, ?, ?, ?, ?, 5)
                """,
            arguments: [
                record.id.rawValue, record.version.type, record.version.deleted, record.unresolvedConflicts.count,
                record.conflicts.count,
            ])
    }

    /// Writes a source row with only the columns v1 had.
    static func saveV1(_ source: StoredSource, in session: StoreSession) throws {
        try session.db.execute(
            sql: """
                INSERT INTO source (name, device, role, generation, highestGeneration, fileSystemDevice, inode, size,
                                    modifiedNanos, changedNanos, lastMergedAt, lastSeenAt, lastProblem, present)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                source.name, source.device, source.role, source.generation, source.highestGeneration,
                source.fileSystemDevice, source.inode, source.size, source.modifiedNanos, source.changedNanos,
                source.lastMergedAt, source.lastSeenAt, source.lastProblem, source.present,
            ])
    }

    static func recordWithConflict() -> ReadOnly.Record {
        let id = RecordID("3F2504E0-4F89-41D3-9A0C-0305E82C3301")!
        var fields = JSONObject()
        fields["name"] = .string("Bananas ü")
        fields["big"] = .number(1e20)
        var unknown = JSONObject()
        unknown["x-future"] = .array([.bool(true), .null])
        let winner = ReadOnly.Version(
            id: id, type: "Item", schemaVersion: 2, lastModified: Timestamp(milliseconds: 2_000), modifiedBy: DeviceID("phone"),
            versionVector: VersionVector([DeviceID("phone")!: 1]), fields: fields, unknownKeys: unknown)
        var loser = winner
        loser.modifiedBy = DeviceID("laptop")
        loser.lastModified = Timestamp(milliseconds: 1_000)
        loser.versionVector = VersionVector([DeviceID("laptop")!: 1])
        loser.fields["name"] = .string("Plantains")
        return ReadOnly.Record(version: winner, conflicts: [loser])
    }
}
