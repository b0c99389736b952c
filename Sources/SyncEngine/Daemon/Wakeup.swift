import Dispatch
import Synchronization

/// A sleep that a reload can cut short, so that new timings apply at once.
///
/// The timeout is a dispatch timer, not a task, and nothing wakes up while idle but the timer.
final class Wakeup: Sendable {
    private struct State {
        var generation = 0
        var nextSleeper = 0
        var sleepers: [Int: CheckedContinuation<Void, Never>] = [:]
    }

    private let state = Mutex(State())

    /// Wakes every sleeper now.
    func wakeAll() {
        let woken = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.generation += 1
            defer { state.sleepers = [:] }
            return Array(state.sleepers.values)
        }
        for sleeper in woken { sleeper.resume() }
    }

    /// Counts the wake-ups so far: pass it to ``sleep(for:unlessWokenSince:)`` so that a wake-up
    /// between reading it and sleeping is not missed.
    var ticket: Int { state.withLock { $0.generation } }

    /// Sleeps for `duration`; returns true when woken early by ``wakeAll()`` (or cancelled),
    /// at once when woken since `ticket`.
    func sleep(for duration: Duration, unlessWokenSince ticket: Int? = nil) async -> Bool {
        let (id, generation) = state.withLock { state -> (Int, Int) in
            state.nextSleeper += 1
            return (state.nextSleeper, ticket ?? state.generation)
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    if state.generation != generation || Task.isCancelled { return true }
                    state.sleepers[id] = continuation
                    return false
                }
                if now { return continuation.resume() }
                let (seconds, attoseconds) = duration.components
                let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
                DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) { self.resume(id) }
            }
        } onCancel: {
            resume(id)
        }
        return state.withLock { $0.generation != generation } || Task.isCancelled
    }

    private func resume(_ id: Int) {
        state.withLock { $0.sleepers.removeValue(forKey: id) }?.resume()
    }
}
