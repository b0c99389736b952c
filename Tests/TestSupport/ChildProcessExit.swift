import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension Process {
    /// Waits until the child has exited and Foundation has reaped it, without a run loop: use
    /// this, never `waitUntilExit()`, in tests.
    ///
    /// On Linux `waitUntilExit()` spins the calling thread's `RunLoop` in 50 ms steps, and each
    /// step makes a libdispatch timer whose cancel handler is a heap-allocated continuation;
    /// Foundation's process-manager thread meanwhile reads and wakes that run loop through the
    /// process's unsynchronized `runLoop` property. Called from Swift Testing's worker threads
    /// (libdispatch threads that exit when idle), this corrupted the heap: about half of the full
    /// `swift test` runs aborted with glibc's `tcache_thread_shutdown(): unaligned tcache chunk
    /// detected`, the corrupted chunk being one of those continuations, freed to malloc while
    /// still on a libdispatch continuation cache. Polling `isRunning` touches no run loop;
    /// Foundation sets the termination status before it clears `isRunning`.
    public func waitUntilReaped() {
        while isRunning { usleep(2_000) }
    }

    /// Waits as ``waitUntilReaped()`` does, without holding a thread meanwhile: for a child that
    /// runs for minutes (a fuzzer). A synchronous wait holds one of the two threads of Swift's
    /// cooperative pool on a 2-core machine for all that time, and with another one elsewhere
    /// every other suite's task waits: on CI, 40 s and more.
    public func reaped() async {
        while isRunning {
            do { try await Task.sleep(for: .milliseconds(20)) } catch { return waitUntilReaped() }
        }
    }
}
