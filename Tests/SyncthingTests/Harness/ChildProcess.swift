import Foundation
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// A program the harness started, its output in two files, always stopped by its PID.
final class ChildProcess: @unchecked Sendable {
    /// A short name for messages: `syncthing a`, `syncd beta`.
    let name: String
    let process: SpawnedProcess
    /// Standard output goes to `outputPath + ".out"`, standard error to `outputPath + ".err"`.
    let outputPath: String

    /// Starts `executable` now, with exactly `environment` and `stdin` as its standard input.
    init(
        name: String, executable: String, arguments: [String], environment: [String: String], outputPath: String,
        stdin: String = ""
    ) throws {
        self.name = name
        self.outputPath = outputPath
        let manager = FileManager.default
        _ = manager.createFile(atPath: outputPath + ".out", contents: nil)
        _ = manager.createFile(atPath: outputPath + ".err", contents: nil)
        _ = manager.createFile(atPath: outputPath + ".in", contents: Data(stdin.utf8))
        process = try SpawnedProcess(
            executable, arguments, environment: environment, stdin: outputPath + ".in",
            stdout: .file(outputPath + ".out"), stderr: .file(outputPath + ".err"))
    }

    var pid: Int32 { process.pid }
    var isRunning: Bool { process.isRunning }
    var stdout: String { (try? String(contentsOfFile: outputPath + ".out", encoding: .utf8)) ?? "" }
    var stderr: String { (try? String(contentsOfFile: outputPath + ".err", encoding: .utf8)) ?? "" }

    /// The last `lines` lines of standard error, for failure messages.
    func stderrTail(_ lines: Int = 40) -> String {
        stderr.split(separator: "\n", omittingEmptySubsequences: false).suffix(lines).joined(separator: "\n")
    }

    /// Waits (without blocking a thread) up to `timeout` seconds for the exit; nil if it still runs.
    func exitStatus(within timeout: Double) async -> Int32? {
        guard await eventually(within: timeout, every: 0.005, { !process.isRunning }) else { return nil }
        return process.terminationStatus
    }

    /// Waits for the end and returns what it printed; past `timeout` it is killed and an error thrown.
    func finish(timeout: Double) async throws -> ToolRun {
        guard let status = await exitStatus(within: timeout) else {
            stop(grace: 0)
            throw HarnessError(
                "\(name) \(process.arguments) did not finish within \(timeout) s; killed PID \(pid)")
        }
        return ToolRun(status: status, stdout: stdout, stderr: stderr)
    }

    /// SIGTERM to this PID, SIGKILL after `grace` seconds, then reaped; returns the exit status.
    ///
    /// Blocking on purpose: teardown must also work where no `await` is possible.
    @discardableResult
    func stop(grace: Double = 10) -> Int32 {
        guard process.isRunning else { return process.terminationStatus }
        process.signal(SIGCONT)
        if grace > 0 {
            process.signal(SIGTERM)
            let deadline = Date().addingTimeInterval(grace)
            while process.isRunning && Date() < deadline { usleep(5_000) }
        }
        process.signal(SIGKILL)
        process.waitUntilExit()
        return process.terminationStatus
    }
}

/// What a finished process printed and returned.
struct ToolRun: CustomStringConvertible, Sendable {
    var status: Int32
    var stdout: String
    var stderr: String

    var description: String { "exit \(status)\n--- stdout\n\(stdout)\n--- stderr\n\(stderr)" }
}

/// A harness failure: what went wrong, with enough context (logs) to see why.
struct HarnessError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
