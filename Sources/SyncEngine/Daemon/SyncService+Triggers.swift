import Inotify
import Logging
import ServiceLifecycle
import SnapshotFormat
import UnixSignals

extension SyncService {
    /// Turns watcher events into pass requests; a vanished shared folder is waited for and watched again.
    func forward(_ events: AsyncStream<DirectoryWatcher.Event>, watcher: DirectoryWatcher) async {
        let folder = device.folder.path
        let state = device.settings.stateDirectory
        for await event in events {
            switch event {
            case .entryChanged(let directory, let name, let change) where directory == folder:
                // Temporary files (ours and sync tools') and other names are not snapshots.
                guard SourceFileName.isConsidered(name) else { continue }
                // This process's own publication: its pass already recorded the file.
                if change == .completed, device.isOwnRename(name) { continue }
                scheduler.fileChanged(name, complete: change == .completed)
            case .entryChanged(let directory, let name, _) where directory == state:
                guard name.hasPrefix("store.sqlite") else { continue }
                scheduler.request { $0.storeMayHaveChanged = true }
            case .entryChanged:
                continue
            case .overflow:
                logger.warning("the inotify queue overflowed: reading every file again")
                scheduler.request { $0.rereadAll = true }
            case .directoryGone(let directory) where directory == folder:
                logger.error(
                    "the shared folder is gone (deleted, moved or unmounted); nothing is deleted, waiting for it to come back",
                    metadata: ["folder.path": "\(folder)"])
                send("STATUS=shared folder \(folder) is missing; waiting for it")
                await waitForDirectory(folder)
                guard !Task.isCancelled else { return }
                watcher.rewatch(folder)
                logger.notice("the shared folder is back: watching it again", metadata: ["folder.path": "\(folder)"])
                scheduler.request { $0.rereadAll = true }
            case .directoryGone(let directory):
                logger.error("a watched directory is gone", metadata: ["directory": "\(directory)"])
            }
        }
    }

    /// Sleeps (cancellably) until `path` is a directory again.
    private func waitForDirectory(_ path: String) async {
        while !Task.isCancelled && !SystemCalls.isDirectory(path) {
            try? await Task.sleep(for: .seconds(1))
        }
    }

    /// Requests a pass every interval until cancelled; a reload restarts the countdown with the
    /// interval it sets.
    func repeatEvery(
        _ interval: @escaping @Sendable (DaemonTimings) -> Duration,
        _ change: @escaping @Sendable (inout PassRequest) -> Void
    ) async {
        while !Task.isCancelled {
            let wait = timings.withLock { interval($0) }
            if await reloaded.sleep(for: wait) { continue }
            scheduler.request(change)
        }
    }

    /// Tells systemd the daemon is alive, at half of `WATCHDOG_USEC`.
    func pingWatchdog(every interval: Duration) async {
        while !Task.isCancelled {
            send("WATCHDOG=1")
            do {
                try await Task.sleep(for: interval)
            } catch {
                return
            }
        }
    }

    /// Re-reads the configuration on SIGHUP.
    func reloadOnHangup() async {
        for await _ in await UnixSignalsSequence(trapping: .sighup) {
            send("RELOADING=1\nMONOTONIC_USEC=\(SystemCalls.monotonicMicroseconds())")
            do {
                let updated = try await reload()
                timings.withLock { $0 = updated }
                reloaded.wakeAll()
                logger.notice(
                    "configuration re-read",
                    metadata: ["settle": "\(updated.settle)", "rescan": "\(updated.rescanInterval)"])
            } catch {
                logger.error("cannot re-read the configuration; keeping the current one: \(error)")
            }
            send("READY=1")
            scheduler.request { $0.rereadAll = true }
        }
    }
}
