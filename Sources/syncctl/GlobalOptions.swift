import ArgumentParser
import Foundation
import Logging
import SyncEngine

/// The options every subcommand shares: where the folder and store are, and which device this is.
struct GlobalOptions: ParsableArguments {
    @OptionGroup var location: LocationOptions

    @Option(
        name: [.long, .customLong("this-device")],
        help: ArgumentHelp(
            "This device's ID: 1-64 of a-z 0-9 . _ -. Needed the first time; the store remembers it.", valueName: "id"))
    var device: String?

    /// Opens this device as the settings say.
    func openDevice() async throws -> SyncDevice {
        try await location.openDevice(device: device)
    }
}

/// Where the shared folder, state and configuration are (everything global but the device ID,
/// which `resolve --device` uses for another meaning).
struct LocationOptions: ParsableArguments {
    @Option(
        name: .long, help: ArgumentHelp("The shared folder holding every device's <device>.json.", valueName: "dir"))
    var shared: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "This device's state directory (default: $XDG_STATE_HOME/syncd, i.e. ~/.local/state/syncd).",
            valueName: "dir"))
    var state: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "A JSON configuration file to use instead of ~/.config/syncd/config.json and /etc/syncd/config.json.",
            valueName: "file"))
    var config: String?

    @Option(
        name: .customLong("max-file-size"),
        help: ArgumentHelp("Refuse snapshot files larger than this many bytes (default 1 GiB).", valueName: "bytes"))
    var maxFileSize: Int64?

    @Option(
        name: .customLong("log-level"),
        help: "Diagnostics on standard error: trace, debug, info, notice, warning, error, critical.")
    var logLevel: Logger.Level = .error

    /// Opens this device as the settings say, mapping failures to documented exit codes.
    func openDevice(device: String?) async throws -> SyncDevice {
        let environment = ProcessInfo.processInfo.environment
        let settings = try await SyncSettings.resolve(
            commandLine: .init(shared: shared, state: state, device: device, config: config, maxFileSize: maxFileSize),
            environment: environment)
        let level = logLevel
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        return try SyncDevice(settings: settings, logger: Logger(label: "syncctl"))
    }
}

/// `--json` for commands that print data.
struct OutputOptions: ParsableArguments {
    @Flag(name: .long, help: "Print JSON for scripts instead of text for people.")
    var json = false
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
