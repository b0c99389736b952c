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

/// Collects pass requests from watchers and timers, and lets a burst of folder events settle.
///
/// One consumer (the daemon's loop) waits on ``signals``, then waits until no folder event has
/// arrived for the settle delay, then takes the merged request. Nothing here wakes up while idle.
final class PassScheduler: Sendable {
    private struct State {
        var pending: PassRequest?
        var lastFolderEvent: ContinuousClock.Instant?
    }

    private let state = Mutex(State())
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
            if request.folderChanged { state.lastFolderEvent = .now }
            state.pending = request
        }
        continuation.yield()
    }

    /// How long to wait before the folder has been quiet for `settle`; zero when it has.
    func remainingSettleTime(_ settle: Duration) -> Duration {
        state.withLock { state in
            guard let last = state.lastFolderEvent else { return .zero }
            let quiet = ContinuousClock.now - last
            return quiet >= settle ? .zero : settle - quiet
        }
    }

    /// Takes the pending request, nil when there is none.
    func take() -> PassRequest? {
        state.withLock { state in
            defer {
                state.pending = nil
                state.lastFolderEvent = nil
            }
            return state.pending
        }
    }

    /// Ends ``signals``.
    func finish() {
        continuation.finish()
    }
}
