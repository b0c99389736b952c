import Foundation

/// Checks `condition` every `interval` seconds until it holds or `timeout` seconds pass; true if it
/// held. Sleeps without blocking a thread (other suites share the test process's two threads).
///
/// The condition is always checked once more after the deadline, and time this task spent
/// waiting for a thread beyond its sleep does not count against `timeout`: synchronous tests of
/// other suites (a `dpkg` run, a daemon test's pauses) can hold both threads of Swift's
/// cooperative pool on a 2-core machine for 40 s, and a wait that lost those seconds had not
/// given the awaited process its time. On CI a Syncthing whose REST API answered after 0.5 s
/// was reported dead because its 30 s were spent that way.
///
/// `sleep` is `Task.sleep`; a test of this function passes one that oversleeps.
func eventually(
    within timeout: Double, every interval: Double = 0.05,
    sleep: (Duration) async -> Void = { try? await Task.sleep(for: $0) }, _ condition: () async throws -> Bool
) async rethrows -> Bool {
    let clock = ContinuousClock()
    let pause = Duration.milliseconds(Int(interval * 1000))
    var deadline = clock.now + .milliseconds(Int(timeout * 1000))
    while true {
        if try await condition() { return true }
        if clock.now >= deadline { return false }
        let asleep = clock.now
        await sleep(pause)
        let starved = clock.now - asleep - pause
        if starved > .milliseconds(500) { deadline += starved }
    }
}
