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
                logger.debug("folder changed", metadata: ["file": "\(name)", "file.complete": "\(change == .completed)"])
            case .entryChanged(let directory, let name, _) where directory == state:
                guard name.hasPrefix("store.sqlite") else { continue }
                scheduler.request { $0.storeMayHaveChanged = true }
                logger.debug("store written", metadata: ["file": "\(name)"])
            case .entryChanged:
                continue
            case .overflow:
                logger.warning("the inotify queue overflowed: reading every file again")
                scheduler.request { $0.rereadAll = true }
            case .watchFailed(let directory, let reason) where directory == folder:
                // Not gone: it cannot be watched (its permissions, the limit on watches). It is
                // read every so often meanwhile, and watched again once it can be.
                logger.error(
                    "cannot watch the shared folder again: \(reason); reading it every \(Self.rewatchInterval) until it can be watched",
                    metadata: ["folder.path": "\(folder)"])
                scheduler.request { $0.rereadAll = true }
                do {
                    try await Task.sleep(for: Self.rewatchInterval)
                } catch {
                    return
                }
                watcher.rewatch(folder)
            case .watchFailed(let directory, let reason):
                logger.error("cannot watch a directory again: \(reason)", metadata: ["directory": "\(directory)"])
            case .directoryGone(let directory) where directory == folder && isFolderThere(folder):
                // Gone and back already (moved away and back: the move back is reported as the
                // folder moving too, after it was seen back), or another directory in its place:
                // it is there, so it is watched again and read, without an alarm.
                if !followFolderPathIfMoved(WatchedFolder(folder)) { watcher.rewatch(folder) }
                logger.debug("the shared folder moved, and is there: watching it again", metadata: ["folder.path": "\(folder)"])
                scheduler.request { $0.rereadAll = true }
            case .directoryGone(let directory) where directory == folder:
                logger.error(
                    "the shared folder is gone (deleted, moved or unmounted); nothing is deleted, waiting for it to come back",
                    metadata: ["folder.path": "\(folder)"])
                send("STATUS=shared folder \(folder) is missing; waiting for it")
                if let now = WatchedFolder(folder), isBareMountPoint(now) {
                    logger.error("\(Self.unmountedAdvice)", metadata: ["folder.path": "\(folder)"])
                }
                await waitForDirectory(folder)
                guard !Task.isCancelled else { return }
                watchedFolder.withLock { $0 = WatchedFolder(folder) }
                watcher.rewatch(folder)
                logger.notice("the shared folder is back: watching it again", metadata: ["folder.path": "\(folder)"])
                scheduler.request { $0.rereadAll = true }
            case .directoryGone(let directory):
                logger.error("a watched directory is gone", metadata: ["directory": "\(directory)"])
            }
        }
    }

    /// How long the folder waits to be watched again when it cannot be (it is read meanwhile).
    static let rewatchInterval = Duration.seconds(10)

    /// Sleeps (cancellably) until `path` is the folder again: a directory, and not the bare
    /// directory under the file system that was mounted there (nothing is published on it).
    private func waitForDirectory(_ path: String) async {
        while !Task.isCancelled && !isFolderThere(path) {
            try? await Task.sleep(for: .seconds(1))
        }
    }

    private func isFolderThere(_ path: String) -> Bool {
        guard let now = WatchedFolder(path) else { return false }
        return !isBareMountPoint(now)
    }

    /// What is said of a folder whose file system is unmounted, and what to do.
    static let unmountedAdvice =
        "the shared folder's file system is not mounted (it was a mount point when last watched): the directory under it is not the folder, so nothing is read from or published to it until the file system is mounted again; if the folder is meant to be that directory now, restart syncd"

    /// Whether `now`, the directory the folder's path names, is the bare directory under the
    /// file system that was mounted there when it was last watched: the same directory path, no
    /// longer a mount point.
    func isBareMountPoint(_ now: WatchedFolder) -> Bool {
        guard let watched = watchedFolder.withLock({ $0 }) else { return false }
        return watched.wasMountPoint && !now.wasMountPoint && now.realPath == watched.realPath
    }

    /// Watches the shared folder again when its path comes to name another directory without an
    /// event inotify reports (inotify follows a directory, not its path): a file system mounted on
    /// it after syncd started or again after an unmount, a symbolic link re-pointed (`ln -sfn`).
    /// Checked every `interval`, and before and after each pass (``followFolderPathIfMoved()``).
    func followFolderPath(every interval: Duration) async {
        while !Task.isCancelled {
            do {
                try await Task.sleep(for: interval)
            } catch {
                return
            }
            if followFolderPathIfMoved(WatchedFolder(device.folder.path)) { scheduler.request { $0.rereadAll = true } }
        }
    }

    /// Watches the folder's path again if `now`, the directory it names, is another than the one
    /// watched (and not the bare directory of an unmounted file system); true when it did.
    func followFolderPathIfMoved(_ now: WatchedFolder?) -> Bool {
        let folder = device.folder.path
        guard let now, !isBareMountPoint(now), let watcher = watcher.withLock({ $0 }) else { return false }
        let moved = watchedFolder.withLock { watched in
            guard watched.map({ !$0.isSameDirectory(as: now) }) ?? true else { return false }
            watched = now
            return true
        }
        guard moved else { return false }
        watcher.rewatch(folder)
        logger.notice(
            "the shared folder's path names another directory now (a file system mounted on it, or a link re-pointed): watching it and reading every file again",
            metadata: ["folder.path": "\(folder)"])
        return true
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

    /// Says when a merge pass stops moving, and when it moves again (see ``PassStall``).
    func reportStalledPasses(threshold: Duration) async {
        var stall = PassStall(threshold: threshold)
        while !Task.isCancelled {
            switch stall.observe(device.progress.current, at: SuspendingClock.now) {
            case .stalled(let state, let duration)?:
                let line = "the merge pass has made no progress for \(duration.wholeSeconds) (\(state.whereItIs))"
                logger.warning(
                    "\(line): a read of the shared folder or the store may hang (an NFS server gone away, a hung FUSE mount, a failing disk); syncd waits for it, and nothing is lost (a restart would hang on the same folder)",
                    metadata: ["folder.path": "\(device.folder.path)", "state.directory": "\(device.settings.stateDirectory)"])
                passes.withLock { $0.stalled = line }
                send("STATUS=" + statusLine())
            case .moving(let duration)?:
                logger.notice("the merge pass moves again, after \(duration.wholeSeconds) without progress")
                passes.withLock { $0.stalled = nil }
                send("STATUS=" + statusLine())
            case nil:
                break
            }
            do {
                try await Task.sleep(for: stall.checkInterval)
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

/// Which directory the shared folder's path names, as syncd watches it.
struct WatchedFolder: Sendable {
    /// The path with every link resolved (a re-pointed link gives another).
    var realPath: String
    /// Its file system and inode (a file system mounted on it gives others).
    var fileSystemDevice: Int64
    var inode: Int64
    /// Whether it is on another file system than its parent: a mount point. While that file
    /// system is unmounted, the same path names the bare directory under it.
    var wasMountPoint: Bool

    /// The directory `path` names now, nil when it names none.
    init?(_ path: String) {
        guard let realPath = try? SystemCalls.resolvedPath(path), let status = try? SystemCalls.status(realPath),
            status.kind == .directory, let parent = try? SystemCalls.status(realPath + "/..")
        else { return nil }
        self.realPath = realPath
        (fileSystemDevice, inode) = (status.fileSystemDevice, status.inode)
        wasMountPoint = status.fileSystemDevice != parent.fileSystemDevice
    }

    /// Whether `other` is the same directory.
    func isSameDirectory(as other: WatchedFolder) -> Bool {
        fileSystemDevice == other.fileSystemDevice && inode == other.inode
    }
}
