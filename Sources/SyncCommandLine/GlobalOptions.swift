import ArgumentParser
import Foundation
import Logging
import SnapshotFormat
import SyncEngine

/// The options every `syncctl` subcommand and `syncd` share: where the folder and store are, and
/// which device this is.
public struct GlobalOptions: ParsableArguments {
    @OptionGroup public var location: LocationOptions

    @Option(
        name: [.long, .customLong("this-device")],
        help: ArgumentHelp(
            "This device's ID: 1-64 of a-z 0-9 . _ -. Needed the first time; the store remembers it.", valueName: "id"))
    public var device: String?

    public init() {}

    /// The options of every command that take a value: given before a subcommand's name, they
    /// are moved after it with their values (``commandFirst``, in CommandMain.swift).
    static let optionsTakingAValue: Set<String> = [
        "--shared", "--state", "--config", "--max-file-size", "--schema", "--log-level", "--device", "--this-device",
    ]
    /// The flags every command takes, or that ask for a command's help (moved with them).
    static let flags: Set<String> = ["--json", "--help", "-h"]

    /// A device ID given on the command line is checked as it is parsed (exit 64 with the usage);
    /// one from the configuration or the environment is a setting (exit 78).
    public func validate() throws {
        if let device, let problem = DeviceID.problemWithRule(device) {
            throw ValidationError("--device \"\(device)\" \(problem)")
        }
    }

    /// Opens this device as the settings say (for `syncctl`).
    public func openDevice() async throws -> SyncDevice {
        try await location.openDevice(device: device)
    }

    /// Opens this device for a command that only reads the store (`status`, `list`, `get`,
    /// `export`, `conflicts`, `key`, `trust --list`): a missing shared folder, or none given, is
    /// noted on standard error instead of refused, since `status` is what one runs to find out why.
    ///
    /// - Parameter creating: whether a state directory with no store yet gets one (`syncctl key`
    ///   makes a device's key before its folder is set up); otherwise that is refused, so that a
    ///   mistyped `--state` does not show an empty store, nor leave one behind.
    ///
    /// - Parameter notingFolderProblem: false for a command that shows no merged data (`key`) or
    ///   says what is wrong with the folder itself (`status`): no note on standard error then.
    public func openDeviceForReading(creating: Bool = false, notingFolderProblem: Bool = true) async throws
        -> SyncDevice
    {
        try await location.openDevice(
            device: device, needsFolder: false, needsStore: !creating, notingFolderProblem: notingFolderProblem)
    }

    /// The settings as the options, environment and configuration files give them.
    public func settings() async throws -> SyncSettings {
        try await location.settings(device: device)
    }
}

/// Where the shared folder, state and configuration are: every global option but the device ID,
/// which ``GlobalOptions`` adds (`--device`, alias `--this-device`, in every command).
public struct LocationOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The shared folder holding every device's snapshot (<device>.json, or its parts).", valueName: "dir"))
    public var shared: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "This device's state directory (default: $STATE_DIRECTORY under systemd, else $XDG_STATE_HOME/syncd, else ~/.local/state/syncd).",
            valueName: "dir"))
    public var state: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "A JSON configuration file to use instead of $XDG_CONFIG_HOME/syncd/config.json (else ~/.config/syncd/config.json), such as the system unit's /etc/syncd/config.json.",
            valueName: "file"))
    public var config: String?

    @Option(
        name: .customLong("max-file-size"), parsing: .unconditional,
        help: ArgumentHelp("Refuse snapshot files larger than this many bytes (default 1 GiB).", valueName: "bytes"))
    public var maxFileSize: Int64?

    @Option(
        name: .customLong("schema"),
        help: ArgumentHelp(
            "A schema file (docs/schemas.md) that versions of its types must fit; repeatable (config key \"schemas\").",
            valueName: "file"))
    public var schemaFiles: [String] = []

    @Option(
        name: .customLong("log-level"),
        help:
            "Diagnostics on standard error: trace, debug, info, notice, warning, error, critical (default: error for syncctl, notice for syncd)."
    )
    public var logLevel: Logger.Level?

    public init() {}

    public func validate() throws {
        // An empty path (an unset shell variable) is a mistake to say, not "not given".
        for (option, value) in [("--shared", shared), ("--state", state), ("--config", config)] where value == "" {
            throw ValidationError("\(option) is empty: give a path, or leave the option out for the default")
        }
        for file in schemaFiles where file.isEmpty {
            throw ValidationError("--schema is empty: give a schema file's path")
        }
        if let maxFileSize, maxFileSize < 1 {
            throw ValidationError("--max-file-size must be 1 or more (bytes); 0 would refuse every file")
        }
    }

    /// The settings as the options, environment and configuration files give them.
    ///
    /// - Parameter requiresSharedFolder: false for a command that only reads the store.
    public func settings(device: String?, requiresSharedFolder: Bool = true) async throws -> SyncSettings {
        try await SyncSettings.resolve(
            commandLine: commandLineValues(device: device),
            environment: ProcessInfo.processInfo.environment, requiresSharedFolder: requiresSharedFolder)
    }

    /// What the command line gives of the settings (to resolve them again later, on SIGHUP).
    public func commandLineValues(device: String?) -> SyncSettings.CommandLineValues {
        .init(
            shared: shared, state: state, device: device, config: config, maxFileSize: maxFileSize,
            schemaFiles: schemaFiles)
    }

    /// Opens this device as the settings say, logging at `--log-level` (default: errors only).
    ///
    /// - Parameter needsFolder: false for a command that only reads the store (see
    ///   ``GlobalOptions/openDeviceForReading()``).
    public func openDevice(
        device: String?, needsFolder: Bool = true, needsStore: Bool = false, notingFolderProblem: Bool = true
    ) async throws -> SyncDevice {
        let settings = try await settings(device: device, requiresSharedFolder: needsFolder)
        let isNew = try !SyncDevice.storeExists(inStateDirectory: settings.stateDirectory)
        if needsStore, isNew {
            throw SettingsError.noStore(stateDirectory: settings.stateDirectory)
        }
        let control = bootstrapLogging(defaultLevel: .error)
        _ = control
        // Said whatever the log level: a command that waits without a word looks hung.
        let device = try SyncDevice(
            settings: settings, logger: Logger(label: "syncctl"), needsFolder: needsFolder,
            waitingForStore: { message in StandardError.write("syncctl: \(message)\n") })
        if isNew {
            printError(
                "note: made a new store for device \(device.device) in \(settings.stateDirectory) (its key's fingerprint: \(device.key.publicKey.fingerprint))"
            )
        }
        if notingFolderProblem, let problem = device.folderProblem { printError("note: \(problem)") }
        if let problem = device.keyProblem { printError("warning: \(problem)") }
        ProgressLine.start(for: device)
        return device
    }

    /// Sends every log line to standard error at `--log-level`, and returns the control of that level.
    public func bootstrapLogging(defaultLevel: Logger.Level) -> LogLevelControl {
        let control = LogLevelControl(logLevel ?? defaultLevel)
        let environment = ProcessInfo.processInfo.environment
        LoggingSystem.bootstrap { label in
            StandardErrorLogHandler(label: label, control: control, environment: environment)
        }
        return control
    }
}

/// `--json` for commands that print data.
public struct OutputOptions: ParsableArguments {
    @Flag(name: .long, help: "Print JSON for scripts instead of text for people.")
    public var json = false

    public init() {}
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
