import ArgumentParser
import SyncEngine

/// syncctl's documented exit codes (docs/syncctl.md); sysexits(3) values where one fits.
enum SyncctlExit {
    /// Everything valid merged, but some source or record was skipped or rejected.
    static let mergedWithRejections = ExitCode(3)
    /// The record asked for does not exist.
    static let notFound = ExitCode(4)
    /// The input given (fields, a choice) is not usable.
    static let dataError = ExitCode(65)
    /// The shared folder is missing.
    static let noInput = ExitCode(66)
    /// The state directory cannot be created or used.
    static let cannotCreate = ExitCode(73)
    /// Writing this device's file failed (a full disk…); the store is intact.
    static let ioError = ExitCode(74)
    /// Another syncd or syncctl holds the state directory.
    static let busy = ExitCode(75)
    /// A setting is missing or wrong.
    static let configuration = ExitCode(78)
}

/// Runs a command body, printing any failure as one clear line and exiting with its code.
func reportingFailures(_ body: () async throws -> Void) async throws {
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
    case .invalidEdit: SyncctlExit.dataError
    }
}

/// A problem with what the user gave a command, said in one sentence.
struct UsageProblem: Error {
    var message: String
}
