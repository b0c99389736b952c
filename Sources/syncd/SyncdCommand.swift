import ArgumentParser
import Foundation
import Logging
import ServiceLifecycle
import SyncCommandLine
import SyncEngine

/// `syncd`: the daemon that keeps this device in step with the shared folder.
@main
struct SyncdCommand: AsyncParsableCommand {
    static func main() async {
        await mainWithTunedAllocator()
    }

    static let configuration = CommandConfiguration(
        commandName: "syncd",
        abstract: "Keep this device's records in step with a shared folder, in the foreground.",
        discussion: """
            Watches the shared folder with inotify, merges every device's snapshot into this \
            device's store when files change (at once for a file renamed into place, as sync \
            tools and atomic writers publish; after --settle-ms of quiet for one written in place), \
            rereads everything every --rescan-interval seconds and after an inotify overflow, \
            polls on NFS, SMB and FUSE mounts, and republishes this device's files (<device>.json, \
            or parts <device>.<prefix>.json once it is large) whose content changed, signed with its key. It runs under systemd (Type=notify: READY=1, STATUS=, WATCHDOG=1, STOPPING=1) \
            or by hand. SIGTERM and SIGINT stop it after the merge in flight; SIGHUP re-reads the \
            configuration (timings, log level and schema files) and then every file.

            Settings, environment and configuration files are those of syncctl: see syncctl --help \
            and docs/daemon.md.
            """,
        version: Release.versionLine("syncd"))

    @OptionGroup var global: GlobalOptions

    @Option(
        name: .customLong("settle-ms"), parsing: .unconditional,
        help: """
            Before merging a peer's file written in place, wait until its writer closes it or has \
            been quiet this long (default 200). Files renamed into the folder are merged at once.
            """)
    var settleMilliseconds: Int?

    @Option(name: .customLong("rescan-interval"), parsing: .unconditional, help: "Read every file again this often, in seconds (default 3600).")
    var rescanSeconds: Int?

    @Option(
        name: .customLong("poll-interval"), parsing: .unconditional,
        help: "On NFS, SMB and FUSE mounts, scan this often, in seconds (default 10).")
    var pollSeconds: Int?

    @Flag(name: .customLong("poll"), help: "Poll even where inotify should see changes.")
    var alwaysPoll = false

    @Option(
        name: .customLong("metrics-file"),
        help: ArgumentHelp(
            "Write Prometheus metrics here after each pass, by rename (default: metrics.prom in the state directory; 'off' for none). Point it into node_exporter's textfile collector directory.",
            valueName: "path"))
    var metricsFile: String?

    func validate() throws {
        for (name, value, range) in [
            ("--settle-ms", settleMilliseconds, DaemonSettings.settleRange),
            ("--rescan-interval", rescanSeconds, DaemonSettings.intervalRange),
            ("--poll-interval", pollSeconds, DaemonSettings.intervalRange),
        ] {
            if let value, !range.contains(value) {
                throw ValidationError("\(name) must be from \(range.lowerBound) to \(range.upperBound)")
            }
        }
        // Empty is a mistake (an unset variable in a unit's command line), not a quiet "off".
        if metricsFile?.isEmpty == true {
            throw ValidationError("--metrics-file must name a file, or be off for no metrics")
        }
    }

    func run() async throws {
        try await reportingFailures {
            let daemonSettings = daemonSettings
            let commandLine = {
                var values = global.location.commandLineValues(device: global.device)
                values.daemon = daemonSettings
                return values
            }()
            let settings = try await SyncSettings.resolve(
                commandLine: commandLine, environment: ProcessInfo.processInfo.environment)
            // The level from --log-level or the configuration's "logLevel", as on SIGHUP.
            let initial = try await daemonSettings.timingsAndLevel()
            let levels = global.location.bootstrapLogging(defaultLevel: initial.level ?? .notice)
            let logger = Logger(label: "syncd")
            logger.notice("starting \(Release.versionLine("syncd"))")
            // Before the lock's file is made in the state directory: never inside the shared folder.
            try SyncDevice.checkStateOutsideShared(settings)
            try SyncDevice.checkDeviceKnown(settings)
            let lock = try DaemonLock(stateDirectory: settings.stateDirectory)
            defer { withExtendedLifetime(lock) {} }
            let device = try SyncDevice(settings: settings, logger: logger, returnsMemoryAfterPasses: true)
            if let problem = device.keyProblem { logger.warning("\(problem)") }
            let startedMetricsFile = try await daemonSettings.metricsPath(stateDirectory: settings.stateDirectory)
            let service = SyncService(
                device: device, timings: initial.timings,
                notify: NotifySocket(environment: ProcessInfo.processInfo.environment),
                logger: logger,
                metricsFile: startedMetricsFile,
                reload: { [started = settings] in
                    // All or nothing: a bad schema file or setting keeps every current one.
                    let settings = try await SyncSettings.resolve(
                        commandLine: commandLine, environment: ProcessInfo.processInfo.environment)
                    let schemas = try SyncDevice.loadSchemas(settings.schemaFiles)
                    let reloaded = try await daemonSettings.timingsAndLevel()
                    let metricsFile = try await daemonSettings.metricsPath(stateDirectory: settings.stateDirectory)
                    device.replaceSchemas(schemas)
                    levels.current = reloaded.level ?? levels.current
                    // What a reload does not change is said, not ignored without a word.
                    var kept = settings.changesTakenAtStart(since: started, running: device.device)
                    if metricsFile != startedMetricsFile { kept.append("metricsFile") }
                    if !kept.isEmpty {
                        logger.warning(
                            "the configuration changes \(kept.joined(separator: ", ")), which syncd takes only when it starts: it keeps what it started with until then (sudo systemctl restart syncd)"
                        )
                    }
                    return reloaded.timings
                })
            let group = ServiceGroup(
                configuration: .init(
                    services: [.init(service: service)], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
            try await group.run()
        }
    }

    /// What the command line says of the daemon's own settings.
    var daemonSettings: DaemonSettings {
        DaemonSettings(
            config: global.location.config, settleMilliseconds: settleMilliseconds, rescanSeconds: rescanSeconds,
            pollSeconds: pollSeconds, alwaysPoll: alwaysPoll, logLevel: global.location.logLevel,
            metricsFile: metricsFile)
    }
}
