import Dispatch
import Glibc
import Inotify
import Logging
import ServiceLifecycle
import SnapshotFormat
import Synchronization

/// The daemon: keeps this device in step with the shared folder until asked to stop.
///
/// inotify is a hint and the scan is the truth: events schedule a merge pass once the folder has
/// been quiet for a moment; an overflow, a lost watch or the periodic rescan makes the pass read
/// every file again; on NFS, SMB and FUSE mounts it polls. It also notices other processes writing
/// the store (`syncctl put`, apps) and publishes their changes.
public final class SyncService: Service, Sendable {
    let device: SyncDevice
    let notify: NotifySocket?
    let logger: Logger
    let timings: Mutex<DaemonTimings>
    let reload: @Sendable () async throws -> DaemonTimings
    let scheduler = PassScheduler()
    /// Cuts timer sleeps short when SIGHUP brings new timings.
    let reloaded = Wakeup()
    let passes = Mutex(PassStatistics())
    /// Written after each pass, when given.
    let metrics: DaemonMetrics?
    /// Whether the last write of the metrics file failed (said once, until it works again).
    let metricsFailing = Mutex(false)
    /// The directory the shared folder's path named when it was last watched (see
    /// ``followFolderPath(every:)``).
    let watchedFolder = Mutex<WatchedFolder?>(nil)
    /// The watcher of the folder and the state directory, while syncd runs.
    let watcher = Mutex<DirectoryWatcher?>(nil)
    /// The directory the folder's path named at start, if it was on a writable mount then (see
    /// ``isFolderSandboxedAway()``).
    let startedFolder = Mutex<WatchedFolder?>(nil)
    /// Why syncd must start again to publish (see ``isFolderSandboxedAway()``): set by a pass,
    /// it ends the loop and `run()` throws it.
    let mustRestart = Mutex<EngineError?>(nil)
    /// Whether systemd started this process (`INVOCATION_ID`, and `SYSTEMD_EXEC_PID` naming it),
    /// so that an exit for a restart is followed by one (`Restart=on-failure`).
    let startedBySystemd: Bool

    /// What the daemon has done, for `STATUS=` and the log.
    struct PassStatistics: Sendable {
        var count = 0
        var lastReport: MergeReport?
        var lastError: String?
        var storeToken: Int?
        var folderMissing = false
        var notifyFailed = false
        /// What a pass that stopped moving was doing (see ``PassStall``).
        var stalled: String?
        /// The files whose names are not valid UTF-8 that a warning named already.
        var namedNotUTF8: Set<String> = []
    }

    /// A service for `device`; `reload` re-reads the configuration on SIGHUP.
    ///
    /// - Parameter metricsFile: where to write the metrics after each pass (docs/daemon.md), nil for none.
    public init(
        device: SyncDevice, timings: DaemonTimings, notify: NotifySocket?, logger: Logger, metricsFile: String? = nil,
        reload: @escaping @Sendable () async throws -> DaemonTimings
    ) {
        metrics = metricsFile.map(DaemonMetrics.init(path:))
        // systemd sets INVOCATION_ID for a service's processes, and (since 248) SYSTEMD_EXEC_PID to
        // the PID it started: a process started by hand from a service's descendant inherits both.
        startedBySystemd =
            getenv("INVOCATION_ID") != nil
            && getenv("SYSTEMD_EXEC_PID").map { String(cString: $0) == String(getpid()) } ?? true
        self.device = device
        self.timings = Mutex(timings)
        self.notify = notify
        self.logger = logger
        self.reload = reload
    }

    public func run() async throws {
        let remote = RemoteFileSystem.name(of: device.folder.path)
        let watcher: DirectoryWatcher
        do {
            watcher = try DirectoryWatcher(
                directories: [device.folder.path, device.settings.stateDirectory],
                wakeFile: device.settings.stateDirectory + "/watcher.wake")
        } catch {
            // The folder cannot be read (its permissions): a folder problem, as syncctl reports it.
            guard error.unwatchableDirectory == device.folder.path else { throw error }
            throw EngineError.sharedFolderMissing(path: device.folder.path, reason: error.description)
        }
        let folder = WatchedFolder(device.folder.path)
        watchedFolder.withLock { $0 = folder }
        if !SystemCalls.isOnReadOnlyMount(device.folder.path) { startedFolder.withLock { $0 = folder } }
        self.watcher.withLock { $0 = watcher }
        if let remote {
            logger.notice(
                "the shared folder is on \(remote): inotify does not see other machines' changes there, so it is scanned every \(timings.withLock { $0.pollInterval })",
                metadata: ["folder.path": "\(device.folder.path)", "folder.filesystem": "\(remote)"])
        }
        if let advice = SyncthingIgnore.advice(forFolder: device.folder.path) { logger.notice("\(advice)") }
        scheduler.request {
            $0.rereadAll = true; $0.storeMayHaveChanged = true
        }
        // The first merge of a large folder can outlast systemd's start timeout: READY=1 follows it.
        send("STATUS=merging the shared folder for the first time")
        send("EXTEND_TIMEOUT_USEC=600000000")
        await withDiscardingTaskGroup { group in
            group.addTask { await self.forward(watcher.events, watcher: watcher) }
            group.addTask { await self.repeatEvery({ $0.rescanInterval }) { $0.rereadAll = true } }
            if remote != nil || timings.withLock({ $0.alwaysPoll }) {
                group.addTask { await self.repeatEvery({ $0.pollInterval }) { $0.folderChanged = true } }
            }
            if let interval = notify?.watchdogInterval {
                group.addTask { await self.pingWatchdog(every: interval) }
            }
            group.addTask { await self.reloadOnHangup() }
            group.addTask { await self.reportStalledPasses(threshold: PassStall.defaultThreshold) }
            group.addTask { await self.followFolderPath(every: Self.folderPathCheckInterval) }
            await runPasses()
            send("STOPPING=1")
            watcher.stop()
            group.cancelAll()
        }
        // Asked to stop meanwhile: a stop, not a failure (the next start binds the new folder anyway).
        if let reason = mustRestart.withLock({ $0 }), !Task.isShuttingDownGracefully { throw reason }
        logger.notice("syncd stopped")
    }

    /// The loop: one pass at a time, once the files being written in place have settled, until
    /// graceful shutdown.
    private func runPasses() async {
        var isReady = false
        var failures = 0
        var fightsOverOwnName = 0
        for await _ in scheduler.signals.cancelOnGracefulShutdown() {
            let settle = timings.withLock { $0.settle }
            // Files written in place settle; the wait ends early when the last one is closed, and
            // at once on graceful shutdown (the next start rereads every file: nothing is lost).
            // It is bounded: a file written without a pause (a log named *.json, a slow copy)
            // must not hold back every other device's changes.
            await cancelWhenGracefulShutdown { [scheduler, logger] in
                let started = ContinuousClock.now
                let longest = Self.longestSettleWait(settle)
                while !Task.isCancelled {
                    let ticket = scheduler.settled.ticket
                    let wait = scheduler.remainingSettleTime(settle)
                    guard wait > .zero else { break }
                    let left = longest - (ContinuousClock.now - started)
                    guard left > .zero else {
                        logger.notice(
                            "files are still being written in place: merging now; each is read again when it changes",
                            metadata: [
                                "files": "\(scheduler.namesBeingWritten.joined(separator: " "))",
                                "waited": "\(longest)",
                            ])
                        break
                    }
                    _ = await scheduler.settled.sleep(for: min(wait, left), unlessWokenSince: ticket)
                }
            }
            if Task.isShuttingDownGracefully { break }
            await waitForQuietFolder()
            guard let request = scheduler.take() else { continue }
            let (failed, impostors) = await runPass(request)
            if mustRestart.withLock({ $0 }) != nil { break }
            if !isReady && !Task.isShuttingDownGracefully {
                isReady = true
                send("READY=1")
                logger.notice(
                    "syncd is ready",
                    metadata: ["device.id": "\(device.device)", "folder.path": "\(device.folder.path)"])
            }
            send("STATUS=" + statusLine())
            // (A pass with nothing to do changes nothing: the store's own event after a failure.)
            if let failed { failures = failed ? failures + 1 : 0 }
            if failed == true {
                if failures > 1 {
                    // A pass that keeps failing (a full disk, a store or a folder it cannot write)
                    // would otherwise run again at every event, its own attempts' included: after
                    // the second failure in a row, passes wait 1, 2, 4, 8, 16, then 30 s. The
                    // requests wait meanwhile; none is lost. A missing folder has a wait of its own.
                    let delay = Duration.seconds(failures > 6 ? 30 : 1 << (failures - 2))
                    logger.notice(
                        "waiting before the next pass",
                        metadata: ["pass.failures": "\(failures)", "pass.retryIn": "\(delay)"])
                    try? await cancelWhenGracefulShutdown { try await Task.sleep(for: delay) }
                }
                // The failed pass is tried again, event or not: once the disk has room, what it
                // merged is published without waiting for the next change or the hourly rescan.
                scheduler.request { pending in
                    pending.rereadAll = pending.rereadAll || request.rereadAll
                    pending.storeMayHaveChanged = pending.storeMayHaveChanged || request.storeMayHaveChanged
                    pending.folderChanged = true
                }
            }
            // Files under this device's name signed by another key: another device runs with this
            // ID, and each would publish over the other's files at every pass, forever (trust on,
            // neither merges the other's; trust off, each rewrites the other's with its own key).
            // After the second such pass in a row, passes wait 1, 2, 4… up to 60 s: the fight
            // slows to a file a minute, and each pass says so again.
            // (A pass with nothing to do, this process's own store event, changes nothing.)
            if failed != nil { fightsOverOwnName = impostors.isEmpty ? 0 : fightsOverOwnName + 1 }
            if !impostors.isEmpty, fightsOverOwnName > 1 {
                let delay = Duration.seconds(fightsOverOwnName > 7 ? 60 : 1 << (fightsOverOwnName - 2))
                logger.warning(
                    "another device writes files under this device's ID, signed with another key: waiting before publishing over them again",
                    metadata: ["files": "\(impostors.joined(separator: " "))", "pass.retryIn": "\(delay)"])
                try? await cancelWhenGracefulShutdown { try await Task.sleep(for: delay) }
            }
        }
    }

    /// Waits until the shared folder has been quiet for a few milliseconds (at most a few dozen),
    /// so that one pass reads a burst of files that arrive together (see
    /// ``PassScheduler/remainingQuietTime(_:at:)``).
    private func waitForQuietFolder() async {
        let started = ContinuousClock.now
        while !Task.isCancelled, ContinuousClock.now - started < Self.longestBurstWait {
            let wait = scheduler.remainingQuietTime(Self.burstQuiet)
            guard wait > .zero else { return }
            try? await Task.sleep(for: wait)
        }
    }

    /// The longest a pass waits for files written in place to settle: ten settle delays, and at
    /// least 10 s.
    static func longestSettleWait(_ settle: Duration) -> Duration { max(settle * 10, .seconds(10)) }

    /// How often the shared folder's path is checked for naming another directory.
    static let folderPathCheckInterval = Duration.seconds(10)

    /// How long the folder must be quiet for a burst to be over.
    static let burstQuiet = Duration.milliseconds(4)
    /// The longest a pass waits for a burst to end.
    static let longestBurstWait = Duration.milliseconds(40)

    /// Runs one merge pass on a thread of its own: it blocks on files and SQLite.
    ///
    /// - Returns: whether the pass failed (but for a missing shared folder, which is waited for),
    ///   nil when there was nothing to do; and the files under this device's own name it rejected
    ///   as signed by another key (another device using this ID).
    private func runPass(_ request: PassRequest) async -> (failed: Bool?, impostors: [String]) {
        let device = device
        if request.storeMayHaveChanged {
            let token = try? device.store.externalChangeToken()
            let changed = passes.withLock { $0.storeToken == nil || $0.storeToken != token }
            passes.withLock { $0.storeToken = token }
            // Only the store changed, and only by this process: nothing to do.
            if !changed && !request.folderChanged && !request.rereadAll { return (nil, []) }
        }
        logger.debug(
            "merge pass starting",
            metadata: [
                "pass.folderChanged": "\(request.folderChanged)", "pass.storeChanged": "\(request.storeMayHaveChanged)",
                "pass.rereadAll": "\(request.rereadAll)",
            ])
        let started = ContinuousClock.now
        // A pass reads the folder by its path: the directory it names now is the one watched.
        let now = WatchedFolder(device.folder.path)
        let rereadAll = followFolderPathIfMoved(now) || request.rereadAll
        let unmounted =
            now.map(isBareMountPoint) == true ? Self.unmountedAdvice : nil
        let scheduler = scheduler
        let outcome: Result<MergeReport, any Error> = await withCheckedContinuation { done in
            DispatchQueue.global(qos: .utility).async {
                done.resume(
                    returning: Result {
                        // A bare mount point is not the folder: nothing is read from or published to it.
                        if let unmounted {
                            throw EngineError.sharedFolderMissing(path: device.folder.path, reason: unmounted)
                        }
                        return try device.merge(rereadAll: rereadAll) {
                            // What changed before now, this pass reads: the pending requests for
                            // it go, and the store's state as other processes left it is the one
                            // the next store event is compared with.
                            scheduler.dropCovered()
                            let token = try? device.store.externalChangeToken()
                            self.passes.withLock { $0.storeToken = token }
                        }
                    })
            }
        }
        // A file system mounted on the folder during the pass was read, but the check above saw
        // the directory under it: look again, so that its unmount is known as one.
        if followFolderPathIfMoved(WatchedFolder(device.folder.path)) { scheduler.request { $0.rereadAll = true } }
        writeMetrics(outcome, took: ContinuousClock.now - started)
        passes.withLock { statistics in
            statistics.count += 1
            statistics.stalled = nil
            switch outcome {
            case .success(let report):
                statistics.lastReport = report
                statistics.lastError = nil
                statistics.folderMissing = false
            case .failure(let error):
                statistics.lastError = String(describing: error)
                if case EngineError.sharedFolderMissing? = error as? EngineError { statistics.folderMissing = true }
            }
        }
        switch outcome {
        case .success(let report):
            // A file no pass can read by its name (not valid UTF-8): said once, not at every pass.
            let notUTF8 = report.sources.filter { $0.problemKind == SyncDevice.notUTF8Kind }.map(\.name)
            let newlyFound = passes.withLock { statistics in
                defer { statistics.namedNotUTF8 = Set(notUTF8) }
                return notUTF8.filter { !statistics.namedNotUTF8.contains($0) }
            }
            for name in newlyFound {
                logger.warning("not read: \(SyncDevice.notUTF8Reason)", metadata: ["file": "\(name)"])
            }
            let own = device.device.rawValue
            // Rejected as signed by another key (trust on), or read and found written by another
            // device (trust off: this device publishes over it, with its own key, as its peers need).
            let impostors = report.sources.filter {
                $0.device == own
                    && ($0.status == .rejected && $0.problemKind == "untrusted"
                        || $0.status != .unchanged && $0.warning?.contains(SyncDevice.anotherDeviceUsesThisID) == true)
            }
            return (false, impostors.map(\.name))
        case .failure(let error):
            logger.error("merge pass failed: \(error)", metadata: ["folder.path": "\(device.folder.path)"])
            if case EngineError.sharedFolderMissing? = error as? EngineError { return (false, []) }
            if case EngineError.publishFailed? = error as? EngineError, startedBySystemd, isFolderSandboxedAway() {
                let path = device.folder.path
                logger.error(
                    "the shared folder was deleted and made again since syncd started, and syncd's sandbox shows the new one read-only (ReadWritePaths= bound the old one): syncd exits so that systemd starts it again with the new folder; nothing is lost",
                    metadata: ["folder.path": "\(path)"])
                mustRestart.withLock {
                    $0 = .publishFailed(
                        path: path,
                        reason:
                            "the folder was made again since syncd started, and is read-only inside syncd's sandbox",
                        advice:
                            "the unit's Restart=on-failure starts syncd again with the new folder; or: sudo systemctl restart syncd"
                    )
                }
            }
            return (true, [])
        }
    }

    /// Whether the folder's path now names another directory than at start, on a read-only
    /// mount, while the one at start was on a writable mount. Under systemd's sandbox,
    /// `ReadWritePaths=` bound the directory that was there at start; one deleted and made again
    /// is seen through the read-only rest of the system, and only a new start binds it
    /// (docs/daemon.md). A file system mounted read-only on the folder is not this (the new
    /// directory is then a mount point).
    func isFolderSandboxedAway() -> Bool {
        guard let started = startedFolder.withLock({ $0 }), let now = WatchedFolder(device.folder.path),
            !now.isSameDirectory(as: started), !now.wasMountPoint
        else { return false }
        return SystemCalls.isOnReadOnlyMount(device.folder.path)
    }

    /// Records a pass in the metrics and writes their file.
    private func writeMetrics(_ outcome: Result<MergeReport, any Error>, took: Duration) {
        guard let metrics else { return }
        let counts = try? device.store.reading { try $0.counts() }
        metrics.record(try? outcome.get(), took: took, counts: counts, at: SyncDevice.wallClock())
        do {
            try metrics.write()
            metricsFailing.withLock { $0 = false }
        } catch {
            let first = metricsFailing.withLock { failing in
                defer { failing = true }
                return !failing
            }
            if first { logger.warning("cannot write the metrics file \(metrics.path): \(error)") }
        }
    }

    /// A one-line summary for systemd's `STATUS=`.
    func statusLine() -> String {
        passes.withLock { statistics in
            if let stalled = statistics.stalled { return stalled }
            if statistics.folderMissing { return "shared folder \(device.folder.path) is missing; waiting for it" }
            if let error = statistics.lastError { return "last merge failed: \(error)" }
            guard let report = statistics.lastReport else { return "starting" }
            var line = TextLine.counted(report.sources.count, "source")
            let counts = try? device.store.reading { try $0.counts() }
            if let counts { line += ", " + TextLine.counted(counts.live, "record") }
            line += report.conflicts > 0 ? ", \(report.conflicts) in conflict" : ", no conflicts"
            let rejected = report.sources.filter { $0.status == .skipped || $0.status == .rejected }.count
            if rejected > 0 { line += ", " + TextLine.counted(rejected, "file") + " not merged" }
            let held = report.sources.filter { $0.status == .heldBack }.map(\.name)
            if !held.isEmpty { line += ", held back (mass deletion): " + held.joined(separator: " ") }
            if !report.refusedRecords.isEmpty {
                line += ", " + TextLine.counted(report.refusedRecords.count, "record") + " refused: see the log"
            }
            if !report.warnings.isEmpty { line += ", warnings: see the log" }
            return line
        }
    }

    func send(_ message: String) {
        guard let notify else { return }
        do {
            try notify.send(message)
        } catch {
            // Said once: a full or vanished socket would otherwise fill the log.
            let first = passes.withLock { statistics in
                defer { statistics.notifyFailed = true }
                return !statistics.notifyFailed
            }
            if first { logger.warning("cannot notify systemd (further failures are not logged): \(error)") }
        }
    }
}
