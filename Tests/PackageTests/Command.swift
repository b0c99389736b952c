import Foundation
import TestSupport

/// A program run to its end, its output captured in files (no pipe can fill up).
struct Command: Sendable {
    let status: Int32
    let stdout: String
    let stderr: String

    /// Runs `program` (a path, or a name looked up in `PATH` and the sbin directories) with
    /// `arguments`, in `environment` added to this process's.
    static func run(
        _ program: String, _ arguments: [String], environment extra: [String: String] = [:],
        replacingEnvironment: [String: String]? = nil
    ) throws -> Command {
        var environment = replacingEnvironment ?? ProcessInfo.processInfo.environment
        environment.merge(extra) { _, new in new }
        let run = try CapturedRun.run(try executable(program), arguments, environment: environment)
        return Command(status: run.status, stdout: run.stdout, stderr: run.stderr)
    }

    /// Runs `program` and throws unless it exits 0.
    @discardableResult
    static func succeed(_ program: String, _ arguments: [String], environment: [String: String] = [:]) throws
        -> Command
    {
        let result = try run(program, arguments, environment: environment)
        guard result.status == 0 else {
            throw PackageTestError(
                "\(program) \(arguments.joined(separator: " ")) exited \(result.status):\n\(result.stdout)\(result.stderr)"
            )
        }
        return result
    }

    /// The path of `program`: as it is when it has a slash, else found in `PATH` or the sbin
    /// directories; a failure that names its Debian package (scripts/install-prerequisites.sh).
    static func executable(_ program: String) throws -> String {
        if program.contains("/") { return program }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let directories = path.split(separator: ":").map(String.init) + ["/usr/sbin", "/sbin", "/usr/bin", "/bin"]
        for directory in directories where !directory.isEmpty {
            let candidate = directory + "/" + program
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw PackageTestError(
            "\(program) is not installed: run scripts/install-prerequisites.sh (it installs dpkg-dev, debhelper, lintian, man-db)"
        )
    }
}
