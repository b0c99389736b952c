import Foundation
import TestSupport
import SnapshotFormat
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The built executables: `$SYNCD` / `$SYNCCTL` if set, else the first file of that name found
/// walking up from the test bundle (SwiftPM puts every product of a build in one directory).
enum Binary {
    static func path(_ name: String) throws -> String {
        let manager = FileManager.default
        if let given = ProcessInfo.processInfo.environment[name.uppercased()], manager.isExecutableFile(atPath: given) {
            return given
        }
        if let found = BuiltProducts.find(name) { return found }
        throw Failure(
            "\(name) is not built next to the test bundle (\(CommandLine.arguments[0])): run swift build --scratch-path … first, or set $\(name.uppercased())"
        )
    }
}

struct Failure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// What a finished process printed and returned.
struct ToolRun: CustomStringConvertible {
    var status: Int32
    var stdout: String
    var stderr: String

    var description: String { "exit \(status)\n--- stdout\n\(stdout)\n--- stderr\n\(stderr)" }

    /// Standard output parsed with the contract's strict parser.
    func json() throws -> JSONValue { try StrictJSON.parse(stdout) }
}

/// A fresh temporary directory (short path: notify sockets need one) with a shared folder and a home.
final class Sandbox: @unchecked Sendable {
    let root: String

    init() throws {
        root = "/tmp/syncd-test-" + UUID().uuidString.prefix(8).lowercased()
        for folder in ["shared", "home", "out"] {
            try FileManager.default.createDirectory(atPath: root + "/" + folder, withIntermediateDirectories: true)
        }
    }

    var shared: String { root + "/shared" }
    func state(_ device: String) -> String { root + "/state-" + device }
    func path(_ name: String) -> String { root + "/" + name }

    func remove() { try? FileManager.default.removeItem(atPath: root) }

    /// A clean environment: no SYNCD_* variables, a home of its own (no user configuration).
    var environment: [String: String] {
        ["PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": root + "/home", "LANG": "C.UTF-8"]
    }

    /// `--shared`, `--state` and `--device` for `device`.
    func location(_ device: String, state: String? = nil) -> [String] {
        ["--shared", shared, "--state", state ?? self.state(device), "--device", device]
    }

    /// Starts `executable` with its output in files; the caller waits for it or stops it by PID.
    func launch(
        _ executable: String, _ arguments: [String], stdin: String = "", environment: [String: String]? = nil
    ) throws -> Launched {
        let name = path("out/" + UUID().uuidString)
        _ = FileManager.default.createFile(atPath: name + ".in", contents: Data(stdin.utf8))
        let process = try SpawnedProcess(
            executable, arguments, environment: environment ?? self.environment, stdin: name + ".in",
            stdout: .file(name + ".out"), stderr: .file(name + ".err"))
        return Launched(process: process, outputPath: name)
    }

    /// Runs `syncctl` to the end (killed by PID after `timeout` seconds).
    @discardableResult
    func syncctl(_ arguments: [String], stdin: String = "", timeout: Double = 120) throws -> ToolRun {
        let started = try launch(try Binary.path("syncctl"), arguments, stdin: stdin)
        defer { started.stop() }
        return try started.wait(timeout: timeout)
    }

    /// Writes `bytes` to `name` in the shared folder atomically (a dot-file renamed into place).
    func publish(_ name: String, _ bytes: [UInt8], in folder: String? = nil) throws {
        let directory = folder ?? shared
        let temporary = directory + "/.\(name).\(UUID().uuidString.prefix(6)).tmp"
        try Data(bytes).write(to: URL(fileURLWithPath: temporary))
        guard rename(temporary, directory + "/" + name) == 0 else { throw Failure("rename to \(name): errno \(errno)") }
    }

    /// Fills the shared folder with `bench/generate.py` (devices `device-0`…, `records` each).
    func generate(devices: Int, records: Int) throws {
        let generator = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../bench/generate.py").standardized.path
        let run = try launch(
            "/usr/bin/env", ["python3", generator, shared, "--devices", "\(devices)", "--records", "\(records)"])
        defer { run.stop() }
        let result = try run.wait(timeout: 120)
        guard result.status == 0 else { throw Failure("generate.py failed: \(result)") }
    }

    /// The bytes of a file in the shared folder, nil when it is missing.
    func read(_ name: String) -> [UInt8]? {
        FileManager.default.contents(atPath: shared + "/" + name).map { [UInt8]($0) }
    }
}

/// A started process, stopped by PID: SIGTERM, then SIGKILL after a timeout.
struct Launched {
    let process: SpawnedProcess
    let outputPath: String

    var pid: Int32 { process.pid }
    var stdout: String { (try? String(contentsOfFile: outputPath + ".out", encoding: .utf8)) ?? "" }
    var stderr: String { (try? String(contentsOfFile: outputPath + ".err", encoding: .utf8)) ?? "" }

    /// Sends `signal` to this process by PID, if it still runs.
    func signal(_ signal: Int32) {
        process.signal(signal)
    }

    /// Waits up to `timeout` seconds for the exit status; nil if it is still running.
    func exitStatus(within timeout: Double) -> Int32? {
        process.exited(within: timeout) ? process.terminationStatus : nil
    }

    /// Waits for the process; past `timeout` seconds it is killed by PID and an error is thrown.
    func wait(timeout: Double) throws -> ToolRun {
        guard let status = exitStatus(within: timeout) else {
            stop(grace: 0)
            throw Failure("\(process.arguments) did not finish within \(timeout) s; killed PID \(pid)")
        }
        return ToolRun(status: status, stdout: stdout, stderr: stderr)
    }

    /// SIGTERM (SIGCONT first, in case it is stopped), then SIGKILL after `grace` seconds; reaps it.
    @discardableResult
    func stop(grace: Double = 10) -> Int32 {
        guard process.isRunning else { return process.terminationStatus }
        process.signal(SIGCONT)
        if grace > 0 { process.signal(SIGTERM) }
        if let status = exitStatus(within: grace) { return status }
        process.signal(SIGKILL)
        process.waitUntilExit()
        return process.terminationStatus
    }
}

/// Polls `condition` every `interval` until it holds or `timeout` seconds pass; true if it held.
func eventually(within timeout: Double, every interval: Double = 0.05, _ condition: () throws -> Bool) rethrows -> Bool
{
    let deadline = Date().addingTimeInterval(timeout)
    while true {
        if try condition() { return true }
        if Date() >= deadline { return false }
        usleep(useconds_t(interval * 1_000_000))
    }
}
