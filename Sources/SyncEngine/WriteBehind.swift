import Dispatch
import Foundation

/// Starts the disk writing, in the background, the pages a long transaction leaves in the page
/// cache: the store's WAL while the transaction fills it, and its database file while the
/// commit's checkpoint copies the WAL into it.
///
/// A cold merge writes tens of MB to each; without this, each `fsync` of the commit waits for all
/// of them to reach the disk at once, after the work is done (measured: the commit of a cold
/// merge of 3 × 100,000 records took 110–280 ms, 75–85 ms with this). SQLite has no setting for
/// it (PostgreSQL's `checkpoint_flush_after` and RocksDB's `bytes_per_sync` do the same), so a
/// thread calls `sync_file_range(2)` (`SYNC_FILE_RANGE_WRITE`: start writing, do not wait) on the
/// files every few milliseconds until ``stop()``. It only changes when pages are written: what is
/// durable, and when, is still decided by SQLite's own fsyncs.
///
/// The database file is never opened here: closing a descriptor drops every POSIX lock the
/// process holds on that file, SQLite's included. Its pages are reached through a descriptor
/// SQLite already holds (found in `/proc/self/fd` by device and inode, and never closed here).
/// Should SQLite close that descriptor meanwhile and the number be reused, the call only starts
/// the writeback of another file. The WAL carries no lock of SQLite's, so it is opened here.
final class WriteBehind: Sendable {
    private let stopped = DispatchSemaphore(value: 0)
    private let finished = DispatchGroup()

    /// Starts on the files at `opening` (opened here; those that do not exist yet are opened once
    /// they do) and on the file at `sharing`, through a descriptor this process already holds.
    init(opening paths: [String], sharing shared: String, every interval: DispatchTimeInterval = .milliseconds(20)) {
        finished.enter()
        let stopped = stopped
        let finished = finished
        // A thread of its own: it sleeps between rounds, and would hold a thread of the pool.
        Thread {
            let borrowed = Self.descriptor(of: shared)
            var opened = [Int32?](repeating: nil, count: paths.count)
            repeat {
                for (index, path) in paths.enumerated() {
                    if opened[index] == nil { opened[index] = try? SystemCalls.openForReadingNoFollow(path) }
                    if let descriptor = opened[index] { SystemCalls.startWriteback(descriptor) }
                }
                if let borrowed { SystemCalls.startWriteback(borrowed) }
            } while stopped.wait(timeout: .now() + interval) == .timedOut
            for case let descriptor? in opened { SystemCalls.close(descriptor) }
            finished.leave()
        }.start()
    }

    /// Stops, and waits for the thread to close the files it opened. Called once.
    func stop() {
        stopped.signal()
        finished.wait()
    }

    /// One of this process's open descriptors of the file at `path` (one is enough: the writeback
    /// is of the file, whichever descriptor names it); nil when there is none or it cannot tell.
    private static func descriptor(of path: String) -> Int32? {
        guard let target = try? SystemCalls.status(path),
            let entries = try? SystemCalls.directoryEntries("/proc/self/fd")
        else { return nil }
        return entries.lazy.compactMap { entry -> Int32? in
            guard let descriptor = Int32(entry), let status = try? SystemCalls.status("/proc/self/fd/\(entry)"),
                status.fileSystemDevice == target.fileSystemDevice, status.inode == target.inode
            else { return nil }
            return descriptor
        }.first
    }
}
