import Configuration

#if canImport(Glibc)
    import Glibc
#endif
import SnapshotFormat
import SnapshotMerge
import SystemPackage

/// Where a device keeps its state and which folder it syncs: settings resolved from the command
/// line, the environment and configuration files.
///
/// Precedence, highest first: command-line options; `SYNCD_*` environment variables; the
/// configuration file named by `--config` (or `SYNCD_CONFIG`), else the user's
/// `$XDG_CONFIG_HOME/syncd/config.json` (the system daemon's `/etc/syncd/config.json` only by
/// `--config`: its device ID is not a user's);
/// built-in defaults.
public struct SyncSettings: Sendable, Hashable {
    /// The shared folder the snapshot files live in.
    public var sharedFolder: String
    /// The state directory that holds the store; never inside the shared folder.
    public var stateDirectory: String
    /// This device's ID; nil lets an existing store say which device it belongs to.
    public var device: SnapshotFormat.DeviceID?
    /// Files larger than this are refused with a message instead of being read.
    public var maxFileSize: Int64
    /// Safety valves against wrong clocks and mass deletions.
    public var safety = SafetySettings()
    /// Schema files (JSON, docs/schemas.md) that incoming versions of declared types must fit.
    public var schemaFiles: [String] = []
    /// When this device splits its snapshot into parts, and joins them (docs/parts.md).
    public var partPolicy = PartPolicy.standard
    /// The part policy a publication applies: ``partPolicy``, splitting at `maxFileSize` instead
    /// when that is smaller, so that this device never publishes a file it would not read back
    /// itself when smaller parts can avoid it.
    var publishingPartPolicy: PartPolicy {
        let limit = Int(clamping: maxFileSize)
        guard limit < partPolicy.splitBytes else { return partPolicy }
        return PartPolicy(splitBytes: limit, joinBytes: min(partPolicy.joinBytes, limit / 8))
    }
    /// How much comparing the merge of one record from the folder may do before it refuses the
    /// record (docs/hostile-input.md). Not a setting of the configuration file: the standard
    /// limit is far above what any record written by the contract needs.
    public var recordMergeLimit = RecordMergeLimit.standard
    /// Bytes of whole snapshots (and one-digit parts) a pass keeps in memory while it merges;
    /// above, their elements wait in a spill file in the state directory (``SpanningSources``).
    /// Not a setting of the configuration file.
    public var spanningBytesInMemory: Int64 = 256 << 20

    /// The default largest snapshot file read: 1 GiB (about 2.5 million records).
    public static let defaultMaxFileSize: Int64 = 1 << 30

    /// Settings given directly (tests, embedding).
    public init(
        sharedFolder: String, stateDirectory: String, device: SnapshotFormat.DeviceID?,
        maxFileSize: Int64 = defaultMaxFileSize
    ) {
        self.sharedFolder = sharedFolder
        self.stateDirectory = stateDirectory
        self.device = device
        self.maxFileSize = maxFileSize
    }

    /// Values given on the command line; nil means "not given here".
    public struct CommandLineValues: Sendable {
        public var shared: String?
        public var state: String?
        public var device: String?
        public var config: String?
        public var maxFileSize: Int64?
        public var schemaFiles: [String] = []
        /// syncd's own options, which win over the configuration's daemon settings as they are
        /// checked (nil for syncctl: the configuration's are checked as they are).
        public var daemon: DaemonSettings?
        public init(
            shared: String? = nil, state: String? = nil, device: String? = nil, config: String? = nil,
            maxFileSize: Int64? = nil, schemaFiles: [String] = []
        ) {
            self.shared = shared
            self.state = state
            self.device = device
            self.config = config
            self.maxFileSize = maxFileSize
            self.schemaFiles = schemaFiles
        }
    }

    /// Resolves the settings by the documented precedence.
    ///
    /// - Throws: ``SettingsError`` saying which setting is missing or wrong and how to give it.
    ///
    /// - Parameter requiresSharedFolder: false for a command that only reads the store (`status`,
    ///   `key`, `trust --list` …): without a shared folder setting, ``sharedFolder`` is empty and
    ///   the device says so in ``SyncDevice/folderProblem``.
    public static func resolve(
        commandLine: CommandLineValues, environment: [String: String], requiresSharedFolder: Bool = true
    ) async throws -> SyncSettings {
        do {
            return try await resolveValues(
                commandLine: commandLine, environment: environment, requiresSharedFolder: requiresSharedFolder)
        } catch SettingsError.invalidSetting(let key, let value, let rule, nil) {
            // Where the wrong value came from: the variable, or the file, to look in.
            let variable = environmentVariable(for: key)
            let source =
                if key.hasPrefix("SYNCD_") {
                    nil as String?  // (named already)
                } else if environment[variable] != nil {
                    "from \(variable) in the environment"
                } else if let file = configurationFile(commandLine, environment: environment) {
                    "in \(file.path)"
                } else {
                    nil as String?
                }
            throw SettingsError.invalidSetting(key: key, value: value, rule: rule, source: source)
        }
    }

    /// The `SYNCD_*` variable of configuration key `key`: `massDeletionShare` is
    /// `SYNCD_MASS_DELETION_SHARE` (as swift-configuration's environment provider names it).
    static func environmentVariable(for key: String) -> String {
        var name = "SYNCD_"
        for character in key {
            if character.isUppercase { name += "_" }
            name += character.uppercased()
        }
        return name
    }

    private static func resolveValues(
        commandLine: CommandLineValues, environment: [String: String], requiresSharedFolder: Bool
    ) async throws -> SyncSettings {
        var given: [AbsoluteConfigKey: ConfigValue] = [:]
        if let shared = commandLine.shared { given["shared"] = ConfigValue(.string(shared), isSecret: false) }
        if let state = commandLine.state { given["state"] = ConfigValue(.string(state), isSecret: false) }
        if let device = commandLine.device { given["device"] = ConfigValue(.string(device), isSecret: false) }
        if let size = commandLine.maxFileSize { given["maxFileSize"] = ConfigValue(.int(Int(size)), isSecret: false) }
        let reader = try await configurationReader(
            config: commandLine.config, environment: environment, commandLine: given)
        // A relative path in the configuration file means one beside it (as for "schemas"): under
        // systemd the working directory is /, and elsewhere each directory a command runs from
        // would name another folder, or another store.
        let configurationDirectory = configurationFile(commandLine, environment: environment).map {
            Self.directory(of: $0.path)
        }
        func fromFile(_ path: String?, given: String?, variable: String) -> String? {
            guard let path, !path.isEmpty, given == nil, environment[variable] == nil else { return path }
            return Self.path(path, besideIn: configurationDirectory)
        }
        let shared =
            fromFile(try reader.checkedString("shared"), given: commandLine.shared, variable: "SYNCD_SHARED") ?? ""
        guard !shared.isEmpty || !requiresSharedFolder else {
            throw SettingsError.noSharedFolder(configurationFile: configurationFile(commandLine, environment: environment)?.path)
        }
        let state =
            fromFile(try reader.checkedString("state"), given: commandLine.state, variable: "SYNCD_STATE")
            ?? defaultStateDirectory(environment: environment)
        if state == "", commandLine.state == nil, environment["SYNCD_STATE"] == "" {
            throw SettingsError.invalidSetting(
                key: "SYNCD_STATE", value: "set but empty", rule: "a directory (unset it for the default)")
        }
        guard let state, !state.isEmpty else { throw SettingsError.noStateDirectory }
        var device: SnapshotFormat.DeviceID?
        if let text = try reader.checkedString("device") {
            guard let id = SnapshotFormat.DeviceID(text) else {
                throw SettingsError.invalidDevice(
                    text, problem: SnapshotFormat.DeviceID.problemWithRule(text) ?? "is not valid")
            }
            device = id
        }
        // Each number within what it can mean: a value outside is a mistake to say, not to apply
        // (a negative margin, a share of 2), nor to overflow on (seconds to milliseconds, KiB to bytes).
        func checked<Number: Comparable>(
            _ key: String, _ value: Number?, _ range: ClosedRange<Number>, _ rule: String
        ) throws -> Number? {
            guard let value else { return nil }
            guard range.contains(value) else {
                throw SettingsError.invalidSetting(key: key, value: "\(value)", rule: rule)
            }
            return value
        }
        // 0 would refuse every file, this device's own included: nothing would merge.
        let maxFileSize = Int64(
            try checked(
                "maxFileSize (--max-file-size)", reader.checkedInt("maxFileSize"), 1...Int.max,
                "a number of bytes, 1 or more") ?? Int(defaultMaxFileSize))
        var settings = SyncSettings(
            sharedFolder: shared, stateDirectory: state, device: device, maxFileSize: maxFileSize)
        let defaults = SafetySettings()
        settings.safety.clockSkewMargin =
            try checked(
                "clockSkewMarginSeconds", reader.checkedInt("clockSkewMarginSeconds"), 0...3_153_600_000,
                "a number of seconds from 0 to 3153600000 (100 years)"
            ).map { Int64($0) * 1000 } ?? defaults.clockSkewMargin
        settings.safety.massDeletionShare =
            try checked(
                "massDeletionShare", reader.checkedDouble("massDeletionShare"), 0...1,
                "a share from 0 to 1 (1 turns the valve off)") ?? defaults.massDeletionShare
        settings.safety.massDeletionMinimum =
            try checked(
                "massDeletionMinimum", reader.checkedInt("massDeletionMinimum"), 0...Int(Int32.max),
                "a number of records, 0 or more") ?? defaults.massDeletionMinimum
        let kilobytes = 0...(1 << 20)
        let split =
            try checked("partSplitKilobytes", reader.checkedInt("partSplitKilobytes"), kilobytes, "at most 1048576 (1 GiB)")
            .map { $0 << 10 } ?? PartPolicy.standard.splitBytes
        let join =
            try checked("partJoinKilobytes", reader.checkedInt("partJoinKilobytes"), kilobytes, "at most 1048576 (1 GiB)")
            .map { $0 << 10 } ?? min(PartPolicy.standard.joinBytes, split / 2)
        guard split >= 16 << 10, join >= 0, join * 2 <= split else {
            throw SettingsError.invalidPartSizes(splitKilobytes: split >> 10, joinKilobytes: join >> 10)
        }
        settings.partPolicy = PartPolicy(splitBytes: split, joinBytes: join)
        if !commandLine.schemaFiles.isEmpty {
            settings.schemaFiles = commandLine.schemaFiles
        } else {
            // A relative path in the configuration file means one beside it (see "shared" above).
            let configured = try reader.checkedStringArray("schemas") ?? []
            let base = environment["SYNCD_SCHEMAS"] == nil ? configurationDirectory : nil
            settings.schemaFiles = configured.map { Self.path($0, besideIn: base) }
        }
        try DaemonSettings.check(reader, given: commandLine.daemon)
        return settings
    }

    /// The settings that differ from `started`'s which only a new start of syncd applies (a
    /// reload applies the timings, the log level and the schema files), named for its log.
    public func changesTakenAtStart(since started: SyncSettings, running: SnapshotFormat.DeviceID) -> [String] {
        var changed: [String] = []
        if sharedFolder != started.sharedFolder { changed.append("shared") }
        if stateDirectory != started.stateDirectory { changed.append("state") }
        if let given = device, given != running { changed.append("device") }
        if maxFileSize != started.maxFileSize { changed.append("maxFileSize") }
        if safety != started.safety { changed.append("the safety settings (clockSkewMarginSeconds, massDeletion…)") }
        if partPolicy != started.partPolicy { changed.append("the part sizes (partSplitKilobytes, partJoinKilobytes)") }
        return changed
    }

    /// The directory holding the file at `path`.
    private static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// `path` as named from `base` (unchanged when absolute, or with no base).
    private static func path(_ path: String, besideIn base: String?) -> String {
        guard let base, !path.hasPrefix("/") else { return path }
        return base.hasSuffix("/") ? base + path : base + "/" + path
    }

    /// A reader of every configuration source but the command line: `SYNCD_*` variables, then the
    /// configuration file named by `config` (or `SYNCD_CONFIG`), else the user's.
    ///
    /// Keys: `shared`, `state`, `device`, `maxFileSize`, and the daemon's `settleMilliseconds`,
    /// `rescanIntervalSeconds`, `pollIntervalSeconds`, `alwaysPoll`, `logLevel`.
    public static func configurationReader(
        config: String?, environment: [String: String], commandLine: [AbsoluteConfigKey: ConfigValue] = [:]
    ) async throws -> ConfigReader {
        var providers: [any ConfigProvider] = [
            InMemoryProvider(name: "command line", values: commandLine),
            EnvironmentVariablesProvider(environmentVariables: environment).prefixKeys(with: "syncd"),
        ]
        if let file = configurationFile(explicit: config ?? environment["SYNCD_CONFIG"], environment: environment) {
            try checkConfigurationFile(file.path, mustExist: file.isExplicit)
            do {
                providers.append(
                    try await FileProvider<JSONSnapshot>(filePath: FilePath(file.path), allowMissing: !file.isExplicit))
            } catch {
                throw SettingsError.unreadableConfiguration(path: file.path, reason: String(describing: error))
            }
        }
        return ConfigReader(providers: providers)
    }

    /// Every key a configuration file may hold (docs/daemon.md describes each).
    public static let configurationKeys: Set<String> = [
        "shared", "state", "device", "maxFileSize", "schemas", "clockSkewMarginSeconds", "massDeletionMinimum",
        "massDeletionShare", "partSplitKilobytes", "partJoinKilobytes", "settleMilliseconds",
        "rescanIntervalSeconds", "pollIntervalSeconds", "alwaysPoll", "logLevel", "metricsFile",
    ]

    /// Checks a configuration file as strict JSON holding known keys only, when it exists.
    ///
    /// swift-configuration's JSON reader accepts what JSON does not (a trailing comma), and
    /// ignores keys it is not asked for: a misspelt `"maxFilesize"` or `"massDeletionShares"`
    /// would leave its setting at the default without a word. Both are refused instead, naming
    /// the file and the key.
    ///
    /// - Parameter mustExist: whether a missing file is an error (one named by `--config` or
    ///   `SYNCD_CONFIG`; the user's may be absent).
    static func checkConfigurationFile(_ path: String, mustExist: Bool) throws(SettingsError) {
        let bytes: [UInt8]
        do {
            let descriptor = try SystemCalls.openForReading(path)
            defer { SystemCalls.close(descriptor) }
            bytes = try SystemCalls.readAll(descriptor, expectedSize: 4096, path: path)
        } catch {
            // Said plainly here: the configuration library's own error is a Foundation dump.
            if error.errno == ENOENT && !mustExist { return }
            var reason = String(cString: strerror(error.errno))
            if error.errno == EACCES && !mustExist {
                // The user's file, found through XDG_CONFIG_HOME or HOME naming another user's
                // (`sudo -E` and `setpriv` keep both, `su` keeps XDG_CONFIG_HOME).
                reason += " (the default configuration file, found through XDG_CONFIG_HOME or HOME: if they name another user's, set them to this user's, or name the file to read with --config FILE or SYNCD_CONFIG)"
            }
            throw .unreadableConfiguration(path: path, reason: reason)
        }
        let value: JSONValue
        do {
            value = try StrictJSON.parse(bytes)
        } catch {
            throw .unreadableConfiguration(path: path, reason: "it is not valid JSON: \(error)")
        }
        guard case .object(let object) = value else {
            throw .unreadableConfiguration(path: path, reason: #"it must be a JSON object such as {"shared": "/path"}"#)
        }
        let unknown = object.map(\.key).filter { !configurationKeys.contains($0) }
        guard unknown.isEmpty else {
            throw .unreadableConfiguration(
                path: path,
                reason: "unknown setting(s) "
                    + unknown.map { "\"\($0)\"" }.joined(separator: ", ")
                    + "; the settings are " + configurationKeys.sorted().joined(separator: ", ")
                    + " (docs/syncctl.md and docs/daemon.md)")
        }
    }

    /// The state directory when none is given: `$STATE_DIRECTORY` under systemd, else
    /// `$XDG_STATE_HOME/syncd`, else `~/.local/state/syncd`.
    public static func defaultStateDirectory(environment: [String: String]) -> String? {
        if let systemd = environment["STATE_DIRECTORY"], !systemd.isEmpty {
            // systemd may list several directories separated by ':'; the first is ours.
            return String(systemd.split(separator: ":").first ?? "")
        }
        if let xdg = environment["XDG_STATE_HOME"], xdg.hasPrefix("/") { return xdg + "/syncd" }
        if let home = environment["HOME"], !home.isEmpty { return home + "/.local/state/syncd" }
        return nil
    }

    private struct ConfigFile {
        var path: String
        var isExplicit: Bool
    }

    /// The configuration file: the one named (`--config`, `SYNCD_CONFIG`), else the user's, nil
    /// when there is no home to find it in.
    ///
    /// Not /etc/syncd/config.json: that file is the system daemon's (its device ID, its folder),
    /// which it reads by --config. A user's syncctl that took it would publish as a second device of
    /// the same ID from a store of its own.
    /// The configuration file the command line and environment name (`--config`, else
    /// `SYNCD_CONFIG`), else the user's.
    private static func configurationFile(_ commandLine: CommandLineValues, environment: [String: String]) -> ConfigFile? {
        configurationFile(explicit: commandLine.config ?? environment["SYNCD_CONFIG"], environment: environment)
    }

    private static func configurationFile(explicit: String?, environment: [String: String]) -> ConfigFile? {
        if let explicit, !explicit.isEmpty { return ConfigFile(path: explicit, isExplicit: true) }
        if let xdg = environment["XDG_CONFIG_HOME"], xdg.hasPrefix("/") {
            return ConfigFile(path: xdg + "/syncd/config.json", isExplicit: false)
        }
        if let home = environment["HOME"], !home.isEmpty {
            return ConfigFile(path: home + "/.config/syncd/config.json", isExplicit: false)
        }
        return nil
    }
}

extension ConfigReader {
    /// The text at `key`, nil when no source gives any value; throws
    /// ``SettingsError/invalidSetting(key:value:rule:source:)`` when a source gives another kind of value
    /// (a wrong type in a configuration file, or in a `SYNCD_*` variable, is said, not ignored).
    public func checkedString(_ key: String) throws -> String? { try checked(key, "text") { string(forKey: $0) } }

    /// The integer at `key` (see ``checkedString(_:)``).
    public func checkedInt(_ key: String) throws -> Int? { try checked(key, "an integer") { int(forKey: $0) } }

    /// The number at `key`, an integer included (see ``checkedString(_:)``).
    public func checkedDouble(_ key: String) throws -> Double? {
        try checked(key, "a number") { double(forKey: $0) ?? int(forKey: $0).map(Double.init) }
    }

    /// The flag at `key` (see ``checkedString(_:)``).
    public func checkedBool(_ key: String) throws -> Bool? { try checked(key, "true or false") { bool(forKey: $0) } }

    /// The list of texts at `key` (see ``checkedString(_:)``).
    public func checkedStringArray(_ key: String) throws -> [String]? {
        try checked(key, "a list of texts") { stringArray(forKey: $0) }
    }

    private func checked<Value>(_ key: String, _ expected: String, _ read: (ConfigKey) -> Value?) throws -> Value? {
        if let value = read(ConfigKey(key)) { return value }
        try refuseOtherValue(at: key, expected: expected)
        return nil
    }

    private func refuseOtherValue(at key: String, expected: String) throws {
        let configKey = ConfigKey(key)
        var found: String?
        if let text = string(forKey: configKey) {
            found = "\"\(text)\""
        } else if let integer = int(forKey: configKey) {
            found = "\(integer)"
        } else if let number = double(forKey: configKey) {
            found = "\(number)"
        } else if let flag = bool(forKey: configKey) {
            found = "\(flag)"
        } else if let list = stringArray(forKey: configKey) {
            found = "\(list)"
        }
        if let found { throw SettingsError.invalidSetting(key: key, value: found, rule: expected) }
    }
}

/// A setting that is missing or wrong, with what to do about it.
public enum SettingsError: Error, Hashable, Sendable, CustomStringConvertible {
    /// No shared folder given; `configurationFile` is the file read (or that would be), if any.
    case noSharedFolder(configurationFile: String?)
    case noStateDirectory
    case invalidDevice(String, problem: String)
    case unreadableConfiguration(path: String, reason: String)
    case unreadableSchema(path: String, reason: String)
    /// A schema file that is not one, or schema files that disagree (the sentence says which).
    case invalidSchema(String)
    case invalidPartSizes(splitKilobytes: Int, joinKilobytes: Int)
    /// A setting whose value is out of its range (`rule` says the range).
    /// `source` says where the value came from, when known ("in /etc/syncd/config.json").
    case invalidSetting(key: String, value: String, rule: String, source: String? = nil)
    /// A command that only reads the store was given a state directory with no store.
    case noStore(stateDirectory: String)

    public var description: String {
        switch self {
        case .noSharedFolder(let file):
            "no shared folder given: pass --shared DIR, set SYNCD_SHARED, or put \"shared\" in \(file ?? "the configuration file (--config FILE, else ~/.config/syncd/config.json)")"
        case .noStateDirectory:
            "no state directory: pass --state DIR, set SYNCD_STATE, or set HOME or XDG_STATE_HOME"
        case .invalidDevice(let text, let problem):
            "the device ID \"\(text)\" \(problem)"
        case .unreadableConfiguration(let path, let reason):
            "cannot read the configuration file \(path): \(reason)"
        case .invalidSchema(let sentence):
            sentence + #" (or leave the file out of --schema and "schemas")"#
        case .unreadableSchema(let path, let reason):
            "cannot use the schema file \(path): \(reason); fix it (docs/schemas.md) or leave it out of --schema and \"schemas\""
        case .invalidSetting(let key, let value, let rule, let source):
            "the setting \(key) is \(value)\(source.map { " (\($0))" } ?? ""): it must be \(rule) (docs/syncctl.md and docs/daemon.md list the settings)"
        case .noStore(let state):
            "no store in \(state): no merge has run with this state directory. Check --state, SYNCD_STATE or the configuration's \"state\"; to start this device there, run syncctl merge"
        case .invalidPartSizes(let split, let join):
            "partSplitKilobytes \(split) and partJoinKilobytes \(join) do not work together: parts split above at least 16 KiB, and join below at most half of that (defaults: 2048 and 256)"
        }
    }
}
