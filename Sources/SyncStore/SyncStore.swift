import GRDB
import SnapshotFormat
import Synchronization

/// The local store: one value that owns the SQLite database (WAL mode) and its migrations.
///
/// It holds the merged state (every version, conflicts and unknown keys included), the sources
/// already read, and what this device has published. It lives in the state directory, never
/// in the shared folder.
public final class SyncStore: Sendable {
    private let writer: any DatabaseWriter
    /// Whether transactions keep the prefixes they change (false for a store written as an
    /// earlier release did, before the `changedPrefix` table).
    private let keepsChangedPrefixes: Bool
    /// The database file; nil for a store in memory.
    private let path: String?
    /// What a first merge in rollback-journal mode left behind (see ``fillingEmptyStore(_:)``).
    private let journalState = Mutex(JournalState())

    private struct JournalState {
        /// How much this process's own changes of journal mode advanced `PRAGMA data_version`,
        /// which ``externalChangeToken()`` leaves out: they are no other process's commits.
        var ownModeChanges = 0
        /// Why the store could not return to WAL mode after a first merge, while it has not.
        var walPending: String?
        /// Runs right before each return to WAL mode: tests take a lock there.
        var beforeReturnToWAL: (@Sendable () -> Void)?
    }

    /// Sets what runs right before each return to WAL mode (for tests).
    func setBeforeReturnToWAL(_ hook: (@Sendable () -> Void)?) {
        journalState.withLock { $0.beforeReturnToWAL = hook }
    }

    /// Opens (creating if needed) the store at `path` and runs every pending migration.
    ///
    /// Another process opening or first-merging the store holds its opening lock; `waiting`
    /// then runs once, before this waits for it (say so: a first merge can take minutes).
    public convenience init(path: String, waiting: (() -> Void)? = nil) throws {
        try self.init(path: path, busyTimeout: 30, waiting: waiting)
    }

    /// The size the WAL is cut back to after a checkpoint: that of SQLite's automatic checkpoints
    /// (1,000 pages of 16 KiB).
    static let walSizeLimit = 16 << 20

    /// Opens the store at `path`, waiting up to `busyTimeout` seconds for another connection's
    /// lock (tests use a short one).
    init(path: String, busyTimeout: Double, waiting: (() -> Void)? = nil) throws {
        var configuration = Configuration()
        // Another process (syncd or syncctl) may hold the write lock for a moment.
        configuration.busyMode = .timeout(busyTimeout)
        configuration.label = "SyncStore"
        configuration.prepareDatabase { db in
            // 16 KiB pages for a new store (an existing one keeps its size): a store holds a
            // few hundred bytes per record, written in passes of up to every record; larger
            // pages mean a quarter of the writes (each page goes to the WAL, then to the file).
            try db.execute(sql: "PRAGMA page_size = 16384")
            // A large transaction (a peer's thousands of changes) grows the WAL to its size, and
            // SQLite keeps the file that large while any connection is open: syncd's, for months.
            // Once checkpointed, it is cut back to the size of the usual checkpoints instead.
            try db.execute(sql: "PRAGMA journal_size_limit = \(Self.walSizeLimit)")
        }
        let opening = try OpeningLock(databasePath: path, waiting: waiting)
        writer = try DatabasePool(path: path, configuration: configuration)
        self.path = path
        keepsChangedPrefixes = true
        try Self.migrator.migrate(writer)
        _ = consume opening
    }

    /// Opens the store at `path` with the migrations up to and including `lastMigration` only:
    /// tests use it to write a database as an earlier release did.
    init(path: String, upTo lastMigration: String) throws {
        let opening = try OpeningLock(databasePath: path)
        writer = try DatabasePool(path: path)
        self.path = path
        keepsChangedPrefixes = false
        try Self.migrator.migrate(writer, upTo: lastMigration)
        _ = consume opening
    }

    /// A store in memory, for tests.
    public init() throws {
        writer = try DatabaseQueue()
        path = nil
        keepsChangedPrefixes = true
        try Self.migrator.migrate(writer)
    }

    /// Runs `work` in one write transaction: everything it does is committed together or not at all.
    public func transaction<T>(_ work: (StoreSession) throws -> T) throws -> T {
        if journalState.withLock({ $0.walPending != nil }), let pool = writer as? DatabasePool, let path {
            // A first merge could not return the store to WAL mode: try again before writing.
            // (Without the opening lock, which another process holds, the next transaction tries.)
            if let opening = try? OpeningLock(databasePath: path) {
                let versionBefore = try? Self.dataVersion(pool)
                Self.returnToWAL(pool, journalState)
                if let versionBefore, let versionAfter = try? Self.dataVersion(pool) {
                    journalState.withLock { $0.ownModeChanges += versionAfter - versionBefore }
                }
                _ = consume opening
            }
        }
        let keeps = keepsChangedPrefixes
        return try writer.write { db in
            let session = StoreSession(
                db: db, changes: keeps ? ChangedPrefixes() : nil, conflictTally: keeps ? ConflictTally() : nil)
            let result = try work(session)
            try session.keepUnpublishedChanges()
            return result
        }
    }

    /// Why the store is still in rollback-journal mode after a first merge (see
    /// ``fillingEmptyStore(_:)``), or nil when it is in WAL mode as it should be. Each write
    /// transaction tries the return to WAL again. Meanwhile the store is whole and safe, but
    /// other processes cannot read it while this one writes.
    public var walModeProblem: String? { journalState.withLock { $0.walPending } }

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
    /// The commit syncs as `synchronous = EXTRA` does (the journal, the database, then the
    /// directory once the journal is deleted, so that a power loss cannot bring the journal back
    /// and roll back a first merge already published); WAL's `NORMAL` returns with WAL.
    ///
    /// Leaving WAL needs the only connection to the database, so this process's readers are
    /// closed first, and the store's opening lock is held throughout: another process opening
    /// the store meanwhile waits for the first merge to end rather than find it in the wrong
    /// mode. When a process already has the store open (SQLite then refuses the change), `work`
    /// runs in WAL mode as it would have anyway. No read of the store may run inside `work`:
    /// in rollback mode a reader would wait for the writer's commit. Should the return to WAL
    /// fail, ``walModeProblem`` says why, and the next write transaction tries it again.
    ///
    /// Changing the journal mode advances `PRAGMA data_version` on this connection as another
    /// process's commit would; ``externalChangeToken()`` leaves those steps out (the store is
    /// this process's alone meanwhile), or `syncd`, which watches it, would take its own first
    /// merge for someone else's change and merge again.
    ///
    /// - Returns: `work`'s result, and whether it ran in rollback-journal mode.
    public func fillingEmptyStore<T>(_ work: () throws -> T) throws -> (result: T, journaled: Bool) {
        guard let path, let pool = writer as? DatabasePool else { return (try work(), false) }
        let opening = try OpeningLock(databasePath: path)
        let outcome = Result { try Self.withRollbackJournal(pool, journalState, work) }
        _ = consume opening
        return try outcome.get()
    }

    /// `PRAGMA data_version` of the writer's connection, after a read (which is when SQLite
    /// notices a change of the files).
    private static func dataVersion(_ pool: DatabasePool) throws -> Int {
        try pool.writeWithoutTransaction { db in
            _ = try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master")
            return try Int.fetchOne(db, sql: "PRAGMA data_version") ?? 0
        }
    }

    private static func withRollbackJournal<T>(
        _ pool: DatabasePool, _ state: borrowing Mutex<JournalState>, _ work: () throws -> T
    ) throws -> (T, Bool) {
        pool.releaseMemory()
        let versionBefore: Int
        let mode: String?
        do {
            versionBefore = try dataVersion(pool)
            // Set first, so that the change of mode is synced as the first merge will be.
            try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = EXTRA") }
            mode = try pool.writeWithoutTransaction { db in
                try String.fetchOne(db, sql: "PRAGMA journal_mode = DELETE")
            }
        } catch {
            // SQLITE_BUSY: another process has the store open in WAL mode. Whatever the reason,
            // SQLite changes the mode entirely or not at all, and WAL mode works as before.
            try? pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
            return (try work(), false)
        }
        guard mode == "delete" else {
            try? pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
            return (try work(), false)
        }
        defer {
            pool.releaseMemory()
            returnToWAL(pool, state)
            // No other process has the store open (the mode could not have changed otherwise)
            // and none can open it (the opening lock is held): every step is this process's.
            if let versionAfter = try? dataVersion(pool) {
                state.withLock { $0.ownModeChanges += versionAfter - versionBefore }
            }
        }
        return (try work(), true)
    }

    /// Returns the store to WAL mode and `synchronous = NORMAL`; a failure is kept in `state`
    /// (the store is whole and safe in rollback-journal mode meanwhile). The caller holds the
    /// opening lock.
    private static func returnToWAL(_ pool: DatabasePool, _ state: borrowing Mutex<JournalState>) {
        state.withLock { $0.beforeReturnToWAL }?()
        pool.releaseMemory()
        let problem: String?
        do {
            let mode = try pool.writeWithoutTransaction { db in
                try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
            }
            problem = mode == "wal" ? nil : "SQLite kept journal mode \(mode ?? "(none)") instead of WAL"
        } catch {
            problem = "\(error)"
        }
        // Separately: a failure above leaves the journal mode's own durability in place.
        if problem == nil {
            try? pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
        }
        state.withLock { $0.walPending = problem }
    }

    /// Runs `work` with a consistent read-only view of the store.
    public func reading<T>(_ work: (StoreSession) throws -> T) throws -> T {
        try writer.read { db in try work(StoreSession(db: db)) }
    }

    /// A number that changes whenever another connection (another process: `syncctl`, an app)
    /// commits to the store; this process's own commits leave it alone (`PRAGMA data_version`).
    public func externalChangeToken() throws -> Int {
        let version = try writer.writeWithoutTransaction { db in try Int.fetchOne(db, sql: "PRAGMA data_version") ?? 0 }
        return version - journalState.withLock { $0.ownModeChanges }
    }

    /// The names of the migrations applied to this database, oldest first.
    public func appliedMigrations() throws -> [String] {
        // In the order they were registered ("v10" sorts before "v2" as text).
        try writer.read { db in
            let applied = try Self.migrator.appliedIdentifiers(db)
            return Self.migrator.migrations.filter { applied.contains($0) }
        }
    }
}
