import Dispatch
import Foundation
import Synchronization

/// Tasks that may add further tasks, run in order of arrival on every core until none is left.
///
/// Written here because `DispatchQueue.concurrentPerform` needs every task known up front, and
/// tasks sent to a global queue while the sending thread waits run on one core only when that
/// thread is one of the Swift concurrency pool's (a waiting pool thread still counts against the
/// cores). Here the calling thread is one of the workers.
final class TaskQueue: Sendable {
    private struct State {
        var tasks: [@Sendable () -> Void] = []
        var next = 0
        var running = 0
    }

    private let state = Mutex(State())

    /// Adds a task; a running task may add more.
    func add(_ task: @escaping @Sendable () -> Void) {
        state.withLock { $0.tasks.append(task) }
    }

    /// Runs every task, and every task they add, then returns (and lets go of them: a task that
    /// adds others holds the queue, which holds the task).
    func run() {
        defer { state.withLock { $0.tasks = [] } }
        DispatchQueue.concurrentPerform(iterations: max(1, ProcessInfo.processInfo.activeProcessorCount)) { _ in
            while true {
                let taken = state.withLock { state -> (task: (@Sendable () -> Void)?, finished: Bool) in
                    guard state.next < state.tasks.count else { return (nil, state.running == 0) }
                    state.next += 1
                    state.running += 1
                    return (state.tasks[state.next - 1], false)
                }
                guard let task = taken.task else {
                    if taken.finished { return }
                    // A running task may still add some: look again shortly.
                    usleep(100)
                    continue
                }
                task()
                state.withLock { $0.running -= 1 }
            }
        }
    }
}
