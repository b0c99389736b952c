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
        let status = try SpawnedProcess.run(
            path, arguments, environment: environment, stdout: .file(outURL.path), stderr: .file(errURL.path))
        return CapturedRun(
            status: status,
            stdout: (try? String(contentsOf: outURL, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOf: errURL, encoding: .utf8)) ?? "")
    }
}
