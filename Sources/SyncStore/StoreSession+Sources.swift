import Foundation
import GRDB
import GRDBSQLite
import SnapshotFormat

extension StoreSession {
    // MARK: Sources

    /// What is known of the file at `name` in the shared folder.
    public func source(named name: String) throws -> StoredSource? {
        try StoredSource.fetchOne(db.cachedStatement(sql: "SELECT * FROM source WHERE name = ?"), arguments: [name])
    }

    /// Every file ever read from the shared folder, by name.
    ///
    /// Read column by column through SQLite's C API: every pass reads every row (hundreds in a
    /// folder of parts), and through GRDB's rows that took longer than listing the folder.
    public func sources() throws -> [StoredSource] {
        let statement = try db.cachedStatement(
            sql: """
                SELECT name, device, role, generation, highestGeneration, fileSystemDevice, inode, size,
                    modifiedNanos, changedNanos, lastMergedAt, lastSeenAt, lastProblem, lastWarning, present,
                    problemKind
                FROM source ORDER BY name
                """)
        var sources: [StoredSource] = []
        try withRawRows(statement) { row in
            func text(_ column: Int32) -> String? {
                guard let characters = sqlite3_column_text(row, column) else { return nil }
                return String(cString: characters)
            }
            func integer(_ column: Int32) -> Int64? {
                sqlite3_column_type(row, column) == SQLITE_NULL ? nil : sqlite3_column_int64(row, column)
            }
            var source = StoredSource(
                name: text(0) ?? "", fileSystemDevice: integer(5) ?? 0, inode: integer(6) ?? 0, size: integer(7) ?? 0,
                modifiedNanos: integer(8) ?? 0, changedNanos: integer(9) ?? 0, lastSeenAt: integer(11) ?? 0)
            source.device = text(1)
            source.role = text(2)
            source.generation = integer(3)
            source.highestGeneration = integer(4)
            source.lastMergedAt = integer(10)
            source.lastProblem = text(12)
            source.lastWarning = text(13)
            source.present = (integer(14) ?? 0) != 0
            source.problemKind = text(15)
            sources.append(source)
        }
        return sources
    }

    /// Saves what is known of a source file.
    public func save(_ source: StoredSource) throws {
        try save(CollectionOfOne(source))
    }

    /// Saves what is known of each of `sources`, a row each (replacing the row of that name).
    ///
    /// Through one prepared statement, its values bound through SQLite's C API: a first merge
    /// saves a row for every file of the folder (196,608 for 4-digit parts of three devices), and
    /// GRDB's statement arguments (an array of existential values per row, and the statement cache
    /// looked up by its SQL) took 4 µs a row, against a fifth of that bound directly.
    public func save(_ sources: some Sequence<StoredSource>) throws {
        let statement = try db.cachedStatement(sql: Self.upsertSource)
        let raw = statement.sqliteStatement
        sqlite3_reset(raw)
        for source in sources {
            Self.bind(source.name, at: 1, in: raw)
            Self.bind(source.device, at: 2, in: raw)
            Self.bind(source.role, at: 3, in: raw)
            Self.bind(source.generation, at: 4, in: raw)
            Self.bind(source.highestGeneration, at: 5, in: raw)
            Self.bind(source.fileSystemDevice, at: 6, in: raw)
            Self.bind(source.inode, at: 7, in: raw)
            Self.bind(source.size, at: 8, in: raw)
            Self.bind(source.modifiedNanos, at: 9, in: raw)
            Self.bind(source.changedNanos, at: 10, in: raw)
            Self.bind(source.lastMergedAt, at: 11, in: raw)
            Self.bind(source.lastSeenAt, at: 12, in: raw)
            Self.bind(source.lastProblem, at: 13, in: raw)
            Self.bind(source.lastWarning, at: 14, in: raw)
            Self.bind(Int64(source.present ? 1 : 0), at: 15, in: raw)
            Self.bind(source.problemKind, at: 16, in: raw)
            try check(Self.runAndClear(raw), of: statement)
        }
    }

    /// As GRDB's `upsert` of a ``StoredSource`` writes it.
    private static let upsertSource = """
        INSERT INTO source (name, device, role, generation, highestGeneration, fileSystemDevice, inode, size,
            modifiedNanos, changedNanos, lastMergedAt, lastSeenAt, lastProblem, lastWarning, present, problemKind)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (name) DO UPDATE SET device = excluded.device, role = excluded.role,
            generation = excluded.generation, highestGeneration = excluded.highestGeneration,
            fileSystemDevice = excluded.fileSystemDevice, inode = excluded.inode, size = excluded.size,
            modifiedNanos = excluded.modifiedNanos, changedNanos = excluded.changedNanos,
            lastMergedAt = excluded.lastMergedAt, lastSeenAt = excluded.lastSeenAt,
            lastProblem = excluded.lastProblem, lastWarning = excluded.lastWarning, present = excluded.present,
            problemKind = excluded.problemKind
        """

    /// Binds `text` as a copy (SQLite's SQLITE_TRANSIENT), or NULL.
    private static func bind(_ text: String?, at index: Int32, in statement: SQLiteStatement) {
        guard var text else {
            sqlite3_bind_null(statement, index)
            return
        }
        text.withUTF8 { bindText($0, at: index, in: statement, copying: true) }
    }

    /// Binds `number`, or NULL.
    private static func bind(_ number: Int64?, at index: Int32, in statement: SQLiteStatement) {
        if let number { sqlite3_bind_int64(statement, index, number) } else { sqlite3_bind_null(statement, index) }
    }

    /// Marks every source not in `names` as absent from the folder, or forgets it.
    ///
    /// A sync tool's copy of another device's file (`phone.sync-conflict-….json`, `phone (1).json`)
    /// gone from the folder is forgotten: such names are new each time, come and go by the
    /// thousand over months, and every pass reads every row (5,000 copies gone made an idle pass's
    /// reading ten times slower). Every other row is kept, marked absent: a device's own files and
    /// other names come back, and a generation lower than one read at the same name is reported;
    /// and a file under this device's name bounds its next generation.
    ///
    /// - Parameters:
    ///   - known: the rows as read at the start of the pass (read again when not given).
    ///   - device: this device's ID; nil keeps every row.
    public func markAbsent(except names: Set<String>, known: [StoredSource]? = nil, device: String? = nil) throws {
        for source in try known ?? sources() where !names.contains(source.name) {
            if let device, source.role != "own", source.device != device, SourceFileName.looksLikeCopy(source.name) {
                try forget(source)
            } else if source.present {
                // Only rows that change are written: an idle pass writes nothing.
                try markAbsent(source)
            }
        }
    }

    /// Removes what is known of a file gone from the folder.
    private func forget(_ source: StoredSource) throws {
        try db.cachedStatement(sql: "DELETE FROM source WHERE name = ?").execute(arguments: [source.name])
        try db.cachedStatement(sql: "DELETE FROM mergedElement WHERE source = ?").execute(arguments: [source.name])
    }

    /// Marks the sources `names` as absent from the folder (this device removed them).
    public func markAbsent(_ names: [String]) throws {
        for name in names {
            if let source = try source(named: name), source.present { try markAbsent(source) }
        }
    }

    private func markAbsent(_ source: StoredSource) throws {
        var absent = source
        absent.present = false
        try absent.update(db)
        try db.execute(sql: "DELETE FROM mergedElement WHERE source = ?", arguments: [source.name])
    }

    /// Keeps the digests (16 bytes each, one after another) of the record elements of the file
    /// `name` whose versions all merged at this read (for a part, only those that are not the
    /// store's lines); none removes them.
    public func saveMergedElements(_ digests: [UInt8], of name: String) throws {
        // Cached statements: a first merge of a folder of parts saves a row per file (12,288 rows
        // for 3-digit parts of three devices), and compiling the SQL each time was most of it.
        if digests.isEmpty {
            try db.cachedStatement(sql: "DELETE FROM mergedElement WHERE source = ?").execute(arguments: [name])
        } else {
            try db.cachedStatement(sql: "INSERT OR REPLACE INTO mergedElement (source, digests) VALUES (?, ?)")
                .execute(arguments: [name, Data(digests)])
        }
    }

    /// Calls `body` with each digest ``saveMergedElements(_:of:)`` kept for `name`.
    public func forEachMergedElement(of name: String, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        let statement = try db.cachedStatement(sql: "SELECT digests FROM mergedElement WHERE source = ?")
        statement.setUncheckedArguments([name])
        try withRawRows(statement) { row in
            let count = Int(sqlite3_column_bytes(row, 0))
            guard let blob = sqlite3_column_blob(row, 0) else { return }
            let bytes = UnsafeRawBufferPointer(start: blob, count: count)
            var offset = 0
            while offset + 16 <= count {
                try body(UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + 16]))
                offset += 16
            }
        }
    }

    /// The highest generation ever read from a file of `device` (its own files, parts and copies).
    public func highestGeneration(seenFrom device: String) throws -> Int64 {
        try Int64.fetchOne(db, sql: "SELECT MAX(highestGeneration) FROM source WHERE device = ?", arguments: [device]) ?? 0
    }
}
