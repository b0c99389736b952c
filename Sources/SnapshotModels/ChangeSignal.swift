import Dispatch
import Synchronization

/// A counter of this process's changes that observers can wait on, with a timeout.
///
/// The timeout is a `DispatchQueue` timer, not a task: a waiting observer costs no thread, and
/// nothing outlives the observer's own task.
final class ChangeSignal: Sendable {
    private struct State {
        var generation = 0
        var nextWaiter = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
    }

    private let state = Mutex(State())

    /// How many changes this process has made so far.
    var generation: Int { state.withLock { $0.generation } }

    /// Records a change and wakes every waiter.
    func bump() {
        let woken = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.generation += 1
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in woken { waiter.resume() }
    }

    /// Returns when the generation is no longer `generation`, after `timeout`, or on cancellation,
    /// whichever comes first.
    func wait(after generation: Int, timeout: Duration) async {
        let id = state.withLock { state -> Int in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if state.generation != generation || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if resumeNow { return continuation.resume() }
                let (seconds, attoseconds) = timeout.components
                let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
                DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) {
                    self.wake(id)
                }
            }
        } onCancel: {
            wake(id)
        }
    }

    private func wake(_ id: Int) {
        state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
    }
}
