/// How the daemon paces itself; read from the configuration and re-read on SIGHUP.
public struct DaemonTimings: Sendable, Hashable {
    /// How long the folder must be quiet after a change before the merge pass runs.
    public var settle: Duration
    /// How often every file is read again whatever inotify said.
    public var rescanInterval: Duration
    /// How often a folder on a remote file system (NFS, SMB, FUSE) is scanned.
    public var pollInterval: Duration
    /// Poll even on a local file system (for file systems `statfs` cannot tell apart).
    public var alwaysPoll: Bool

    /// Timings from their parts; the defaults are 200 ms, one hour, 10 s, and polling only where needed.
    public init(
        settle: Duration = .milliseconds(200), rescanInterval: Duration = .seconds(3600),
        pollInterval: Duration = .seconds(10), alwaysPoll: Bool = false
    ) {
        self.settle = settle
        self.rescanInterval = rescanInterval
        self.pollInterval = pollInterval
        self.alwaysPoll = alwaysPoll
    }
}
