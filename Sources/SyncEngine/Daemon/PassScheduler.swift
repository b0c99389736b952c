import Synchronization

/// Why the daemon should run a merge pass; requests made while one is pending are merged.
public struct PassRequest: Sendable, Hashable {
    /// Parse every file again even when its stat is unchanged (overflow, lost watch, periodic rescan).
    public var rereadAll = false
    /// Another process may have written the store: check, and publish if its content changed.
    public var storeMayHaveChanged = false
    /// A file in the shared folder changed.
    public var folderChanged = false

    public init() {}
}

/// Collects pass requests from watchers and timers, and lets files being written in place settle.
///
/// One consumer (the daemon's loop) waits on ``signals``, then waits until every shared file
/// being written in place has been quiet for the settle delay, then takes the merged request.
/// A file that arrives complete (renamed into the folder, as atomic writers and sync engines
/// publish it, or closed after writing) needs no wait: the change is merged at once. Nothing here
/// wakes up while idle.
final class PassScheduler: Sendable {
    private struct State {
        var pending: PassRequest?
        /// Shared files written in place and not yet closed: the time of each one's last write.
        var writing: [String: ContinuousClock.Instant] = [:]
        /// When a shared file last changed.
        var lastChange: ContinuousClock.Instant?
    }

    private let state = Mutex(State())
    /// Cuts a settle wait short when the last file being written in place is done.
    let settled = Wakeup()
    /// A signal per request; consecutive signals collapse into one.
    let signals: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation

    init() {
        (signals, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Asks for a pass, merged into any pending request.
    func request(_ change: (inout PassRequest) -> Void) {
        state.withLock { state in
            var request = state.pending ?? PassRequest()
            change(&request)
            state.pending = request
        }
        continuation.yield()
    }

    /// Asks for a pass because the shared file `name` changed: `complete` when its writer is done
    /// with it (closed, renamed in or out, removed), not when it was written to and may be again.
    func fileChanged(_ name: String, complete: Bool, at now: ContinuousClock.Instant = .now) {
        let lastDone = state.withLock { state -> Bool in
            var request = state.pending ?? PassRequest()
            request.folderChanged = true
            state.pending = request
            state.lastChange = now
            guard complete else {
                state.writing[name] = now
                return false
            }
            return state.writing.removeValue(forKey: name) != nil && state.writing.isEmpty
        }
        continuation.yield()
        if lastDone { settled.wakeAll() }
    }

    /// How long to wait until every file being written in place has been quiet for `settle`;
    /// zero when none is being written.
    ///
    /// A file whose writer has been quiet for `settle` counts as written even if it was never
    /// closed (writers through `mmap`, or ones that keep it open): the pass reads it, and a file
    /// that is still incomplete then is reported and read again at its next change.
    func remainingSettleTime(_ settle: Duration, at now: ContinuousClock.Instant = .now) -> Duration {
        state.withLock { state in
            state.writing = state.writing.filter { now - $0.value < settle }
            guard let last = state.writing.values.max() else { return .zero }
            return settle - (now - last)
        }
    }

    /// The shared files being written in place, by name.
    var namesBeingWritten: [String] { state.withLock { $0.writing.keys.sorted() } }

    /// How long until no shared file has changed for `quiet`: zero once it has been quiet that long.
    ///
    /// Files often arrive in bursts (a peer splitting its snapshot publishes 16 parts at once; a
    /// sync engine delivers a peer's parts one after another): a pass waits for a short quiet
    /// moment, so that it reads the whole burst instead of its first file.
    func remainingQuietTime(_ quiet: Duration, at now: ContinuousClock.Instant = .now) -> Duration {
        state.withLock { state in
            guard let last = state.lastChange, now - last < quiet else { return .zero }
            return quiet - (now - last)
        }
    }

    /// Drops the pending request's changed files and store, which a pass about to list the folder
    /// and read the store covers: their events came before it (a `syncctl put` beside syncd
    /// commits, renames its parts in and unlocks while syncd's pass waits for the lock; the
    /// renames' events would otherwise bring a second pass that finds nothing to do). A pending
    /// reread of every file stays. Files being written in place stay known as such (the next
    /// pass still waits for them to settle; their next write or close asks for it).
    func dropCovered() {
        state.withLock { state in
            guard var request = state.pending else { return }
            request.folderChanged = false
            request.storeMayHaveChanged = false
            state.pending = request == PassRequest() ? nil : request
        }
    }

    /// Takes the pending request, nil when there is none.
    func take() -> PassRequest? {
        state.withLock { state in
            defer { state.pending = nil }
            return state.pending
        }
    }

    /// Ends ``signals``.
    func finish() {
        continuation.finish()
    }
}
