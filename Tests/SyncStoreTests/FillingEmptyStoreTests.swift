import Foundation
import GRDB
import Synchronization
import SnapshotFormat
@testable import SyncStore
import Testing

/// `SyncStore.fillingEmptyStore`: a first merge's transaction runs in rollback-journal mode
/// when this process has the store to itself, and the store is in WAL mode again afterwards.
@Suite("Store: filling an empty store")
struct FillingEmptyStoreTests {
    /// Inserts `count` records in one transaction.
    static func fill(_ store: SyncStore, count: Int) throws {
        try store.transaction { session in
            let inserts = try session.newRecords(at: Sample.now)
            for i in 0..<count {
                let record = ReadOnly.Record(version: Sample.version(Sample.id(i), fields: #"{"n": \#(i)}"#))
                try inserts.insert(record, as: StoredLine(of: record))
            }
            try inserts.flush()
        }
    }

    /// The journal mode and `synchronous` level of a new connection to `path`.
    static func modes(_ path: String) throws -> (journal: String?, synchronous: Int?) {
        let queue = try DatabaseQueue(path: path)
        return try queue.read { db in
            (try String.fetchOne(db, sql: "PRAGMA journal_mode"), try Int.fetchOne(db, sql: "PRAGMA synchronous"))
        }
    }

    static func fileSize(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
    }

    @Test("alone, the transaction runs without the WAL: the pages go once to the database file, and WAL mode returns")
    func journaledAlone() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("store.sqlite")
        let store = try SyncStore(path: path)
        // A reader connection of the pool is open (closed again before the mode changes)
        #expect(try store.reading { try $0.isEmpty() })

        // When an empty store is filled with 5,000 records
        let (_, journaled) = try store.fillingEmptyStore { try Self.fill(store, count: 5_000) }

        // Then the transaction ran in rollback-journal mode: its pages never went to the WAL
        #expect(journaled)
        #expect(Self.fileSize(path) > 1_000_000)
        #expect(Self.fileSize(path + "-wal") < 100_000, "WAL of \(Self.fileSize(path + "-wal")) bytes")
        #expect(!FileManager.default.fileExists(atPath: path + "-journal"))
        // And the store is in WAL mode again, at WAL's synchronous level (NORMAL, 1), for this
        // process (its readers included) and for any other
        #expect(try store.reading { try $0.counts().live } == 5_000)
        #expect(try Self.modes(path).journal == "wal")
        let writerModes = try store.transaction { session in
            (try String.fetchOne(session.db, sql: "PRAGMA journal_mode"), try Int.fetchOne(session.db, sql: "PRAGMA synchronous"))
        }
        #expect(writerModes.0 == "wal" && writerModes.1 == 1)
    }

    @Test("a WAL grown by a large transaction is cut back to the usual checkpoints' size once checkpointed, while the store stays open")
    func walCutBack() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("store.sqlite")
        let store = try SyncStore(path: path)
        try Self.fill(store, count: 10)  // (not empty: the next transactions go through the WAL)
        // When one transaction writes far more than the limit
        try store.transaction { session in
            let inserts = try session.newRecords(at: Sample.now)
            for i in 10..<60_000 {
                let record = ReadOnly.Record(version: Sample.version(Sample.id(i), fields: #"{"n": \#(i), "text": "\#(String(repeating: "x", count: 300))"}"#))
                try inserts.insert(record, as: StoredLine(of: record))
            }
            try inserts.flush()
        }
        let grown = Self.fileSize(path + "-wal")
        #expect(grown > SyncStore.walSizeLimit, "the WAL grew to \(grown) bytes only")
        // Then, after the next small transactions (the first checkpoints the WAL, one after it
        // starts it again from the beginning), the file is cut back
        for i in 0..<3 {
            try store.transaction { session in
                let record = ReadOnly.Record(version: Sample.version(Sample.id(70_000 + i), fields: #"{"n": 1}"#))
                _ = try session.save(record, at: Sample.now, isNew: true)
            }
        }
        let after = Self.fileSize(path + "-wal")
        #expect(after <= SyncStore.walSizeLimit, "the WAL is \(after) bytes")
        #expect(try store.reading { try $0.counts().live } == 60_003)
    }

    @Test("with the store open in another connection, the transaction runs in WAL mode, with the same result")
    func walWhenShared() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("store.sqlite")
        let store = try SyncStore(path: path)
        // Given another pool on the same database (as another process would hold it)
        let other = try SyncStore(path: path)
        #expect(try other.reading { try $0.isEmpty() })

        let (_, journaled) = try store.fillingEmptyStore { try Self.fill(store, count: 2_000) }

        #expect(!journaled)
        #expect(Self.fileSize(path + "-wal") > 100_000, "the pages went to the WAL")
        #expect(try other.reading { try $0.counts().live } == 2_000)
        #expect(try Self.modes(path).journal == "wal")
    }

    @Test("a transaction that throws leaves the store empty and in WAL mode")
    func rollback() throws {
        struct Stop: Error {}
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("store.sqlite")
        let store = try SyncStore(path: path)

        #expect(throws: Stop.self) {
            _ = try store.fillingEmptyStore {
                try store.transaction { session in
                    let inserts = try session.newRecords(at: Sample.now)
                    for i in 0..<3_000 {
                        let record = ReadOnly.Record(version: Sample.version(Sample.id(i)))
                        try inserts.insert(record, as: StoredLine(of: record))
                    }
                    throw Stop()
                }
            }
        }

        #expect(try store.reading { try $0.isEmpty() })
        #expect(try Self.modes(path).journal == "wal")
        #expect(!FileManager.default.fileExists(atPath: path + "-journal"))
        // And it can be filled afterwards
        #expect(try store.fillingEmptyStore { try Self.fill(store, count: 10) }.journaled)
        #expect(try store.reading { try $0.counts().live } == 10)
    }

    @Test("a store opened while another fills it waits until the filling ends, then finds it in WAL mode")
    func openingWaits() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("store.sqlite")
        let store = try SyncStore(path: path)
        let events = Mutex<[String]>([])
        let opened = DispatchSemaphore(value: 0)

        let (_, journaled) = try store.fillingEmptyStore {
            // When another opener starts while the transaction runs
            Thread {
                do {
                    let other = try SyncStore(path: path) { events.withLock { $0.append("waiting") } }
                    let live = try other.reading { try $0.counts().live }
                    events.withLock { $0.append("opened, \(live) records") }
                } catch {
                    events.withLock { $0.append("failed: \(error)") }
                }
                opened.signal()
            }.start()
            // (It says it waits; with no lock in the way it would open at once, and never say so.)
            var tries = 0
            while events.withLock({ $0.isEmpty }) && tries < 6_000 {
                usleep(10_000)
                tries += 1
            }
            try Self.fill(store, count: 1_000)
            events.withLock { $0.append("filled") }
        }

        // Then it opened only after the filling, and saw every record
        #expect(journaled)
        opened.wait()
        #expect(events.withLock { $0 } == ["waiting", "filled", "opened, 1000 records"])
        #expect(try Self.modes(path).journal == "wal")
    }

    /// Inserts one record with an id that `fill` does not use.
    static func insertOne(_ store: SyncStore) throws {
        try store.transaction { session in
            let record = ReadOnly.Record(version: Sample.version(Sample.id(900_000)))
            let inserts = try session.newRecords(at: Sample.now)
            try inserts.insert(record, as: StoredLine(of: record))
            try inserts.flush()
        }
    }

    @Test("the changes of journal mode are not taken for another process's commits; another connection's commit is")
    func changeTokenIgnoresOwnModeChanges() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("store.sqlite")
        let store = try SyncStore(path: path)
        let before = try store.externalChangeToken()

        // When a first merge fills the store in rollback-journal mode, then one fails
        #expect(try store.fillingEmptyStore { try Self.fill(store, count: 1_000) }.journaled)
        #expect(try store.externalChangeToken() == before, "syncd would take its own first merge for another's change")
        let empty = try SyncStore(path: directory.path("empty.sqlite"))
        let emptyBefore = try empty.externalChangeToken()
        #expect(throws: (any Error).self) { _ = try empty.fillingEmptyStore { try Self.insertOne(empty); throw CancellationError() } }
        #expect(try empty.externalChangeToken() == emptyBefore)

        // Then a commit by another connection (as another process's) still changes the token
        let other = try SyncStore(path: path)
        try Self.insertOne(other)
        #expect(try store.externalChangeToken() != before)
    }

    @Test("a return to WAL mode that fails is said, and the next write transaction makes it")
    func returnToWALRetried() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("store.sqlite")
        let store = try SyncStore(path: path, busyTimeout: 0.2)
        // Given a reader in another connection holding the database's shared lock (in
        // rollback-journal mode) when the store returns to WAL mode
        let reading = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        store.setBeforeReturnToWAL {
            Thread {
                do {
                    let reader = try DatabaseQueue(path: path)
                    try reader.read { db in
                        _ = try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master")
                        reading.signal()
                        release.wait()
                    }
                } catch {
                    reading.signal()
                }
                finished.signal()
            }.start()
            reading.wait()
        }

        // When a first merge fills the store
        let before = try store.externalChangeToken()
        #expect(try store.fillingEmptyStore { try Self.fill(store, count: 1_000) }.journaled)

        // Then the store is whole, still in rollback-journal mode, and says why
        store.setBeforeReturnToWAL(nil)
        #expect(store.walModeProblem != nil)
        #expect(try Self.modes(path).journal == "delete")
        #expect(try store.reading { try $0.counts().live } == 1_000)

        // And once the reader is gone, the next write transaction returns it to WAL mode
        release.signal()
        finished.wait()
        try Self.insertOne(store)
        #expect(store.walModeProblem == nil)
        #expect(try Self.modes(path).journal == "wal")
        let writerModes = try store.transaction { session in
            (try String.fetchOne(session.db, sql: "PRAGMA journal_mode"), try Int.fetchOne(session.db, sql: "PRAGMA synchronous"))
        }
        #expect(writerModes.0 == "wal" && writerModes.1 == 1)
        #expect(try store.reading { try $0.counts().live } == 1_001)
        #expect(try store.externalChangeToken() == before)
    }
}
