import Dispatch
import Synchronization

/// Starts the disk on a file's written pages from a thread of its own while the writer goes on:
/// a first merge's store, whose commit would otherwise wait for all of them at once (48 ms of the
/// 3 × 100,000-record first merge, 438 ms at 3 × 1,000,000; docs/performance.md).
///
/// `sync_file_range(2)` can itself block while it queues the pages (24 ms in all at 3 × 100,000),
/// so it runs on a queue, not on the writer's thread; a request made while one is waiting to run
/// is folded into it.
final class Writeback: Sendable {
    private let descriptor: Int32
    private let queue = DispatchQueue(label: "SyncEngine.Writeback")
    private let requested = Atomic<Bool>(false)

    /// `descriptor` is only advised, never closed (see ``SystemCalls/heldDescriptor(of:)``).
    init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// Asks for the pages written so far to be sent to the disk soon.
    func request() {
        guard !requested.exchange(true, ordering: .acquiringAndReleasing) else { return }
        queue.async { [self] in
            requested.store(false, ordering: .releasing)
            SystemCalls.startWriteback(descriptor)
        }
    }

    /// Waits for the requests made so far: none runs after the write they were for.
    func finish() {
        queue.sync {}
    }
}
