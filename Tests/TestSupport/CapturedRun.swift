import Foundation

/// A program run to its end, its standard output and error captured in files (no pipe can fill
/// up), its standard input empty.
public struct CapturedRun: Sendable {
    public let status: Int32
    public let stdout: String
    public let stderr: String

    /// Runs the executable at `path` with `arguments` in exactly `environment`.
    public static func run(_ path: String, _ arguments: [String], environment: [String: String]) throws -> CapturedRun {
        let scratch = FileManager.default.temporaryDirectory
            .appendingPathComponent("captured-run-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let outURL = scratch.appendingPathComponent("stdout")
        let errURL = scratch.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let out = try FileHandle(forWritingTo: outURL)
        let err = try FileHandle(forWritingTo: errURL)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = out
        process.standardError = err
        try process.run()
        process.waitUntilReaped()
        try out.close()
        try err.close()
        return CapturedRun(
            status: process.terminationStatus,
            stdout: (try? String(contentsOf: outURL, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOf: errURL, encoding: .utf8)) ?? "")
    }
}
