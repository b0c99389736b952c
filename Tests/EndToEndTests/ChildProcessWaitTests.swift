import Foundation
import Testing

/// The tests wait for their child processes with `Process.waitUntilReaped()` (TestSupport), never
/// with Foundation's `waitUntilExit()`: on Linux that runs a `RunLoop` on Swift Testing's worker
/// threads and corrupted the test process's heap (glibc: `tcache_thread_shutdown(): unaligned
/// tcache chunk detected`) in about half of the full runs.
@Suite("How the tests wait for child processes")
struct ChildProcessWaitTests {
    @Test("no test source calls Process.waitUntilExit()")
    func noRunLoopWaits() throws {
        let tests = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        let manager = FileManager.default
        var offenders: [String] = []
        let files = manager.enumerator(at: tests, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL } ?? []
        // This file names the call it looks for: it is not one.
        let this = URL(fileURLWithPath: #filePath).standardizedFileURL.path
        for file in files where file.pathExtension == "swift" && file.standardizedFileURL.path != this {
            let text = try String(contentsOf: file, encoding: .utf8)
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let code = line.trimmingCharacters(in: .whitespaces)
                guard !code.hasPrefix("//"), code.contains(".waitUntilExit(") else { continue }
                offenders.append("\(file.path.dropFirst(tests.path.count + 1)):\(number + 1)")
            }
        }
        #expect(!files.isEmpty)
        #expect(offenders.isEmpty, "use waitUntilReaped() (TestSupport) instead: \(offenders)")
    }
}
