/// Notices a merge pass that has stopped moving: a read or a `stat` that never returns, as on an
/// NFS mount whose server went away (a `hard` mount waits for it forever), a hung FUSE file
/// system, or a disk that stopped answering.
///
/// The watchdog cannot: it proves the daemon's loop alive, and the pass runs on a thread of its
/// own. Restarting syncd would not help either: a new process would hang on the same folder (and
/// on some file systems a process in such a read cannot be killed until it returns). So the
/// daemon says so instead (log and `systemctl status`), once per stall, and again when the pass
/// moves on.
///
/// Progress is what the pass reports in ``PassProgress``: its phase, the files read, the groups of
/// ids merged, the versions merged. A state unchanged for ``threshold`` while a pass runs is a stall.
/// Only a pass is watched: a hang in what the daemon does between passes (its check of the folder's
/// path, of the store before a pass) is not seen here.
struct PassStall {
    /// How long a running pass may report no progress before it counts as stalled.
    let threshold: Duration
    /// The last state seen while a pass ran, and since when it has been the same.
    private var last: (state: PassProgress.State, since: SuspendingClock.Instant)?
    /// Whether the current stall was reported.
    private var reported = false

    enum Event: Equatable {
        /// A running pass reported nothing new for `duration`.
        case stalled(PassProgress.State, for: Duration)
        /// A pass reported as stalled moved on (or ended) after being stuck for `duration`.
        case moving(after: Duration)
    }

    init(threshold: Duration) {
        self.threshold = threshold
    }

    /// Looks at the pass's progress at `now`; what to report, if anything. (On the clock that
    /// stops while the machine sleeps: a laptop suspended mid-pass has not stalled.)
    mutating func observe(_ state: PassProgress.State, at now: SuspendingClock.Instant) -> Event? {
        guard let last, last.state == state else {
            let stuckFor = last.map { now - $0.since }
            let wasReported = reported
            self.last = state.phase == .done ? nil : (state, now)
            reported = false
            if wasReported, let stuckFor { return .moving(after: stuckFor) }
            return nil
        }
        let unchanged = now - last.since
        guard !reported, unchanged >= threshold else { return nil }
        reported = true
        return .stalled(state, for: unchanged)
    }

    /// How often to look: often enough to report within a tenth of the threshold of it.
    var checkInterval: Duration { threshold / 10 }

    /// The default threshold: longer than any step of a pass that works (a listing of 200,000
    /// files on a slow NFS server, a commit of a first merge's gigabytes), short enough that a
    /// person looking at `systemctl status` learns of a hung mount the same morning.
    static let defaultThreshold = Duration.seconds(300)
}

extension Duration {
    /// Whole seconds, for a person: "300 s".
    var wholeSeconds: String { "\(components.seconds) s" }
}

extension PassProgress.State {
    /// Where the pass is, for a person.
    var whereItIs: String {
        switch phase {
        case .listing: "listing the shared folder"
        case .reading: "reading \(filesToRead) file(s)"
        case .merging: "merging, \(filesRead) of \(filesToRead) file(s) read"
        case .publishing: "saving, and publishing this device's files"
        case .done: "done"
        }
    }
}
