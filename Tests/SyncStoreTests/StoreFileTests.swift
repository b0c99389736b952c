import Foundation
import GRDB
import SnapshotFormat
@testable import SyncStore
import Testing

/// The rows of a database written by v1, and how to check them after reopening.
///
/// Each later migration's test follows this pattern: write a database exactly as the previous
/// release did (its schema from its migrations, its rows by plain SQL in its columns), reopen it
/// with the current code, and check that every row is still there.
enum V1Rows {
    static let records = [
        StoreRecordTests.richRecord(),
        ReadOnly.Record(version: Sample.version(Sample.id(2), deleted: true, unknown: #"{"x": [null]}"#)),
        ReadOnly.Record(
            version: Sample.version(Sample.id(3), by: "laptop", fields: #"{"n": 1}"#),
            conflicts: [Sample.version(Sample.id(3), by: "phone", vector: ["phone": 1], offset: -1, fields: #"{"n": 2}"#)]),
    ]

    static let sources: [StoredSource] = {
        var own = Sample.source("laptop.json", inode: 11, device: "laptop", generation: 4)
        own.lastMergedAt = Sample.now.milliseconds
        var gone = Sample.source("phone (1).json", inode: 12, device: "phone", generation: 1)
        gone.present = false
        gone.lastProblem = "a problem"
        return [own, gone, Sample.source("zzz.json", inode: 13)]
    }()

    static let publications: [(generation: Int64, contentDigest: String, fileDigest: String, writtenAt: Int64, isPublished: Bool)] = [
        (3, "c3", "f3", 30, true), (4, "c4", "f4", 40, false),
    ]

    /// Writes the rows in v1's columns into a database created with v1's migrations only.
    static func writeAsV1(path: String) throws {
        do { _ = try SyncStore(path: path, upTo: StoreFileTests.v1) }
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in
            try db.execute(
                sql: "INSERT INTO identity (singleton, device, createdAt) VALUES (1, 'laptop', ?)",
                arguments: [Sample.now.milliseconds])
            for record in records {
                for (position, version) in ([record.version] + record.conflicts).enumerated() {
                    let row = StoredVersion(version, position: position)
                    try db.execute(
                        sql: """
                            INSERT INTO version (recordID, position, type, schemaVersion, lastModified, modifiedBy,
                                                 versionVector, deleted, fields, unknownKeys)
                            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                            """,
                        arguments: [
                            row.recordID, row.position, row.type, row.schemaVersion, row.lastModified, row.modifiedBy,
                            row.versionVector, row.deleted, row.fields, row.unknownKeys,
                        ])
                }
                try db.execute(
                    sql: "INSERT INTO record (id, type, deleted, unresolvedConflicts, conflicts, changedAt) VALUES (?, ?, ?, ?, ?, ?)",
                    arguments: [
                        record.id.rawValue, record.version.type, record.version.deleted, record.unresolvedConflicts.count,
                        record.conflicts.count, Sample.now.milliseconds,
                    ])
            }
            for source in sources {
                try db.execute(
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
            for publication in publications {
                try db.execute(
                    sql: "INSERT INTO publication (generation, contentDigest, fileDigest, writtenAt, isPublished) VALUES (?, ?, ?, ?, ?)",
                    arguments: [
                        publication.generation, publication.contentDigest, publication.fileDigest, publication.writtenAt,
                        publication.isPublished,
                    ])
            }
        }
    }

    static func check(_ store: SyncStore) throws {
        try store.reading { (session: StoreSession) throws in
            #expect(try session.owner() == Sample.device("laptop"))
            #expect(try session.records() == records.sorted { $0.id < $1.id })
            #expect(try session.counts().asArray == [2, 1, 2, 0])
            #expect(try session.sources() == sources.sorted { $0.name < $1.name })
            // Since v8: the files written, and the layout of a format 1 store (its whole file, as last written).
            #expect(
                try session.writtenFile(part: .whole, generation: 3)
                    == WrittenFile(part: "", generation: 3, fileDigest: "f3", writtenAt: 30, isLegacyDigest: true))
            #expect(try session.writtenFile(part: .whole, generation: 4)?.fileDigest == "f4")
            #expect(
                try session.ownParts()
                    == [OwnPart(prefix: "", generation: 4, contentDigest: "c4", bytes: -1, records: 3, isPublished: false)])
        }
    }
}

@Suite("Store: the database file and its migrations")
struct StoreFileTests {
    static let v1 = "v1: versions, records, sources, publications"

    @Test("Every migration is listed by name, oldest first, in memory and on disk; v1 is the first")
    func migrationsListed() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let inMemory = try SyncStore().appliedMigrations()
        #expect(inMemory.first == Self.v1)
        #expect(try SyncStore(path: directory.path("store.sqlite")).appliedMigrations() == inMemory)
        #expect(try SyncStore(path: directory.path("old.sqlite"), upTo: Self.v1).appliedMigrations() == [Self.v1])
    }

    @Test("The store file is in WAL mode")
    func walMode() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("store.sqlite")
        let store = try SyncStore(path: path)
        try store.transaction { try $0.save(ReadOnly.Record(version: Sample.version(Sample.id(1))), at: Sample.now) }
        // The SQLite header's file format write and read versions (bytes 18 and 19) are 2 in WAL mode.
        let header = try #require(FileManager.default.contents(atPath: path))
        #expect(header.count >= 100)
        #expect(Array(header.prefix(16)) == Array("SQLite format 3\0".utf8))
        #expect(header[18] == 2 && header[19] == 2, "journal mode is not WAL: header bytes 18-19 are \(header[18]), \(header[19])")
        #expect(FileManager.default.fileExists(atPath: path + "-wal"))
        let queue = try DatabaseQueue(path: path)
        #expect(try queue.read { try String.fetchOne($0, sql: "PRAGMA journal_mode") } == "wal")
        withExtendedLifetime(store) {}
    }

    @Test("A database written at v1 and opened by the current code keeps every row")
    func reopenKeepsRows() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("store.sqlite")
        // Given a database written at v1
        try V1Rows.writeAsV1(path: path)
        // When the current code opens it (running every later migration)
        let reopened = try SyncStore(path: path)
        // Then every row is still there, and every migration is applied
        try V1Rows.check(reopened)
        #expect(try reopened.appliedMigrations() == (try SyncStore().appliedMigrations()))
        // And it still is after writing and opening once more
        try reopened.transaction { try $0.save(ReadOnly.Record(version: Sample.version(Sample.id(9))), at: Sample.now) }
        let again = try SyncStore(path: path)
        #expect(try again.reading { try $0.records() }.count == 4)
        #expect(try again.reading { try $0.sources() } == V1Rows.sources.sorted { $0.name < $1.name })
    }

    @Test("Two stores on one file see each other's committed writes")
    func twoConnections() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("store.sqlite")
        let first = try SyncStore(path: path)
        let second = try SyncStore(path: path)
        try first.transaction { try $0.save(ReadOnly.Record(version: Sample.version(Sample.id(5))), at: Sample.now) }
        #expect(try second.reading { try $0.record(Sample.id(5)) }?.version.type == "Note")
    }

    @Test("A file that is not a database is refused with an error, not overwritten")
    func notADatabase() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("store.sqlite")
        let garbage = Data(repeating: 0x41, count: 8_192)
        try garbage.write(to: URL(fileURLWithPath: path))
        #expect(throws: (any Error).self) { _ = try SyncStore(path: path) }
        #expect(FileManager.default.contents(atPath: path) == garbage)
    }
}
