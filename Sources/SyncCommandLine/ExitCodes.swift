import ArgumentParser
import Foundation
import SyncEngine

/// The documented exit codes of syncctl and syncd (docs/syncctl.md); sysexits(3) values where one fits.
public enum SyncctlExit {
    /// Everything valid merged, but some source or record was skipped or rejected.
    public static let mergedWithRejections = ExitCode(3)
    /// The record asked for does not exist.
    public static let notFound = ExitCode(4)
    /// The input given (fields, a choice) is not usable.
    public static let dataError = ExitCode(65)
    /// The shared folder is missing.
    public static let noInput = ExitCode(66)
    /// The state directory cannot be created or used.
    public static let cannotCreate = ExitCode(73)
    /// Writing this device's file failed (a full disk…); the store is intact.
    public static let ioError = ExitCode(74)
    /// Another syncd or syncctl holds the state directory.
    public static let busy = ExitCode(75)
    /// A setting is missing or wrong.
    public static let configuration = ExitCode(78)
}

/// Runs a command body, printing any failure as one clear line and exiting with its code.
public func reportingFailures(_ body: () async throws -> Void) async throws {
    do {
        try await body()
        try checkStandardOutput()
    } catch let error as ExitCode {
        throw error
    } catch let error as EngineError {
        printError(error.description)
        throw exitCode(for: error)
    } catch let error as SettingsError {
        printError(error.description)
        throw SyncctlExit.configuration
    } catch let error as OutputError {
        printError(error.description)
        throw SyncctlExit.ioError
    } catch let error as UsageProblem {
        printError(error.message)
        throw SyncctlExit.dataError
    } catch {
        printError(String(describing: error))
        throw ExitCode.failure
    }
}

/// Fails when what the command printed could not all be written (`syncctl get ID > backup.json`
/// on a full disk must not succeed with an empty file). A reader gone away ends the command by
/// SIGPIPE before this, as for any tool in a pipe.
private func checkStandardOutput() throws {
    // (Every stream: `stdout`, a C global, cannot be named from Swift 6 concurrency-checked
    // code. A write that failed earlier, as `print` filled the buffer, fails again here.)
    errno = 0
    guard fflush(nil) != 0 else { return }
    throw OutputError(reason: errno != 0 ? String(cString: strerror(errno)) : "a write failed")
}

/// Standard output could not be written.
public struct OutputError: Error, CustomStringConvertible {
    public var reason: String
    public init(reason: String) { self.reason = reason }
    public var description: String { "cannot write to standard output: \(reason); what was printed is incomplete" }
}

private func exitCode(for error: EngineError) -> ExitCode {
    switch error {
    case .sharedFolderMissing: SyncctlExit.noInput
    case .stateDirectoryUnusable, .stateInsideShared, .stateDiskFull, .storeDamaged: SyncctlExit.cannotCreate
    case .stateLocked: SyncctlExit.busy
    case .noDevice, .deviceMismatch: SyncctlExit.configuration
    case .publishFailed: SyncctlExit.ioError
    case .noSuchRecord: SyncctlExit.notFound
    case .invalidEdit, .changedSinceSeen, .resolvedAlready, .notAsSeen: SyncctlExit.dataError
    case .daemonRunning: SyncctlExit.busy
    }
}

/// A problem with what the user gave a command, said in one sentence.
public struct UsageProblem: Error {
    /// The sentence.
    public var message: String

    /// A problem described by `message`.
    public init(message: String) { self.message = message }
}

/// Prints one line to standard error, prefixed with the program's name so it stands out in logs.
public func printError(_ message: String) {
    let program = (CommandLine.arguments.first ?? "syncctl").split(separator: "/").last.map(String.init) ?? "syncctl"
    StandardError.write("\(program): \(TextLine.escapingControls(message))\n")
}
