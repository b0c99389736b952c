import Foundation
import SnapshotFormat
import SyncEngine
import Testing

@Suite("Engine: resolving settings")
struct SettingsTests {
    typealias Values = SyncSettings.CommandLineValues

    /// A directory holding a configuration file with every key, and a home without one.
    struct ConfigFolder {
        let root: URL
        init() throws {
            root = FileManager.default.temporaryDirectory.appendingPathComponent("SettingsTests-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: root.appendingPathComponent("home"), withIntermediateDirectories: true)
        }
        var home: String { root.appendingPathComponent("home").path }
        func config(_ json: String, name: String = "config.json") throws -> String {
            let path = root.appendingPathComponent(name).path
            try Data(json.utf8).write(to: URL(fileURLWithPath: path))
            return path
        }
        func remove() { try? FileManager.default.removeItem(at: root) }
    }

    static let fullConfig = #"{"shared": "/config/shared", "state": "/config/state", "device": "fromconfig", "maxFileSize": 111}"#

    @Test("The command line beats SYNCD_* variables, which beat the explicit config file")
    func precedence() async throws {
        let folder = try ConfigFolder()
        defer { folder.remove() }
        let config = try folder.config(Self.fullConfig)
        let environment = [
            "HOME": folder.home, "SYNCD_SHARED": "/env/shared", "SYNCD_STATE": "/env/state", "SYNCD_DEVICE": "fromenv",
            "SYNCD_MAX_FILE_SIZE": "222",
        ]
        // Everything given everywhere: the command line wins
        let all = try await SyncSettings.resolve(
            commandLine: Values(shared: "/cli/shared", state: "/cli/state", device: "fromcli", config: config, maxFileSize: 333),
            environment: environment)
        #expect(all == SyncSettings(sharedFolder: "/cli/shared", stateDirectory: "/cli/state", device: DeviceID("fromcli"), maxFileSize: 333))
        // Nothing on the command line: the environment wins over the file
        let env = try await SyncSettings.resolve(commandLine: Values(config: config), environment: environment)
        #expect(env == SyncSettings(sharedFolder: "/env/shared", stateDirectory: "/env/state", device: DeviceID("fromenv"), maxFileSize: 222))
        // Only the file
        let file = try await SyncSettings.resolve(commandLine: Values(config: config), environment: ["HOME": folder.home])
        #expect(file == SyncSettings(sharedFolder: "/config/shared", stateDirectory: "/config/state", device: DeviceID("fromconfig"), maxFileSize: 111))
        // A mix: each setting from the highest place that gives it
        let mixed = try await SyncSettings.resolve(
            commandLine: Values(device: "fromcli", config: config), environment: ["HOME": folder.home, "SYNCD_STATE": "/env/state"])
        #expect(mixed == SyncSettings(sharedFolder: "/config/shared", stateDirectory: "/env/state", device: DeviceID("fromcli"), maxFileSize: 111))
    }

    @Test("A relative shared folder or state directory in the configuration file is beside the file, not in the working directory; given elsewhere it stays as given")
    func relativePathsInTheFile() async throws {
        let folder = try ConfigFolder()
        defer { folder.remove() }
        let config = try folder.config(#"{"shared": "lists", "state": "state/desk", "device": "desk"}"#)
        let base = folder.root.path
        let file = try await SyncSettings.resolve(commandLine: Values(config: config), environment: ["HOME": folder.home])
        #expect(file.sharedFolder == base + "/lists" && file.stateDirectory == base + "/state/desk", "\(file)")
        let given = try await SyncSettings.resolve(
            commandLine: Values(shared: "here", config: config), environment: ["HOME": folder.home, "SYNCD_STATE": "there"])
        #expect(given.sharedFolder == "here" && given.stateDirectory == "there", "\(given)")
    }

    @Test("A configuration file that cannot be read is refused saying why in plain words, not as a library's error dump")
    func unreadableFile() async throws {
        let folder = try ConfigFolder()
        defer { folder.remove() }
        let directory = folder.root.appendingPathComponent("config.d.json").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for (path, said) in [(directory, "Is a directory"), (folder.root.appendingPathComponent("none.json").path, "No such file or directory")] {
            await #expect(throws: SettingsError.unreadableConfiguration(path: path, reason: said)) {
                _ = try await SyncSettings.resolve(commandLine: Values(shared: "/s", config: path), environment: ["HOME": folder.home])
            }
        }
        await #expect(throws: SettingsError.invalidSetting(key: "SYNCD_STATE", value: "set but empty", rule: "a directory (unset it for the default)")) {
            _ = try await SyncSettings.resolve(commandLine: Values(shared: "/s"), environment: ["HOME": folder.home, "SYNCD_STATE": ""])
        }
    }

    @Test("A setting of the wrong kind or out of its range, in the file or in a SYNCD_* variable, is refused naming it and where it came from (the variable, or the file), not ignored: the daemon's own by syncctl as well", arguments: [
        (#"{"shared": "/s", "maxFileSize": "big"}"#, [:], "maxFileSize"),
        (#"{"shared": 42}"#, [:], "shared"),
        (#"{"shared": "/s", "schemas": "one.json"}"#, [:], "schemas"),
        (#"{"shared": "/s", "massDeletionShare": "half"}"#, [:], "massDeletionShare"),
        (#"{"shared": "/s"}"#, ["SYNCD_PART_SPLIT_KILOBYTES": "abc"], "partSplitKilobytes"),
        // numbers outside what they can mean (a share of 2; seconds that overflow as milliseconds)
        (#"{"shared": "/s", "massDeletionShare": -1}"#, [:], "massDeletionShare"),
        (#"{"shared": "/s"}"#, ["SYNCD_MASS_DELETION_SHARE": "2"], "massDeletionShare"),
        (#"{"shared": "/s"}"#, ["SYNCD_MASS_DELETION_SHARE": "nan"], "massDeletionShare"),
        (#"{"shared": "/s"}"#, ["SYNCD_MASS_DELETION_MINIMUM": "-1"], "massDeletionMinimum"),
        (#"{"shared": "/s", "clockSkewMarginSeconds": -10}"#, [:], "clockSkewMarginSeconds"),
        (#"{"shared": "/s"}"#, ["SYNCD_CLOCK_SKEW_MARGIN_SECONDS": "9223372036854775807"], "clockSkewMarginSeconds"),
        (#"{"shared": "/s", "partSplitKilobytes": 9007199254740991}"#, [:], "partSplitKilobytes"),
        // the daemon's own settings, refused by every command that reads them, not only by syncd
        (#"{"shared": "/s", "settleMilliseconds": "abc"}"#, [:], "settleMilliseconds"),
        (#"{"shared": "/s", "rescanIntervalSeconds": 0}"#, [:], "rescanIntervalSeconds"),
        (#"{"shared": "/s"}"#, ["SYNCD_POLL_INTERVAL_SECONDS": "-5"], "pollIntervalSeconds"),
        (#"{"shared": "/s", "alwaysPoll": "yes"}"#, [:], "alwaysPoll"),
        (#"{"shared": "/s", "logLevel": "loud"}"#, [:], "logLevel"),
        (#"{"shared": "/s", "metricsFile": 7}"#, [:], "metricsFile"),
    ] as [(String, [String: String], String)])
    func wrongKind(json: String, variables: [String: String], key: String) async throws {
        let folder = try ConfigFolder()
        defer { folder.remove() }
        let config = try folder.config(json)
        let environment = variables.merging(["HOME": folder.home]) { $1 }
        await #expect {
            _ = try await SyncSettings.resolve(commandLine: Values(config: config), environment: environment)
        } throws: { error in
            guard case SettingsError.invalidSetting(let named, _, _, _) = error else { return false }
            // …saying where the value came from: the variable, else the file
            let source = variables.isEmpty ? "(in \(config))" : "(from \(variables.keys.first!) in the environment)"
            #expect(error.localizedDescription.contains(source) || "\(error)".contains(source), "\(error)")
            return named == key
        }
    }

    @Test("A configuration file that is not strict JSON, not an object, or holds an unknown key is refused, naming the file and the key", arguments: [
        (#"{"shared": "/s", "maxFilesize": 5}"#, "\"maxFilesize\""),
        (#"{"shared": "/s",}"#, "not valid JSON"),
        (#"{"shared": "/s" /* here */}"#, "not valid JSON"),
        (#"{"shared": "/s", "shared": "/t"}"#, "not valid JSON"),
        (#"["shared"]"#, "JSON object"),
    ])
    func strictFile(json: String, said: String) async throws {
        let folder = try ConfigFolder()
        defer { folder.remove() }
        let config = try folder.config(json)
        await #expect {
            _ = try await SyncSettings.resolve(commandLine: Values(config: config), environment: ["HOME": folder.home])
        } throws: { error in
            guard case SettingsError.unreadableConfiguration(let path, _) = error else { return false }
            return path == config && "\(error)".contains(said)
        }
        // The user's file, found without --config, is checked the same way
        let userConfig = folder.home + "/.config/syncd/config.json"
        try FileManager.default.createDirectory(atPath: folder.home + "/.config/syncd", withIntermediateDirectories: true)
        try Data(json.utf8).write(to: URL(fileURLWithPath: userConfig))
        await #expect(throws: SettingsError.self) {
            _ = try await SyncSettings.resolve(commandLine: Values(), environment: ["HOME": folder.home])
        }
    }

    @Test("Every key the settings are read by is a known configuration key, and a file holding them all is accepted")
    func everyKeyKnown() async throws {
        // The keys the code reads, as its checked readers name them (Sources/…: checkedInt("…") …)
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources")
        var read: Set<String> = []
        let files = try #require(FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil))
        for case let file as URL in files where file.pathExtension == "swift" {
            let text = try String(contentsOf: file, encoding: .utf8)
            for match in text.matches(of: /checked(?:String|Int|Double|Bool|StringArray)\("([A-Za-z]+)"\)/) {
                read.insert(String(match.1))
            }
        }
        #expect(read.count >= 10, "\(read)")
        #expect(read == SyncSettings.configurationKeys, "read but not known: \(read.subtracting(SyncSettings.configurationKeys)); known but never read: \(SyncSettings.configurationKeys.subtracting(read))")
        let folder = try ConfigFolder()
        defer { folder.remove() }
        let config = try folder.config(
            #"{"shared": "/s", "state": "/t", "device": "d", "maxFileSize": 100, "schemas": [], "clockSkewMarginSeconds": 60, "#
                + #""massDeletionMinimum": 10, "massDeletionShare": 0.5, "partSplitKilobytes": 2048, "partJoinKilobytes": 256, "#
                + #""settleMilliseconds": 100, "rescanIntervalSeconds": 60, "pollIntervalSeconds": 10, "alwaysPoll": false, "#
                + #""logLevel": "info", "metricsFile": "off"}"#)
        let settings = try await SyncSettings.resolve(commandLine: Values(config: config), environment: ["HOME": folder.home])
        #expect(settings.sharedFolder == "/s" && settings.maxFileSize == 100)
        // The example the package installs as /etc/syncd/config.json.example is refused until its
        // device placeholder is replaced (copied unchanged, it would give every machine one ID);
        // every other key in it is accepted
        let example = sources.deletingLastPathComponent().appendingPathComponent("debian/syncd-config/config.json.example")
        let placeholder = await #expect(throws: SettingsError.self) {
            try await SyncSettings.resolve(
                commandLine: Values(shared: "/s", config: example.path), environment: ["HOME": folder.home])
        }
        #expect(placeholder?.description.contains("CHANGE-ME") == true, "\(String(describing: placeholder))")
        let fromExample = try await SyncSettings.resolve(
            commandLine: Values(shared: "/s", device: "nas", config: example.path), environment: ["HOME": folder.home])
        #expect(fromExample.sharedFolder == "/s" && fromExample.device?.rawValue == "nas")
    }

    @Test("A number setting may be written as an integer")
    func integerForANumber() async throws {
        let folder = try ConfigFolder()
        defer { folder.remove() }
        let config = try folder.config(#"{"shared": "/s", "massDeletionShare": 1}"#)
        let settings = try await SyncSettings.resolve(commandLine: Values(config: config), environment: ["HOME": folder.home])
        #expect(settings.safety.massDeletionShare == 1)
    }

    @Test("SYNCD_CONFIG names the config file when --config is not given; --config wins over it")
    func configFromEnvironment() async throws {
        let folder = try ConfigFolder()
        defer { folder.remove() }
        let first = try folder.config(#"{"shared": "/first"}"#, name: "first.json")
        let second = try folder.config(#"{"shared": "/second"}"#, name: "second.json")
        let viaEnvironment = try await SyncSettings.resolve(commandLine: Values(), environment: ["HOME": folder.home, "SYNCD_CONFIG": first])
        #expect(viaEnvironment.sharedFolder == "/first")
        let viaOption = try await SyncSettings.resolve(commandLine: Values(config: second), environment: ["HOME": folder.home, "SYNCD_CONFIG": first])
        #expect(viaOption.sharedFolder == "/second")
    }

    @Test("Defaults: no device, the largest file size, and the state directory from XDG_STATE_HOME, else HOME")
    func defaults() async throws {
        let folder = try ConfigFolder()
        defer { folder.remove() }
        let withHome = try await SyncSettings.resolve(commandLine: Values(shared: "/s"), environment: ["HOME": folder.home])
        #expect(withHome == SyncSettings(sharedFolder: "/s", stateDirectory: folder.home + "/.local/state/syncd", device: nil))
        #expect(withHome.maxFileSize == SyncSettings.defaultMaxFileSize)
        let withXDG = try await SyncSettings.resolve(
            commandLine: Values(shared: "/s"), environment: ["HOME": folder.home, "XDG_STATE_HOME": "/xdg/state"])
        #expect(withXDG.stateDirectory == "/xdg/state/syncd")
        // A relative XDG_STATE_HOME is ignored, as the XDG specification says
        let relative = try await SyncSettings.resolve(
            commandLine: Values(shared: "/s"), environment: ["HOME": folder.home, "XDG_STATE_HOME": "relative"])
        #expect(relative.stateDirectory == folder.home + "/.local/state/syncd")
        #expect(SyncSettings.defaultStateDirectory(environment: [:]) == nil)
        // Under systemd, STATE_DIRECTORY (its first entry) comes first
        let systemd = try await SyncSettings.resolve(
            commandLine: Values(shared: "/s"),
            environment: ["HOME": folder.home, "XDG_STATE_HOME": "/xdg/state", "STATE_DIRECTORY": "/var/lib/syncd:/other"])
        #expect(systemd.stateDirectory == "/var/lib/syncd")
    }

    @Test("The user's config file is read when no explicit one is given")
    func userConfigFile() async throws {
        let folder = try ConfigFolder()
        defer { folder.remove() }
        try FileManager.default.createDirectory(atPath: folder.home + "/.config/syncd", withIntermediateDirectories: true)
        try Data(#"{"shared": "/from/home/config", "device": "homedevice"}"#.utf8).write(to: URL(fileURLWithPath: folder.home + "/.config/syncd/config.json"))
        let settings = try await SyncSettings.resolve(commandLine: Values(), environment: ["HOME": folder.home])
        #expect(settings.sharedFolder == "/from/home/config" && settings.device == DeviceID("homedevice"))
    }

    @Test("A missing explicit config file is an error naming it")
    func missingExplicitConfig() async throws {
        let folder = try ConfigFolder()
        defer { folder.remove() }
        let missing = folder.root.appendingPathComponent("nope.json").path
        do {
            _ = try await SyncSettings.resolve(commandLine: Values(shared: "/s", config: missing), environment: ["HOME": folder.home])
            Issue.record("a missing explicit config file was accepted")
        } catch let error as SettingsError {
            guard case .unreadableConfiguration(let path, _) = error else { throw error }
            #expect(path == missing && error.description.contains(missing))
        }
    }

    @Test("Missing or invalid settings are errors that say how to give them")
    func invalidSettings() async throws {
        let folder = try ConfigFolder()
        defer { folder.remove() }
        await #expect(throws: SettingsError.noSharedFolder(configurationFile: folder.home + "/.config/syncd/config.json")) {
            _ = try await SyncSettings.resolve(commandLine: Values(), environment: ["HOME": folder.home])
        }
        // (naming the configuration file read: the one --config names replaces the user's)
        let other = try folder.config(#"{"device": "desk"}"#, name: "other.json")
        await #expect(throws: SettingsError.noSharedFolder(configurationFile: other)) {
            _ = try await SyncSettings.resolve(commandLine: Values(config: other), environment: ["HOME": folder.home])
        }
        #expect(SettingsError.noSharedFolder(configurationFile: other).description.contains("SYNCD_SHARED"))
        #expect(SettingsError.noSharedFolder(configurationFile: other).description.contains("\"shared\" in \(other)"))
        await #expect(throws: SettingsError.noStateDirectory) {
            _ = try await SyncSettings.resolve(commandLine: Values(shared: "/s"), environment: [:])
        }
        do {
            _ = try await SyncSettings.resolve(commandLine: Values(shared: "/s", device: "Laptop"), environment: ["HOME": folder.home])
            Issue.record("an upper-case device ID was accepted")
        } catch SettingsError.invalidDevice(let text, _) {
            #expect(text == "Laptop")
        }
    }
}
