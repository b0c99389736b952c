import GRDB
import SnapshotFormat

/// The local store: one value that owns the SQLite database (WAL mode) and its migrations.
///
/// It holds the merged state (every version, conflicts and unknown keys included), the sources
/// already read, and what this device has published. It lives in the state directory, never
/// in the shared folder.
public final class SyncStore: Sendable {
    private let writer: any DatabaseWriter

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
        try Self.migrator.migrate(writer)
        _ = consume opening
    }

    /// Opens the store at `path` with the migrations up to and including `lastMigration` only:
    /// tests use it to write a database as an earlier release did.
    init(path: String, upTo lastMigration: String) throws {
        let opening = try OpeningLock(databasePath: path)
        writer = try DatabasePool(path: path)
        try Self.migrator.migrate(writer, upTo: lastMigration)
        _ = consume opening
    }

    /// A store in memory, for tests.
    public init() throws {
        writer = try DatabaseQueue()
        try Self.migrator.migrate(writer)
    }

    /// Runs `work` in one write transaction: everything it does is committed together or not at all.
    public func transaction<T>(_ work: (StoreSession) throws -> T) throws -> T {
        try writer.write { db in try work(StoreSession(db: db)) }
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
