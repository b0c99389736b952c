import Synchronization

/// How far a pass has got, for a person watching a long merge (`syncctl` shows it on a terminal).
/// The pass updates it from its threads; anyone may read it at any time.
public final class PassProgress: Sendable {
    /// What the pass is doing.
    public enum Phase: String, Sendable {
        case listing, reading, merging, publishing, done
    }

    public struct State: Sendable, Equatable {
        public var phase = Phase.listing
        /// When the pass started.
        public var started = ContinuousClock.now
        /// Files to read this pass, and their bytes.
        public var filesToRead = 0
        public var bytesToRead: Int64 = 0
        /// Files opened so far.
        public var filesRead = 0
        /// Groups of ids merged so far, of how many.
        public var groupsDone = 0
        public var groups = 0
        /// Record versions merged so far.
        public var versions = 0
    }

    private let state = Mutex(State(phase: .done))
    private let done = Mutex<(@Sendable (State) -> Void)?>(nil)

    public init() {}

    /// The progress now.
    public var current: State { state.withLock { $0 } }

    /// Calls `body` on the pass's thread each time a pass ends, before the pass returns.
    public func whenDone(_ body: @escaping @Sendable (State) -> Void) {
        done.withLock { $0 = body }
    }

    func update(_ change: (inout State) -> Void) {
        let ended = state.withLock { state -> State? in
            let before = state.phase
            change(&state)
            return before != .done && state.phase == .done ? state : nil
        }
        if let ended, let body = done.withLock({ $0 }) { body(ended) }
    }
}
