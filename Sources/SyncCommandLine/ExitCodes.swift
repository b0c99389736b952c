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
    } catch let error as ExitCode {
        throw error
    } catch let error as EngineError {
        printError(error.description)
        throw exitCode(for: error)
    } catch let error as SettingsError {
        printError(error.description)
        throw SyncctlExit.configuration
    } catch let error as UsageProblem {
        printError(error.message)
        throw SyncctlExit.dataError
    } catch {
        printError(String(describing: error))
        throw ExitCode.failure
    }
}

private func exitCode(for error: EngineError) -> ExitCode {
    switch error {
    case .sharedFolderMissing: SyncctlExit.noInput
    case .stateDirectoryUnusable, .stateInsideShared: SyncctlExit.cannotCreate
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
    FileHandle.standardError.write(Data("\(program): \(TextLine.escapingControls(message))\n".utf8))
}
