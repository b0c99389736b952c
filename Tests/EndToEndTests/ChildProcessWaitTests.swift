import Foundation
import Testing

/// The tests start and wait for their child processes with `SpawnedProcess` (TestSupport:
/// `posix_spawn` and `waitpid`), never with Foundation's `Process`: on Linux that attaches the child
/// to the calling thread's run loop and reaps it on a thread of its own, and from Swift Testing's
/// worker threads it corrupted the test process's heap (glibc: "unaligned tcache chunk detected"
/// in about half of the full runs while `waitUntilExit()` was used, "unaligned fastbin chunk
/// detected" once after).
@Suite("How the tests start child processes")
struct ChildProcessWaitTests {
    @Test("no test source creates a Foundation Process")
    func noFoundationProcess() throws {
        let tests = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        let manager = FileManager.default
        var offenders: [String] = []
        let files = manager.enumerator(at: tests, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL } ?? []
        // This file names the calls it looks for: they are not ones.
        let this = URL(fileURLWithPath: #filePath).standardizedFileURL.path
        let calls = ["Process(", "Process.run(", ": Process", ".waitUntilReaped("]
        for file in files where file.pathExtension == "swift" && file.standardizedFileURL.path != this {
            let text = try String(contentsOf: file, encoding: .utf8)
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let code = line.trimmingCharacters(in: .whitespaces)
                guard !code.hasPrefix("//"),
                    calls.contains(where: { call in
                        code.ranges(of: call).contains { code[..<$0.lowerBound].last.map { !$0.isLetter } ?? true }
                    })
                else { continue }
                offenders.append("\(file.path.dropFirst(tests.path.count + 1)):\(number + 1)")
            }
        }
        #expect(files.count > 50)
        #expect(offenders.isEmpty, "use SpawnedProcess (TestSupport) instead: \(offenders)")
    }
}
