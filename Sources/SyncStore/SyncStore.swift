import GRDB
import SnapshotFormat

/// The local store: one value that owns the SQLite database (WAL mode) and its migrations.
///
/// It holds the merged state (every version, conflicts and unknown keys included), the sources
/// already read, and what this device has published. It lives in the state directory, never
/// in the shared folder.
public final class SyncStore: Sendable {
    private let writer: any DatabaseWriter
    /// The database file; nil for a store in memory.
    private let path: String?

    /// Opens (creating if needed) the store at `path` and runs every pending migration.
    public init(path: String) throws {
        var configuration = Configuration()
        // Another process (syncd or syncctl) may hold the write lock for a moment.
        configuration.busyMode = .timeout(30)
        configuration.label = "SyncStore"
        configuration.prepareDatabase { db in
            // 16 KiB pages for a new store (an existing one keeps its size): a store holds a
            // few hundred bytes per record, written in passes of up to every record; larger
            // pages mean a quarter of the writes (each page goes to the WAL, then to the file).
            try db.execute(sql: "PRAGMA page_size = 16384")
        }
        let opening = try OpeningLock(databasePath: path)
        writer = try DatabasePool(path: path, configuration: configuration)
        self.path = path
        try Self.migrator.migrate(writer)
        _ = consume opening
    }

    /// Opens the store at `path` with the migrations up to and including `lastMigration` only:
    /// tests use it to write a database as an earlier release did.
    init(path: String, upTo lastMigration: String) throws {
        let opening = try OpeningLock(databasePath: path)
        writer = try DatabasePool(path: path)
        self.path = path
        try Self.migrator.migrate(writer, upTo: lastMigration)
        _ = consume opening
    }

    /// A store in memory, for tests.
    public init() throws {
        writer = try DatabaseQueue()
        path = nil
        try Self.migrator.migrate(writer)
    }

    /// Runs `work` in one write transaction: everything it does is committed together or not at all.
    public func transaction<T>(_ work: (StoreSession) throws -> T) throws -> T {
        try writer.write { db in try work(StoreSession(db: db)) }
    }

    /// Runs `work`, which fills an empty store in one long transaction (a first merge), with the
    /// database in SQLite's rollback-journal mode instead of WAL, then returns it to WAL.
    ///
    /// In WAL mode every page is written twice: to the WAL by the transaction, then into the
    /// database file by the checkpoint after the commit, which also reads the WAL back. A first
    /// merge of 3 × 1,000,000 records wrote 620 MB to each, and the checkpoint alone kept the
    /// merge waiting about a second after its work was done. A rollback journal holds only the
    /// pages the transaction changes that existed before it (a handful in an empty store);
    /// pages added at the end of the file are not journaled, so each is written once. A crash
    /// mid-way leaves a hot journal, which the next opening rolls back: the store is empty again.
    /// The commit syncs as `synchronous = FULL` does (the journal, then the database), as
    /// rollback mode needs for durability; WAL's `NORMAL` returns with WAL.
    ///
    /// Leaving WAL needs the only connection to the database, so this process's readers are
    /// closed first, and the store's opening lock is held throughout: another process opening
    /// the store meanwhile waits for the first merge to end rather than find it in the wrong
    /// mode. When a process already has the store open (SQLite then refuses the change), `work`
    /// runs in WAL mode as it would have anyway. No read of the store may run inside `work`:
    /// in rollback mode a reader would wait for the writer's commit.
    ///
    /// - Returns: `work`'s result, and whether it ran in rollback-journal mode.
    public func fillingEmptyStore<T>(_ work: () throws -> T) throws -> (result: T, journaled: Bool) {
        guard let path, let pool = writer as? DatabasePool else { return (try work(), false) }
        let opening = try OpeningLock(databasePath: path)
        let outcome = Result { try Self.withRollbackJournal(pool, work) }
        _ = consume opening
        return try outcome.get()
    }

    private static func withRollbackJournal<T>(_ pool: DatabasePool, _ work: () throws -> T) throws -> (T, Bool) {
        pool.releaseMemory()
        let mode: String?
        do {
            mode = try pool.writeWithoutTransaction { db in
                try String.fetchOne(db, sql: "PRAGMA journal_mode = DELETE")
            }
        } catch {
            // SQLITE_BUSY: another process has the store open in WAL mode. Whatever the reason,
            // SQLite changes the mode entirely or not at all, and WAL mode works as before.
            return (try work(), false)
        }
        guard mode == "delete" else { return (try work(), false) }
        defer {
            // Back to WAL, as every opening sets it anyway. Should this fail, the store is still
            // whole and safe in rollback mode, and the next opening of the store sets WAL.
            pool.releaseMemory()
            try? pool.writeWithoutTransaction { db in
                _ = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
                try db.execute(sql: "PRAGMA synchronous = NORMAL")
            }
        }
        try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
        return (try work(), true)
    }

    /// Runs `work` with a consistent read-only view of the store.
    public func reading<T>(_ work: (StoreSession) throws -> T) throws -> T {
        try writer.read { db in try work(StoreSession(db: db)) }
    }

    /// A number that changes whenever another connection (another process: `syncctl`, an app)
    /// commits to the store; this process's own commits leave it alone (`PRAGMA data_version`).
    public func externalChangeToken() throws -> Int {
        try writer.writeWithoutTransaction { db in try Int.fetchOne(db, sql: "PRAGMA data_version") ?? 0 }
    }

    /// The names of the migrations applied to this database, oldest first.
    public func appliedMigrations() throws -> [String] {
        try writer.read { db in try Self.migrator.appliedIdentifiers(db).sorted() }
    }
}
