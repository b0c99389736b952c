import Dispatch
import Foundation

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

    /// Guards `state`; signalled when a task is added or the last running one ends.
    private let condition = NSCondition()
    nonisolated(unsafe) private var state = State()

    /// Adds a task; a running task may add more.
    func add(_ task: @escaping @Sendable () -> Void) {
        condition.lock()
        state.tasks.append(task)
        condition.signal()
        condition.unlock()
    }

    /// Runs every task, and every task they add, then returns (and lets go of them: a task that
    /// adds others holds the queue, which holds the task).
    func run() {
        defer {
            condition.lock()
            state.tasks = []
            condition.unlock()
        }
        DispatchQueue.concurrentPerform(iterations: max(1, ProcessInfo.processInfo.activeProcessorCount)) { _ in
            condition.lock()
            while true {
                if state.next < state.tasks.count {
                    let task = state.tasks[state.next]
                    state.next += 1
                    state.running += 1
                    condition.unlock()
                    task()
                    condition.lock()
                    state.running -= 1
                    if state.running == 0 { condition.broadcast() }
                } else if state.running == 0 {
                    // Nothing queued and nothing running that could queue more: done.
                    condition.broadcast()
                    condition.unlock()
                    return
                } else {
                    // A running task may still add some.
                    condition.wait()
                }
            }
        }
    }
}
