import Foundation
import GRDB
import SnapshotFormat

/// The store seen from inside one transaction or read: methods named for what they mean.
public struct StoreSession {
    let db: Database

    // MARK: Identity

    /// The device this state directory belongs to, nil for a new store.
    public func owner() throws -> DeviceID? {
        guard let text = try String.fetchOne(db, sql: "SELECT device FROM identity WHERE singleton = 1") else {
            return nil
        }
        return DeviceID(text)
    }

    /// Records that this state directory belongs to `device` (a new store only).
    public func claim(for device: DeviceID, at now: Timestamp) throws {
        try db.execute(
            sql: "INSERT INTO identity (singleton, device, createdAt) VALUES (1, ?, ?)",
            arguments: [device.rawValue, now.milliseconds])
    }

    // MARK: Records

    /// The record as held: its current version and conflicts, nil when unknown.
    public func record(_ id: RecordID) throws -> ReadOnly.Record? {
        let statement = try db.cachedStatement(sql: "SELECT * FROM version WHERE recordID = ? ORDER BY position")
        return try Self.record(from: StoredVersion.fetchAll(statement, arguments: [id.rawValue]))
    }

    /// Replaces what is held for a record with `record`.
    ///
    /// - Parameter isNew: the store holds nothing for this record (skips removing old rows).
    public func save(_ record: ReadOnly.Record, at now: Timestamp, isNew: Bool = false) throws {
        // Cached prepared statements: a merge pass saves up to every record in one transaction.
        if !isNew {
            try db.cachedStatement(sql: "DELETE FROM version WHERE recordID = ?").execute(arguments: [
                record.id.rawValue
            ])
        }
        let insert = try db.cachedStatement(
            sql: """
                INSERT INTO version (recordID, position, type, schemaVersion, lastModified, modifiedBy,
                                     versionVector, deleted, fields, unknownKeys)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
        for (position, version) in ([record.version] + record.conflicts).enumerated() {
            let row = StoredVersion(version, position: position)
            try insert.execute(arguments: [
                row.recordID, row.position, row.type, row.schemaVersion, row.lastModified, row.modifiedBy,
                row.versionVector, row.deleted, row.fields, row.unknownKeys,
            ])
        }
        try db.cachedStatement(
            sql: """
                INSERT INTO record (id, type, deleted, unresolvedConflicts, conflicts, changedAt, line)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(id) DO UPDATE SET type = excluded.type, deleted = excluded.deleted,
                    unresolvedConflicts = excluded.unresolvedConflicts, conflicts = excluded.conflicts,
                    changedAt = excluded.changedAt, line = excluded.line
                """
        ).execute(arguments: [
            record.id.rawValue, record.version.type, record.version.deleted, record.unresolvedConflicts.count,
            record.conflicts.count, now.milliseconds, Data(JSONValue.object(record.normalForm).interchangeBytes),
        ])
    }

    /// Calls `body` with every record's published line (RFC 8785 bytes of its normal form with
    /// its conflicts), in id order, without building any record.
    public func forEachPublishedLine(_ body: ([UInt8]) throws -> Void) throws {
        let cursor = try Row.fetchCursor(db, sql: "SELECT id, line FROM record ORDER BY id")
        while let row = try cursor.next() {
            if let line: Data = row["line"] {
                try body([UInt8](line))
            } else if let id = RecordID(row["id"]), let record = try record(id) {
                // A row written before migration v3.
                try body(JSONValue.object(record.normalForm).interchangeBytes)
            }
        }
    }

    /// Whether the store holds no record at all (a cold merge need not look any up).
    public func isEmpty() throws -> Bool {
        try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM record") == 0
    }

    /// Every record, sorted by id, optionally only of one type or only those in conflict.
    public func records(type: String? = nil, onlyUnresolved: Bool = false) throws -> [ReadOnly.Record] {
        var records: [ReadOnly.Record] = []
        try forEachRecord(type: type, onlyUnresolved: onlyUnresolved) { records.append($0) }
        return records
    }

    /// Calls `body` with every record in id order, without holding them all in memory.
    public func forEachRecord(
        type: String? = nil, onlyUnresolved: Bool = false, _ body: (ReadOnly.Record) throws -> Void
    ) throws {
        var sql = "SELECT version.* FROM version JOIN record ON record.id = version.recordID"
        var conditions: [String] = []
        var arguments: StatementArguments = []
        if let type {
            conditions.append("record.type = ?")
            arguments += [type]
        }
        if onlyUnresolved { conditions.append("record.unresolvedConflicts > 0") }
        if !conditions.isEmpty { sql += " WHERE " + conditions.joined(separator: " AND ") }
        sql += " ORDER BY version.recordID, version.position"
        var pending: [StoredVersion] = []
        let cursor = try StoredVersion.fetchCursor(db, sql: sql, arguments: arguments)
        while let row = try cursor.next() {
            if let first = pending.first, first.recordID != row.recordID {
                if let record = try Self.record(from: pending) { try body(record) }
                pending.removeAll(keepingCapacity: true)
            }
            pending.append(row)
        }
        if let record = try Self.record(from: pending) { try body(record) }
    }

    /// How many records are live, deleted, and in conflict (with conflicts that need a person).
    public func counts() throws -> RecordCounts {
        let row = try Row.fetchOne(
            db,
            sql: """
                SELECT COUNT(*) FILTER (WHERE NOT deleted), COUNT(*) FILTER (WHERE deleted),
                       COUNT(*) FILTER (WHERE unresolvedConflicts > 0),
                       COUNT(*) FILTER (WHERE conflicts > unresolvedConflicts AND unresolvedConflicts = 0)
                FROM record
                """)!
        return RecordCounts(live: row[0], deleted: row[1], inConflict: row[2], benignOnly: row[3])
    }

    private static func record(from rows: [StoredVersion]) throws -> ReadOnly.Record? {
        guard let first = rows.first else { return nil }
        guard first.position == 0 else { throw StoreCorruption("record \(first.recordID) has no current version") }
        return ReadOnly.Record(version: try first.readOnly(), conflicts: try rows.dropFirst().map { try $0.readOnly() })
    }

    // MARK: Sources

    /// What is known of the file at `name` in the shared folder.
    public func source(named name: String) throws -> StoredSource? {
        try StoredSource.fetchOne(db, key: name)
    }

    /// Every file ever read from the shared folder, by name.
    public func sources() throws -> [StoredSource] {
        try StoredSource.order(Column("name")).fetchAll(db)
    }

    /// Saves what is known of a source file.
    public func save(_ source: StoredSource) throws {
        try source.upsert(db)
    }

    /// Marks every source not in `names` as absent from the folder (it is never forgotten).
    public func markAbsent(except names: Set<String>) throws {
        for source in try sources() where source.present && !names.contains(source.name) {
            // Only rows that change are written: an idle pass writes nothing.
            var absent = source
            absent.present = false
            try absent.update(db)
        }
    }

    // MARK: Publications

    /// The most recent file this device wrote or was about to write.
    public func latestPublication() throws -> StoredPublication? {
        try StoredPublication.order(Column("generation").desc).fetchOne(db)
    }

    /// The most recent file known to be in place.
    public func latestCompletedPublication() throws -> StoredPublication? {
        try StoredPublication.filter(Column("isPublished") == true).order(Column("generation").desc).fetchOne(db)
    }

    /// The file this device wrote with `generation`, if any.
    public func publication(generation: Int64) throws -> StoredPublication? {
        try StoredPublication.fetchOne(db, key: generation)
    }

    /// Whether this device has ever written a file.
    public func hasPublished() throws -> Bool {
        try StoredPublication.fetchCount(db) > 0
    }

    /// Records a file about to be written (before the rename, so a crash cannot hide it).
    public func recordIntent(_ publication: StoredPublication) throws {
        try publication.upsert(db)
    }

    /// Records that the file of `generation` is in place.
    public func markPublished(generation: Int64) throws {
        try db.execute(sql: "UPDATE publication SET isPublished = 1 WHERE generation = ?", arguments: [generation])
    }

    /// Forgets a file that could not be written.
    public func forgetIntent(generation: Int64) throws {
        _ = try StoredPublication.deleteOne(db, key: generation)
    }
}

/// How many records the store holds, by state.
public struct RecordCounts: Hashable, Sendable, Codable {
    /// Records whose current version is not a tombstone.
    public var live: Int
    /// Records whose current version is a tombstone.
    public var deleted: Int
    /// Records with conflicts that differ in content (need a person).
    public var inConflict: Int
    /// Records whose only conflicts are benign (same content).
    public var benignOnly: Int
}
