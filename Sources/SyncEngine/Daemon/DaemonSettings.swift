import Configuration
import Foundation
import Logging

/// The daemon's own settings: read at start and again on SIGHUP.
public struct DaemonSettings: Sendable {
    /// What the command line said; nil where it said nothing.
    public var config: String?
    public var settleMilliseconds: Int?
    public var rescanSeconds: Int?
    public var pollSeconds: Int?
    public var alwaysPoll: Bool
    public var logLevel: Logger.Level?
    public var metricsFile: String?

    public init(
        config: String?, settleMilliseconds: Int? = nil, rescanSeconds: Int? = nil, pollSeconds: Int? = nil,
        alwaysPoll: Bool = false, logLevel: Logger.Level? = nil, metricsFile: String? = nil
    ) {
        self.config = config
        self.settleMilliseconds = settleMilliseconds
        self.rescanSeconds = rescanSeconds
        self.pollSeconds = pollSeconds
        self.alwaysPoll = alwaysPoll
        self.logLevel = logLevel
        self.metricsFile = metricsFile
    }

    /// The settle delay's range, in milliseconds: up to an hour.
    public static let settleRange = 0...3_600_000
    /// The rescan and poll intervals' range, in seconds: up to a year.
    public static let intervalRange = 1...31_536_000

    /// Checks the daemon's settings in `reader` (the environment's `SYNCD_*` and the
    /// configuration file) as syncd reads them, so that every command says at once what syncd
    /// would refuse at its next start or reload, not only syncd.
    ///
    /// What `given` (syncd's options) says wins, as when syncd reads them.
    static func check(_ reader: ConfigReader, given: DaemonSettings?) throws {
        let settings = given ?? DaemonSettings(config: nil)
        _ = try settings.timingsAndLevel(from: reader)
        _ = try settings.metricsPath(stateDirectory: "", from: reader)
    }

    /// Where to write the metrics, by the usual precedence (`--metrics-file`, `SYNCD_METRICS_FILE`,
    /// `metricsFile`), by default `metrics.prom` in the state directory; nil when set to `off`.
    public func metricsPath(stateDirectory: String) async throws -> String? {
        try metricsPath(
            stateDirectory: stateDirectory,
            from: try await SyncSettings.configurationReader(
                config: config, environment: ProcessInfo.processInfo.environment))
    }

    private func metricsPath(stateDirectory: String, from reader: ConfigReader) throws -> String? {
        let path = try metricsFile ?? reader.checkedString("metricsFile") ?? stateDirectory + "/metrics.prom"
        // Empty is a mistake (an unset variable in a unit), not a quiet "off".
        guard !path.isEmpty else {
            throw SettingsError.invalidSetting(
                key: "metricsFile", value: "empty", rule: "a file's path, or off for no metrics")
        }
        return path == "off" ? nil : path
    }

    /// Timings and log level by the usual precedence: options, `SYNCD_*`, configuration files, defaults.
    public func timingsAndLevel() async throws -> (timings: DaemonTimings, level: Logger.Level?) {
        try timingsAndLevel(
            from: try await SyncSettings.configurationReader(
                config: config, environment: ProcessInfo.processInfo.environment))
    }

    private func timingsAndLevel(from reader: ConfigReader) throws -> (timings: DaemonTimings, level: Logger.Level?) {
        let defaults = DaemonTimings()
        let settle = try settleMilliseconds ?? reader.checkedInt("settleMilliseconds")
        let rescan = try rescanSeconds ?? reader.checkedInt("rescanIntervalSeconds")
        let poll = try pollSeconds ?? reader.checkedInt("pollIntervalSeconds")
        // As the options are checked (SyncdCommand.validate): a rescan or poll every 0 s, or a
        // negative settle, would run passes back to back and spin a core; beyond the largest, the
        // clock's deadline would overflow.
        for (key, value, range) in [
            ("settleMilliseconds", settle, Self.settleRange), ("rescanIntervalSeconds", rescan, Self.intervalRange),
            ("pollIntervalSeconds", poll, Self.intervalRange),
        ] {
            if let value, !range.contains(value) {
                throw SettingsError.invalidSetting(
                    key: key, value: "\(value)", rule: "from \(range.lowerBound) to \(range.upperBound)")
            }
        }
        var level = logLevel
        if level == nil, let text = try reader.checkedString("logLevel") {
            guard let named = Logger.Level(rawValue: text) else {
                throw SettingsError.invalidSetting(
                    key: "logLevel", value: "\"\(text)\"",
                    rule: "one of " + Logger.Level.allCases.map(\.rawValue).joined(separator: ", "))
            }
            level = named
        }
        let polls = try alwaysPoll || (reader.checkedBool("alwaysPoll") ?? false)
        return (
            DaemonTimings(
                settle: settle.map { .milliseconds($0) } ?? defaults.settle,
                rescanInterval: rescan.map { .seconds($0) } ?? defaults.rescanInterval,
                pollInterval: poll.map { .seconds($0) } ?? defaults.pollInterval,
                alwaysPoll: polls),
            level
        )
    }
}
