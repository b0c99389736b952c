import Foundation
import GRDB
import GRDBSQLite
import SnapshotFormat

extension StoreSession {
    // MARK: This device's parts

    /// The parts this device publishes, in prefix order (empty before its first publication).
    public func ownParts() throws -> [OwnPart] {
        try OwnPart.order(Column("prefix")).fetchAll(db)
    }

    /// Whether `part` is one of the parts this device publishes now (its layout's leaves; the
    /// whole snapshot while it has none).
    public func isOwnPart(_ part: PartPrefix) throws -> Bool {
        if try OwnPart.fetchOne(db, key: part.rawValue) != nil { return true }
        guard part.isWhole else { return false }
        return try OwnPart.fetchCount(db) == 0
    }

    /// This device's parts published in a file larger than `bytes` (usually none).
    public func ownParts(largerThan bytes: Int64) throws -> [OwnPart] {
        try OwnPart.filter(Column("bytes") > bytes && Column("isPublished")).fetchAll(db)
    }

    /// Replaces the parts `removed` (by prefix) with `saved`.
    ///
    /// Through prepared statements (as for ``recordWritten(_:)``): a first publication saves 256
    /// rows at 1,000,000 records.
    public func replaceOwnParts(removing removed: [String], saving saved: [OwnPart]) throws {
        let delete = try db.cachedStatement(sql: "DELETE FROM ownPart WHERE prefix = ?")
        for prefix in removed { try delete.execute(arguments: [prefix]) }
        let insert = try db.cachedStatement(
            sql: """
                INSERT OR REPLACE INTO ownPart (prefix, generation, contentDigest, bytes, records, isPublished)
                VALUES (?, ?, ?, ?, ?, ?)
                """)
        for part in saved {
            try insert.execute(arguments: [
                part.prefix, part.generation, part.contentDigest, part.bytes, part.records, part.isPublished,
            ])
        }
    }

    /// Records that the files of generation `generation` are in place.
    public func markPartsPublished(generation: Int64) throws {
        try db.execute(sql: "UPDATE ownPart SET isPublished = 1 WHERE generation = ?", arguments: [generation])
    }

    /// The 4-digit prefixes of records changed since the parts holding them were last written,
    /// this transaction's included.
    public func changedPrefixes() throws -> Set<UInt16> {
        if changes != nil { try digestLinesChangedElsewhere() }
        var values = Set(changes?.values ?? [])
        for text in try String.fetchAll(db, sql: "SELECT prefix FROM changedPrefix") {
            if let prefix = PartPrefix(text) { values.insert(prefix.value) }
        }
        return values
    }

    /// Gives the lines another program changed (they have no digest) their digest, and marks their
    /// prefixes changed.
    private func digestLinesChangedElsewhere() throws {
        let rows = try Row.fetchAll(db, sql: "SELECT id, line FROM record WHERE lineDigest IS NULL")
        for row in rows {
            let id: String = row["id"]
            let line: [UInt8] = [UInt8]((row["line"] as Data?) ?? Data())
            let digest = line.withUnsafeBytes { LineDigest.of($0) }
            try db.execute(sql: "UPDATE record SET lineDigest = ? WHERE id = ?", arguments: [Data(digest), id])
            if let recordID = RecordID(id) { changes?.insert(recordID) }
            try db.execute(
                sql: "INSERT OR IGNORE INTO changedPrefix (prefix) VALUES (?)", arguments: [String(id.prefix(4)).uppercased()])
        }
    }

    /// Forgets the changes within `part`: its file now holds them.
    public func clearChangedPrefixes(within part: PartPrefix) throws {
        changes?.remove(within: part)
        if part.isWhole {
            try db.execute(sql: "DELETE FROM changedPrefix")
        } else {
            let (lower, upper) = part.idRange
            try db.execute(
                sql: "DELETE FROM changedPrefix WHERE prefix >= ? AND prefix < ?", arguments: [lower, upper ?? "G"])
        }
    }

    /// Writes the changes no publication used to the `changedPrefix` table (at the end of a transaction).
    func keepUnpublishedChanges() throws {
        guard let changes else { return }
        let statement = try db.cachedStatement(sql: "INSERT OR IGNORE INTO changedPrefix (prefix) VALUES (?)")
        for value in changes.values {
            try statement.execute(arguments: [PartPrefix(value: value, digits: PartPrefix.maximumDigits).rawValue])
        }
    }

    // MARK: Files written

    /// The file this device wrote as `part` with `generation`, if it did.
    public func writtenFile(part: PartPrefix, generation: Int64) throws -> WrittenFile? {
        try WrittenFile.fetchOne(db, key: ["part": part.rawValue, "generation": generation])
    }

    /// Marks every part to be written again at the next pass (after this device's key changed).
    public func markPartsUnpublished() throws {
        try db.execute(sql: "UPDATE ownPart SET isPublished = 0")
    }

    /// The public key (`ed25519:…`) this device's parts were last signed with, nil before its
    /// first publication since v12.
    public func signingKeyOfParts() throws -> String? {
        try String.fetchOne(db, sql: "SELECT key FROM partsKey WHERE singleton = 1")
    }

    /// Records that this device's parts are signed with `key` from now on.
    public func setSigningKeyOfParts(_ key: String) throws {
        try db.execute(sql: "INSERT OR REPLACE INTO partsKey (singleton, key) VALUES (1, ?)", arguments: [key])
    }

    /// The digests of the files this device wrote for `part`, by generation.
    public func writtenFileDigests(of part: PartPrefix) throws -> [Int64: String] {
        var digests: [Int64: String] = [:]
        for row in try Row.fetchAll(
            db, sql: "SELECT generation, fileDigest FROM writtenFile WHERE part = ?", arguments: [part.rawValue])
        {
            digests[row["generation"]] = row["fileDigest"]
        }
        return digests
    }

    /// How many files of each part ``recordWritten(_:)`` keeps, the newest: enough to recognize
    /// any copy a sync tool could still deliver, without a row for every edit ever made.
    public static let writtenFilesKeptPerPart = 1000

    /// Records a file about to be written (before the rename, so a crash cannot hide it), and
    /// forgets its part's files beyond the newest ``writtenFilesKeptPerPart``.
    ///
    /// Through prepared statements: a first publication records 256 files at 1,000,000 records,
    /// and GRDB's building of each statement anew took longer than the statements.
    public func recordWritten(_ file: WrittenFile) throws {
        try db.cachedStatement(
            sql: """
                INSERT OR REPLACE INTO writtenFile (part, generation, fileDigest, writtenAt, isAdopted, isLegacyDigest, bytes)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """
        ).execute(arguments: [
            file.part, file.generation, file.fileDigest, file.writtenAt, file.isAdopted, file.isLegacyDigest, file.bytes,
        ])
        try db.cachedStatement(
            sql: """
                DELETE FROM writtenFile WHERE part = ?1 AND generation < (
                    SELECT generation FROM writtenFile WHERE part = ?1 ORDER BY generation DESC LIMIT 1 OFFSET ?2)
                """
        ).execute(arguments: [file.part, Self.writtenFilesKeptPerPart - 1])
    }

    /// For each part (by prefix) that this device published a file larger than `bytes` for, the
    /// largest it published (of the files ``recordWritten(_:)`` keeps; usually none).
    public func largestWrittenFiles(largerThan bytes: Int64) throws -> [(part: PartPrefix, bytes: Int64)] {
        try Row.fetchAll(db, sql: Self.largestWrittenFilesQuery, arguments: [bytes]).compactMap { row in
            PartPrefix(stored: row["part"]).map { ($0, row["bytes"]) }
        }
    }

    /// ``largestWrittenFiles(largerThan:)``'s query. Grouped by `+part`, an expression rather than
    /// the column, so that SQLite's planner looks for the few rows over the size through the index
    /// on `bytes` instead of scanning the whole table in primary-key order for the grouping (the
    /// sqlite3 shell took 8 ms for that scan at 100,000 rows, and 2 ms, its own start-up included,
    /// through the index); and still answers, by a scan, if someone dropped the index (`INDEXED
    /// BY` would fail every pass then).
    static let largestWrittenFilesQuery =
        "SELECT part, MAX(bytes) AS bytes FROM writtenFile WHERE bytes > ? AND NOT isAdopted GROUP BY +part"

    /// Forgets the files of a generation that could not be put in place.
    public func forgetWritten(generation: Int64) throws {
        try db.execute(sql: "DELETE FROM writtenFile WHERE generation = ?", arguments: [generation])
    }

    /// The highest generation this device wrote or was about to write, 0 if none.
    public func highestWrittenGeneration() throws -> Int64 {
        try Int64.fetchOne(db, sql: "SELECT MAX(generation) FROM writtenFile") ?? 0
    }

    /// Whether this device has ever written a file.
    public func hasWritten() throws -> Bool {
        try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM writtenFile)") ?? false
    }

    // MARK: Records by prefix

    /// Calls `body` with the id, published line and line digest of every record in `part`, in id
    /// order. The bytes are only valid during the call: they point into SQLite's row.
    public func forEachLine(
        in part: PartPrefix, _ body: (RecordID, UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void
    ) throws {
        let (lower, upper) = part.idRange
        let statement: Statement
        if let upper {
            statement = try db.cachedStatement(sql: "SELECT id, line, lineDigest FROM record WHERE id >= ? AND id < ? ORDER BY id")
            statement.setUncheckedArguments([lower, upper])
        } else if !lower.isEmpty {
            statement = try db.cachedStatement(sql: "SELECT id, line, lineDigest FROM record WHERE id >= ? ORDER BY id")
            statement.setUncheckedArguments([lower])
        } else {
            statement = try db.cachedStatement(sql: "SELECT id, line, lineDigest FROM record ORDER BY id")
        }
        try withRawRows(statement) { row in
            let idText = UnsafeBufferPointer(
                start: sqlite3_column_text(row, 0), count: Int(sqlite3_column_bytes(row, 0)))
            guard let id = RecordID(utf8: idText) else {
                throw StoreCorruption("a record id is not a UUID: \(String(decoding: idText, as: UTF8.self))")
            }
            let line = UnsafeRawBufferPointer(
                start: sqlite3_column_blob(row, 1), count: Int(sqlite3_column_bytes(row, 1)))
            let count = Int(sqlite3_column_bytes(row, 2))
            if count == LineDigest.count, let digest = sqlite3_column_blob(row, 2) {
                try body(id, line, UnsafeRawBufferPointer(start: digest, count: count))
            } else {
                try LineDigest.of(line).withUnsafeBytes { try body(id, line, $0) }
            }
        }
    }

    /// Calls `body` with the line digest (``LineDigest``) of every record in `part`, reading a
    /// line only for a record whose digest is not stored.
    public func forEachLineDigest(in part: PartPrefix, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        let (lower, upper) = part.idRange
        let statement = try db.cachedStatement(
            sql: """
                SELECT lineDigest, CASE WHEN lineDigest IS NULL THEN line END FROM record WHERE id >= ? AND id < ?
                """)
        statement.setUncheckedArguments([lower, upper ?? "G"])
        try withRawRows(statement) { row in
            let count = Int(sqlite3_column_bytes(row, 0))
            if count == LineDigest.count, let digest = sqlite3_column_blob(row, 0) {
                try body(UnsafeRawBufferPointer(start: digest, count: count))
            } else {
                let line = UnsafeRawBufferPointer(
                    start: sqlite3_column_blob(row, 1), count: Int(sqlite3_column_bytes(row, 1)))
                try LineDigest.of(line).withUnsafeBytes { try body($0) }
            }
        }
    }

    /// How many records, and how many bytes of lines, each prefix of `digits` digits within
    /// `part` holds (prefixes with none left out): for deciding how to split a large part
    /// without holding its lines.
    public func lineSizes(in part: PartPrefix, digits: Int) throws -> [PartPrefix: (records: Int, bytes: Int)] {
        var sizes: [PartPrefix: (records: Int, bytes: Int)] = [:]
        let (lower, upper) = part.idRange
        let rows = try Row.fetchCursor(
            db,
            sql: """
                SELECT substr(id, 1, ?) AS prefix, COUNT(*) AS records, SUM(length(line)) AS bytes FROM record
                WHERE id >= ? AND id < ? GROUP BY prefix
                """,
            arguments: [digits, lower, upper ?? "G"])
        while let row = try rows.next() {
            guard let prefix = PartPrefix(row["prefix"]) else { continue }
            sizes[prefix] = (row["records"], row["bytes"])
        }
        return sizes
    }
}

extension PartPrefix {
    /// The ids this prefix holds as a range of stored id texts: `lower ..< upper` (no upper bound
    /// for the last prefix of its length; "" for the whole snapshot).
    var idRange: (lower: String, upper: String?) {
        guard !isWhole else { return ("", nil) }
        // In Int: 16 ^ 4 does not fit the value's UInt16, nor does FFFF + 1.
        guard Int(value) + 1 < 1 << (4 * digits) else { return (rawValue, nil) }
        return (rawValue, PartPrefix(value: value + 1, digits: digits).rawValue)
    }
}
