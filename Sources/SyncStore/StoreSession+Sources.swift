import GRDB

extension StoreSession {
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

    /// The highest generation ever read from a file of `device` (its own files, parts and copies).
    public func highestGeneration(seenFrom device: String) throws -> Int64 {
        try Int64.fetchOne(db, sql: "SELECT MAX(highestGeneration) FROM source WHERE device = ?", arguments: [device]) ?? 0
    }
}
