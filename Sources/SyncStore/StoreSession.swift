import Crypto
import Foundation
import GRDB
import GRDBSQLite
import SnapshotFormat

/// The store seen from inside one transaction or read: methods named for what they mean.
public struct StoreSession {
    let db: Database
    /// The record prefixes this transaction changed (nil in a read).
    let changes: ChangedPrefixes?
    /// How this transaction moved the number of records in conflict (nil in a read).
    let conflictTally: ConflictTally?

    init(db: Database, changes: ChangedPrefixes? = nil, conflictTally: ConflictTally? = nil) {
        self.db = db
        self.changes = changes
        self.conflictTally = conflictTally
    }

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
        let statement = try db.cachedStatement(sql: "SELECT line FROM record WHERE id = ?")
        statement.setUncheckedArguments([id.rawValue])
        var line: [UInt8]?
        try withRawRows(statement) { line = Self.blob($0, 0) }
        return try line.map { try Self.record(fromLine: $0, id: id.rawValue) }
    }

    /// Replaces what is held for a record with `record`.
    ///
    /// - Parameter isNew: the store holds nothing for this record (a plain insert).
    /// - Returns: the line stored for the record (its published form) and its digest.
    @discardableResult
    public func save(_ record: ReadOnly.Record, at now: Timestamp, isNew: Bool = false) throws -> StoredLine {
        let line = record.interchangeLine
        let stored = StoredLine(line: line, digest: line.withUnsafeBytes { LineDigest.of($0) })
        try save(record, as: stored, at: now, isNew: isNew)
        return stored
    }

    /// Saves `record` with its line and digest already made (``ReadOnly/Record/interchangeLine``,
    /// ``LineDigest``), as ``save(_:at:isNew:)`` does.
    public func save(_ record: ReadOnly.Record, as stored: StoredLine, at now: Timestamp, isNew: Bool = false) throws {
        // One row per record, through a cached prepared statement: a merge pass saves up to
        // every record in one transaction.
        if let conflictTally {
            if isNew {
                conflictTally.add(before: false, after: record.needsAPerson)
            } else if conflictTally.mayLookUp() {
                let statement = try db.cachedStatement(
                    sql: "SELECT conflicts > 0 AND unresolvedConflicts > 0 FROM record WHERE id = ?")
                statement.setUncheckedArguments([record.id.rawValue])
                var before = false
                try withRawRows(statement) { before = sqlite3_column_int64($0, 0) != 0 }
                conflictTally.add(before: before, after: record.needsAPerson)
            } else {
                conflictTally.forget()
            }
        }
        let statement = try db.cachedStatement(sql: isNew ? Self.insertRecord : Self.upsertRecord)
        try saveRow(record, as: stored, at: now, through: statement)
    }

    /// Records the store holds none of (a first merge saves every record), saved
    /// ``batchSize`` rows per statement: see ``newRecords(at:)``.
    ///
    /// One statement of many rows opens the table's and its indexes' cursors once for all of
    /// them; one row per statement spent about half of each insert on that (100,000 rows of the
    /// store's shape into an empty table, a C program on the same libsqlite3: about 200 ms one by
    /// one, 130 ms sixteen at a time, 100 ms sixty-four at a time, 92 ms at 128).
    public final class NewRecords {
        private let session: StoreSession
        private let now: Timestamp
        /// Each waiting row's id, type, line and digest, back to back: bound where they are.
        private var bytes: [UInt8] = []
        private var rows: [Row] = []

        /// Rows saved by one statement.
        public static let batchSize = 64

        private struct Row {
            var id: Range<Int>
            var type: Range<Int>
            var line: Range<Int>
            var digest: Range<Int>
            var deleted: Bool
            var unresolvedConflicts: Int64
            var conflicts: Int64
        }

        fileprivate init(session: StoreSession, now: Timestamp) {
            self.session = session
            self.now = now
            rows.reserveCapacity(Self.batchSize)
        }

        /// Saves `record`, which the store does not hold, with its line and digest: at once or
        /// with the next rows (``flush()`` saves the last ones).
        public func insert(_ record: ReadOnly.Record, as stored: StoredLine) throws {
            session.changes?.insert(record.id)
            session.conflictTally?.add(before: false, after: record.needsAPerson)
            func append(_ more: UnsafeBufferPointer<UInt8>) -> Range<Int> {
                bytes.append(contentsOf: more)
                return (bytes.count - more.count)..<bytes.count
            }
            var type = record.version.type
            rows.append(
                Row(
                    id: record.id.withWrittenBytes(append), type: type.withUTF8(append),
                    line: stored.line.withUnsafeBufferPointer(append), digest: stored.digest.withUnsafeBufferPointer(append),
                    deleted: record.version.deleted, unresolvedConflicts: Int64(record.unresolvedConflicts.count),
                    conflicts: Int64(record.conflicts.count)))
            if rows.count == Self.batchSize { try flush() }
        }

        /// Saves the rows still waiting. Call it once the last record is in, inside the
        /// transaction: rows not flushed are not saved.
        public func flush() throws {
            defer {
                rows.removeAll(keepingCapacity: true)
                bytes.removeAll(keepingCapacity: true)
            }
            if rows.count == Self.batchSize {
                try save(rows[...], through: try session.db.cachedStatement(sql: StoreSession.insertBatch))
            } else if !rows.isEmpty {
                let statement = try session.db.cachedStatement(sql: StoreSession.insertRecord)
                for index in rows.indices { try save(rows[index...index], through: statement) }
            }
        }

        /// Binds `batch` (as many rows as `statement` has) where their bytes are, and runs it.
        private func save(_ batch: ArraySlice<Row>, through statement: Statement) throws {
            let raw = statement.sqliteStatement
            sqlite3_reset(raw)
            let code = bytes.withUnsafeBufferPointer { bytes in
                func slice(_ range: Range<Int>) -> UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(rebasing: bytes[range]) }
                for (position, row) in batch.enumerated() {
                    StoreSession.bindRow(
                        id: slice(row.id), type: slice(row.type), deleted: row.deleted,
                        unresolvedConflicts: row.unresolvedConflicts, conflicts: row.conflicts, changedAt: now,
                        line: UnsafeRawBufferPointer(slice(row.line)), digest: UnsafeRawBufferPointer(slice(row.digest)),
                        from: Int32(position * 8), in: raw)
                }
                return StoreSession.runAndClear(raw)
            }
            try session.check(code, of: statement)
        }
    }

    /// Saves records the store does not hold yet, stamped `now`, several rows per statement;
    /// ``NewRecords/flush()`` saves the last ones.
    public func newRecords(at now: Timestamp) throws -> NewRecords {
        NewRecords(session: self, now: now)
    }

    private static let insertBatch =
        "INSERT INTO record (id, type, deleted, unresolvedConflicts, conflicts, changedAt, line, lineDigest) VALUES "
        + Array(repeating: "(?, ?, ?, ?, ?, ?, ?, ?)", count: NewRecords.batchSize).joined(separator: ", ")
    private static let insertRecord = """
        INSERT INTO record (id, type, deleted, unresolvedConflicts, conflicts, changedAt, line, lineDigest)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?)
        """
    private static let upsertRecord = """
        INSERT INTO record (id, type, deleted, unresolvedConflicts, conflicts, changedAt, line, lineDigest)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT(id) DO UPDATE SET type = excluded.type, deleted = excluded.deleted,
            unresolvedConflicts = excluded.unresolvedConflicts, conflicts = excluded.conflicts,
            changedAt = excluded.changedAt, line = excluded.line, lineDigest = excluded.lineDigest
        """

    /// Binds a record's row to `statement` (``insertRecord`` or ``upsertRecord``) and runs it.
    private func saveRow(_ record: ReadOnly.Record, as stored: StoredLine, at now: Timestamp, through statement: Statement)
        throws
    {
        // Bound through SQLite's C API, without copies: SQLite reads the id, type, line and
        // digest where they are (SQLITE_STATIC) while the row is inserted, and the bindings are
        // cleared before those bytes go. (A first merge saves every record; SQLITE_TRANSIENT
        // cost an allocation, a copy and a free per value, each under SQLite's memory mutex.)
        changes?.insert(record.id)
        let raw = statement.sqliteStatement
        sqlite3_reset(raw)
        var type = record.version.type
        let code = record.id.withWrittenBytes { id in
            type.withUTF8 { type in
                stored.line.withUnsafeBytes { line in
                    stored.digest.withUnsafeBytes { digest in
                        Self.bindRow(
                            id: id, type: type, deleted: record.version.deleted,
                            unresolvedConflicts: Int64(record.unresolvedConflicts.count),
                            conflicts: Int64(record.conflicts.count), changedAt: now, line: line, digest: digest,
                            from: 0, in: raw)
                        return Self.runAndClear(raw)
                    }
                }
            }
        }
        try check(code, of: statement)
    }

    /// Binds one row's values, the columns of ``insertRecord`` in order, to parameters
    /// `first + 1` to `first + 8`, where they are (SQLITE_STATIC: they must stay until the
    /// bindings are cleared).
    private static func bindRow(
        id: UnsafeBufferPointer<UInt8>, type: UnsafeBufferPointer<UInt8>, deleted: Bool, unresolvedConflicts: Int64,
        conflicts: Int64, changedAt: Timestamp, line: UnsafeRawBufferPointer, digest: UnsafeRawBufferPointer,
        from first: Int32, in statement: SQLiteStatement
    ) {
        bindText(id, at: first + 1, in: statement)
        bindText(type, at: first + 2, in: statement)
        sqlite3_bind_int(statement, first + 3, deleted ? 1 : 0)
        sqlite3_bind_int64(statement, first + 4, unresolvedConflicts)
        sqlite3_bind_int64(statement, first + 5, conflicts)
        sqlite3_bind_int64(statement, first + 6, changedAt.milliseconds)
        bindBlob(line, at: first + 7, in: statement)
        bindBlob(digest, at: first + 8, in: statement)
    }

    /// Runs a statement whose values are bound, then resets it and clears its bindings (before
    /// the bound bytes go); SQLite's result code.
    static func runAndClear(_ statement: SQLiteStatement) -> Int32 {
        let code = sqlite3_step(statement)
        sqlite3_reset(statement)
        sqlite3_clear_bindings(statement)
        return code
    }

    /// Throws SQLite's error unless `code` says the statement ran to its end.
    func check(_ code: Int32, of statement: Statement) throws {
        guard code == SQLITE_DONE else {
            throw DatabaseError(
                resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)),
                sql: statement.sql)
        }
    }

    /// Binds UTF-8 `text` where it is (SQLITE_STATIC: it must stay until the bindings are
    /// cleared), by its length (a NUL inside it stays); empty text is bound as empty, not NULL.
    /// With `copying`, SQLite copies it (SQLITE_TRANSIENT) and it need not stay.
    static func bindText(
        _ text: UnsafeBufferPointer<UInt8>, at index: Int32, in statement: SQLiteStatement, copying: Bool = false
    ) {
        let base = UnsafeRawPointer(text.baseAddress ?? UnsafePointer(emptyBytes)).assumingMemoryBound(to: CChar.self)
        _ = sqlite3_bind_text(statement, index, base, Int32(text.count), copying ? transient : nil)
    }

    /// SQLite's SQLITE_TRANSIENT (a C macro Swift does not import): SQLite copies the value.
    private static let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

    /// Binds `bytes` where they are (SQLITE_STATIC: they must stay until the bindings are
    /// cleared); empty bytes are bound as an empty blob, not NULL.
    private static func bindBlob(_ bytes: UnsafeRawBufferPointer, at index: Int32, in statement: SQLiteStatement) {
        _ = sqlite3_bind_blob(statement, index, bytes.baseAddress ?? UnsafeRawPointer(emptyBytes), Int32(bytes.count), nil)
    }

    /// Somewhere for an empty value to point (SQLite binds NULL for a null pointer).
    private nonisolated(unsafe) static let emptyBytes = UnsafeMutablePointer<UInt8>.allocate(capacity: 1)

    /// Calls `body` with every record's published line (the interchange bytes of its normal form
    /// with its conflicts), in id order, without building any record.
    ///
    /// The bytes are only valid during the call: they point into SQLite's row.
    public func forEachPublishedLine(_ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        try forEachPublishedLine { line, _ in try body(line) }
    }

    /// Calls `body` with every record's published line and its digest (``LineDigest``), in id order.
    ///
    /// The bytes are only valid during the call: they point into SQLite's row.
    public func forEachPublishedLine(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void) throws {
        let statement = try db.makeStatement(sql: "SELECT line, lineDigest FROM record ORDER BY id")
        try withRawRows(statement) { sqliteStatement in
            let line = UnsafeRawBufferPointer(
                start: sqlite3_column_blob(sqliteStatement, 0), count: Int(sqlite3_column_bytes(sqliteStatement, 0)))
            let count = Int(sqlite3_column_bytes(sqliteStatement, 1))
            if count == LineDigest.count, let digest = sqlite3_column_blob(sqliteStatement, 1) {
                try body(line, UnsafeRawBufferPointer(start: digest, count: count))
            } else {
                try LineDigest.of(line).withUnsafeBytes { try body(line, $0) }
            }
        }
    }

    /// Calls `body` with every record's line digest (``LineDigest``) in id order, reading a line
    /// only for a record whose digest is not stored.
    public func forEachLineDigest(_ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        let statement = try db.makeStatement(
            sql: "SELECT lineDigest, CASE WHEN lineDigest IS NULL THEN line END FROM record ORDER BY id")
        try withRawRows(statement) { sqliteStatement in
            let count = Int(sqlite3_column_bytes(sqliteStatement, 0))
            if count == LineDigest.count, let digest = sqlite3_column_blob(sqliteStatement, 0) {
                try body(UnsafeRawBufferPointer(start: digest, count: count))
            } else {
                let line = UnsafeRawBufferPointer(
                    start: sqlite3_column_blob(sqliteStatement, 1),
                    count: Int(sqlite3_column_bytes(sqliteStatement, 1)))
                try LineDigest.of(line).withUnsafeBytes { try body($0) }
            }
        }
    }

    /// Whether the store holds no record at all (a cold merge need not look any up).
    public func isEmpty() throws -> Bool {
        try Bool.fetchOne(db, sql: "SELECT NOT EXISTS (SELECT 1 FROM record)") ?? true
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
        var sql = "SELECT id, line FROM record"
        var conditions: [String] = []
        var arguments: StatementArguments = []
        if let type {
            conditions.append("type = ?")
            arguments += [type]
        }
        if onlyUnresolved { conditions.append("unresolvedConflicts > 0") }
        if !conditions.isEmpty { sql += " WHERE " + conditions.joined(separator: " AND ") }
        sql += " ORDER BY id"
        let statement = try db.makeStatement(sql: sql)
        try statement.setArguments(arguments)
        try withRawRows(statement) { row in
            let id = String(cString: sqlite3_column_text(row, 0))
            try body(try Self.record(fromLine: Self.blob(row, 1) ?? [], id: id))
        }
    }

    /// Steps `statement` and calls `body` with SQLite's statement at each row: reading columns
    /// straight from SQLite copies each line once instead of through `Row` and `Data`.
    func withRawRows(_ statement: Statement, _ body: (SQLiteStatement) throws -> Void) throws {
        let sqliteStatement = statement.sqliteStatement
        sqlite3_reset(sqliteStatement)
        defer { sqlite3_reset(sqliteStatement) }
        while true {
            let code = sqlite3_step(sqliteStatement)
            if code == SQLITE_DONE { return }
            guard code == SQLITE_ROW else {
                throw DatabaseError(
                    resultCode: ResultCode(rawValue: code),
                    message: String(cString: sqlite3_errmsg(db.sqliteConnection)),
                    sql: statement.sql)
            }
            try body(sqliteStatement)
        }
    }

    static func blob(_ statement: SQLiteStatement, _ column: Int32) -> [UInt8]? {
        guard sqlite3_column_type(statement, column) != SQLITE_NULL else { return nil }
        let count = Int(sqlite3_column_bytes(statement, column))
        guard count > 0, let base = sqlite3_column_blob(statement, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: base, count: count))
    }

    private static func record(fromLine line: [UInt8], id: String) throws -> ReadOnly.Record {
        do {
            return try SnapshotReader.record(fromLine: line)
        } catch {
            throw StoreCorruption("record \(id) is stored unreadably: \(error)")
        }
    }

    /// The length (in characters) of the longest record type held, 0 for none. (A scan of the
    /// table, which has no index of types: about a twentieth of what listing its records costs.)
    public func longestType() throws -> Int {
        try Int.fetchOne(db, sql: "SELECT max(length(type)) FROM record") ?? 0
    }

    /// How many records are live, deleted, and in conflict (with conflicts that need a person).
    public func counts() throws -> RecordCounts {
        // Each count through its own small index (the total through the type index): no query
        // here reads the records' lines.
        let total = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM record") ?? 0
        let deleted = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM record WHERE deleted") ?? 0
        let benignOnly =
            try Int.fetchOne(
                db,
                sql: """
                    SELECT COUNT(*) FROM record
                    WHERE conflicts > 0 AND conflicts > unresolvedConflicts AND unresolvedConflicts = 0
                    """) ?? 0
        return RecordCounts(
            live: total - deleted, deleted: deleted, inConflict: try recordsInConflict(), benignOnly: benignOnly)
    }

    /// How many records have conflicts that need a person.
    public func recordsInConflict() throws -> Int {
        try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM record WHERE conflicts > 0 AND unresolvedConflicts > 0") ?? 0
    }

    /// ``recordsInConflict()`` for a pass, in its write transaction: the count kept by the last
    /// pass that changed records (`conflictCount`, v11) when no record changed since, moved by
    /// this transaction's saves when only they changed records (``ConflictTally``), else counted;
    /// and kept.
    ///
    /// A record changed since is one this transaction saved, one whose prefix is still in
    /// `changedPrefix` (changed and not yet published, or deleted by another program), or one
    /// another program wrote (its line has no digest): the same marks that make a pass write
    /// this device's parts again. A pass counts before it publishes, and publishing clears them.
    public func recordsInConflictKept() throws -> Int {
        let othersChanged = {
            try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM changedPrefix)") != false
                || Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM record WHERE lineDigest IS NULL)") != false
        }
        var known: Int? = nil
        if let changes, let kept = try Int.fetchOne(db, sql: "SELECT count FROM conflictCount"), try !othersChanged() {
            if changes.isEmpty { return kept }
            known = conflictTally?.delta.map { kept + $0 }
        }
        let count = try known ?? recordsInConflict()
        try db.execute(sql: "DELETE FROM conflictCount")
        try db.execute(sql: "INSERT INTO conflictCount (count) VALUES (?)", arguments: [count])
        return count
    }
}

/// A line as saved, with its digest.
public struct StoredLine: Sendable {
    /// The record's published line.
    public var line: [UInt8]
    /// Its ``LineDigest``.
    public var digest: [UInt8]

    /// A line and its digest.
    public init(line: [UInt8], digest: [UInt8]) {
        self.line = line
        self.digest = digest
    }

    /// The line of `record` and its digest.
    public init(of record: ReadOnly.Record) {
        line = record.interchangeLine
        digest = line.withUnsafeBytes { LineDigest.of($0) }
    }
}

/// The digest of a record's line: the first 16 bytes of its SHA-256.
public enum LineDigest {
    /// Bytes in a digest.
    public static let count = 16

    /// The digest of `line`.
    public static func of(_ line: UnsafeRawBufferPointer) -> [UInt8] {
        // Copied from the digest's own bytes: its `prefix` would go through an iterator that
        // copies the whole digest into an array first (two allocations more per line).
        SHA256.hash(data: line).withUnsafeBytes { Array($0.prefix(count)) }
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
