import Synchronization
@testable import SyncEngine
import Testing

@Suite("the task queue a pass reads its files with")
struct TaskQueueTests {
    final class Token: Sendable {}

    @Test("runs every task, those added by running tasks included, and then lets go of them")
    func runsAndReleases() {
        weak var released: Token?
        let count = Mutex(0)
        do {
            let queue = TaskQueue()
            let token = Token()
            released = token
            // Each task holds the queue (to add more) and the token, as a pass's tasks hold its
            // files: unless the queue lets go of its tasks, neither is ever freed.
            for first in 0..<3 {
                queue.add {
                    withExtendedLifetime(token) {}
                    for _ in 0..<(first + 1) * 10 {
                        queue.add {
                            withExtendedLifetime(token) {}
                            count.withLock { $0 += 1 }
                        }
                    }
                }
            }
            queue.run()
        }
        #expect(count.withLock { $0 } == 60)
        #expect(released == nil)
    }
}
