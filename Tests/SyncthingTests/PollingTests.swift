import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The harness's waits, on their own: no Syncthing is started.
@Suite("Syncthing harness: waiting for a condition")
struct PollingTests {
    @Test("a wait whose sleeps overrun its whole budget (its task found no thread) still sees the condition come true")
    func starvedWaitIsPatient() async {
        var checks = 0
        // Each sleep holds its thread 1.5 s whatever it is asked, as when other suites' synchronous
        // tests hold every thread of the cooperative pool.
        let held = await eventually(within: 1, sleep: { _ in usleep(1_500_000) }) {
            checks += 1
            return checks == 3
        }
        #expect(held)
        #expect(checks == 3)
    }

    @Test("a check that began before the deadline and ended after it (its answer waited for a thread) is followed by one more")
    func slowCheckIsFollowedByAnother() async {
        var checks = 0
        // The first check is false and comes back after the whole budget, as a ping sent before
        // Syncthing listened came back on CI once other suites let go of the threads.
        let held = await eventually(within: 0.5, every: 0.01) {
            checks += 1
            if checks == 1 { usleep(800_000) }
            return checks == 2
        }
        #expect(held)
        #expect(checks == 2)
    }

    @Test("a condition that never holds still fails the wait once the budget is spent checking")
    func falseConditionFails() async {
        var checks = 0
        let held = await eventually(within: 0.2, every: 0.01) {
            checks += 1
            return false
        }
        #expect(!held)
        #expect(checks > 1)
    }
}
