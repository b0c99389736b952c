import Foundation

/// Checks `condition` every `interval` seconds until it holds or `timeout` seconds pass; true if it
/// held. Sleeps without blocking a thread (other suites share the test process's two threads).
///
/// The wait fails only after a check that began after the deadline: a check that began before it
/// and was slow (a request whose answer waited for a thread, or its own 30 s timeout) is followed by
/// one more. On CI a Syncthing listening 0.6 s after its start was reported dead because the one
/// ping sent before it listened came back only when `lintian` and `dpkg` tests let go of the
/// threads, 30 s later. Time this task spent
/// waiting for a thread beyond its sleep does not count against `timeout` either: synchronous tests of
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
        let checked = clock.now
        if try await condition() { return true }
        if checked >= deadline { return false }
        let asleep = clock.now
        await sleep(pause)
        let starved = clock.now - asleep - pause
        if starved > .milliseconds(500) { deadline += starved }
    }
}
