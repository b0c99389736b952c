import Foundation

/// Checks `condition` every `interval` seconds until it holds or `timeout` seconds pass; true if it
/// held. Sleeps without blocking a thread (other suites share the test process's two threads).
func eventually(
    within timeout: Double, every interval: Double = 0.05, _ condition: () async throws -> Bool
) async rethrows -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while true {
        if try await condition() { return true }
        if Date() >= deadline { return false }
        try? await Task.sleep(for: .milliseconds(Int(interval * 1000)))
    }
}
