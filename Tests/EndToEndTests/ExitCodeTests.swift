import Foundation
import SnapshotFormat
import TestSupport
import Testing

@Suite("syncctl: help and exit codes")
struct ExitCodeTests {
    static let helpCases: [(command: String, options: [String])] = [
        ("merge", ["--shared", "--state", "--device", "--config", "--max-file-size", "--json"]),
        ("status", ["--shared", "--json"]),
        ("list", ["--type", "--deleted", "--json"]),
        ("get", ["<id>", "--shared"]),
        ("export", ["--type", "--shared"]),
        ("put", ["--type", "--id", "--schema-version", "<file>"]),
        ("delete", ["--schema-version", "<id>"]),
        ("conflicts", ["--json", "--shared"]),
        ("resolve", ["--take", "--from", "--fields", "--device", "--this-device", "<id>"]),
        ("tidy", ["--json", "--shared", "--dry-run"]),
    ]

    @Test("--help of every subcommand exits 0 and lists its options", arguments: helpCases)
    func help(command: String, options: [String]) throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let run = try workspace.run([command, "--help"])
        #expect(run.status == 0, "\(run)")
        for option in options {
            #expect(run.stdout.contains(option), "syncctl \(command) --help does not mention \(option)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: workspace.shared).isEmpty)
    }

    @Test("syncctl --help lists every subcommand")
    func topLevelHelp() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let run = try workspace.run(["--help"])
        #expect(run.status == 0)
        for command in Self.helpCases.map(\.command) { #expect(run.stdout.contains(command)) }
    }

    @Test(
        "a mistyped command exits 64 naming the command it most likely meant (a swap, a letter missing or extra); a word far from every command is only said to be unknown",
        arguments: [
            ("mrege", "merge"), ("stauts", "status"), ("conflict", "conflicts"), ("tidyy", "tidy"), ("lst", "list"),
            ("frobnicate", nil), ("x", nil),
        ] as [(String, String?)]
    )
    func mistypedCommand(typed: String, meant: String?) throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let run = try workspace.run([typed, "--shared", workspace.shared])
        #expect(run.status == 64, "\(run)")
        #expect(run.stderr.contains("unknown command '\(typed)'"), "\(run)")
        if let meant {
            #expect(run.stderr.contains("Did you mean '\(meant)'?"), "\(run)")
        } else {
            #expect(!run.stderr.contains("Did you mean"), "\(run)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: workspace.shared).isEmpty)
        // And `help WORD` says the same, not the overview with exit 0; `help merge` is help
        let help = try workspace.run(["help", typed])
        #expect(help.status == 64 && help.stderr.contains("unknown command '\(typed)'"), "\(help)")
        let known = try workspace.run(["help", "merge"])
        #expect(known.status == 0 && known.stdout.contains("USAGE: syncctl merge"), "\(known)")
    }

    @Test(
        "the options every command takes may come before the command's name (syncctl --state DIR conflicts, as the docs for the system's store write it); a value that is a command's name stays a value"
    )
    func optionsBeforeTheCommand() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        #expect(try workspace.run(["merge"] + workspace.location()).status == 0)
        let status = try workspace.run(workspace.location() + ["status", "--json"])
        #expect(status.status == 0 && status.stdout.contains("\"device\" : \"desk\""), "\(status)")
        // --state's value "merge" is a directory, not the command: status then finds no store there
        let valueNamedMerge = try workspace.run(["--state", "merge", "status"])
        #expect(valueNamedMerge.status == 78 && valueNamedMerge.stderr.contains("no store in merge"), "\(valueNamedMerge)")
        let unknown = try workspace.run(["--state", workspace.state(), "mrege"])
        #expect(unknown.status == 64 && unknown.stderr.contains("Did you mean 'merge'?"), "\(unknown)")
        // The library's own options keep their values where they are (the package's completions)
        let completion = try workspace.run(["--generate-completion-script", "bash"])
        #expect(completion.status == 0 && completion.stdout.contains("merge"), "\(completion)")
    }

    @Test(
        "syncctl --version and syncd --version print the release debian/changelog names first and the formats read, and exit 0"
    )
    func version() throws {
        let changelog = try String(
            contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
                "../../debian/changelog"),
            encoding: .utf8)
        // "snapshotsync (0.1.0) unstable; urgency=medium"
        let release = try #require(changelog.split(separator: "(", maxSplits: 1).last?.split(separator: ")").first)
        for command in ["syncctl", "syncd"] {
            let path = try #require(BuiltProducts.find(command), "\(command) is not built")
            let run = try CapturedRun.run(path, ["--version"], environment: [:])
            #expect(run.status == 0, "\(run)")
            #expect(run.stdout == "\(command) \(release) (reads snapshot formats 1 to 2, writes 2)\n", "\(run)")
        }
    }

    @Test(
        "output that cannot be written fails the command (exit 74, saying so), and standard error that cannot be written changes nothing: the work is done and the exit code is the documented one"
    )
    func unwritableOutput() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let location = workspace.location()
        for n in 1...80 {
            try #require(
                try workspace.run(
                    ["put", "--type", "Note"] + location,
                    stdin: #"{"title": "item \#(n), long enough to fill a buffer"}"#
                ).status == 0)
        }
        let toFullDisk = ["/bin/sh", "-c", #"exec "$@" >/dev/full"#, "sh"]
        let errorsToFullDisk = ["/bin/sh", "-c", #"exec "$@" 2>/dev/full"#, "sh"]

        // When standard output is a full disk: short text, long text and JSON, and a record
        for arguments in [["status"], ["list"], ["list", "--json"], ["export"]] {
            let run = try workspace.run(arguments + location, prefix: toFullDisk)
            #expect(run.status == 74, "\(arguments): \(run)")
            #expect(run.stderr.contains("cannot write to standard output"), "\(arguments): \(run)")
        }
        // When standard error is a full disk: the documented codes, and the work done
        let unknown = try workspace.run(
            ["get", "99999999-2222-4333-8444-555555555555"] + location, prefix: errorsToFullDisk)
        #expect(unknown.status == 4, "\(unknown)")
        let put = try workspace.run(
            ["put", "--type", "Note"] + location, stdin: #"{"title": "noted"}"#, prefix: errorsToFullDisk)
        #expect(put.status == 0, "\(put)")
        let id = put.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try workspace.run(["get", id] + location).stdout.contains("noted"))
    }

    @Test("put with fields that are not JSON, or not an object, exits 65 with a message and publishes nothing")
    func badFields() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let location = workspace.location()
        #expect(try workspace.run(["merge"] + location).status == 0)
        let before = try workspace.read("desk.json")
        for (input, message) in [
            ("{name: 1}", "not valid JSON"), (#"{"a": 1, "a": 2}"#, "not valid JSON"),
            ("[1, 2]", "must be a JSON object"), ("", "not valid JSON"),
        ] {
            let run = try workspace.run(["put", "--type", "Note"] + location, stdin: input)
            #expect(run.status == 65, "input \(input): \(run)")
            #expect(run.stderr.contains(message), "input \(input): \(run)")
        }
        #expect(try workspace.read("desk.json") == before)
        #expect(try jsonArray(try workspace.run(["list", "--json"] + location).stdout).isEmpty)
        // A type change is refused the same way
        let id = try workspace.run(["put", "--type", "Note"] + location, stdin: "{}").stdout.trimmingCharacters(
            in: .whitespacesAndNewlines)
        let change = try workspace.run(["put", "--type", "Other", "--id", id] + location, stdin: "{}")
        #expect(change.status == 65 && change.stderr.contains("Note"), "\(change)")
        // A malformed id is a command line problem, caught as it is parsed
        let notAnID = try workspace.run(["get", "not-an-id"] + location)
        #expect(notAnID.status == 64 && notAnID.stderr.contains("not-an-id"), "\(notAnID)")
        for arguments in [
            ["delete", "not-an-id"], ["resolve", "not-an-id", "--take", "1"], ["put", "--type", "Note", "--id", "x"],
        ] {
            #expect(try workspace.run(arguments + location, stdin: "{}").status == 64, "\(arguments)")
        }
        // A file of fields that is not there is missing input (66), not unusable data
        let noFile = try workspace.run(["put", "--type", "Note", workspace.path("nofile.json")] + location)
        #expect(noFile.status == 66 && noFile.stderr.contains("no such readable file"), "\(noFile)")
        // An empty path (an unset shell variable) is a usage error naming the option, not "not given"
        for option in ["--shared", "--state", "--config", "--schema"] {
            let run = try workspace.run(["merge"] + location + [option, ""])
            #expect(run.status == 64 && run.stderr.contains("\(option) is empty"), "\(option): \(run)")
        }
    }

    @Test("an unknown record exits 4 for get, delete and resolve")
    func unknownRecord() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        #expect(try workspace.run(["merge"] + workspace.location()).status == 0)
        let location = workspace.location(device: nil)
        let missing = Files.id(404).rawValue
        for arguments in [
            ["get", missing], ["delete", missing], ["resolve", missing, "--take", "1"],
            ["resolve", missing, "--from", "phone"],
        ] {
            let run = try workspace.run(arguments + location)
            #expect(run.status == 4, "\(arguments): \(run)")
            #expect(run.stderr.contains(missing), "\(arguments): \(run)")
        }
    }

    @Test(
        "settings problems: no --shared exits 78 naming SYNCD_SHARED; a missing folder 66; another device's store 78; state inside the folder 73"
    )
    func settingsProblems() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let noShared = try workspace.run(["merge", "--state", workspace.state(), "--device", "desk"])
        #expect(noShared.status == 78, "\(noShared)")
        #expect(noShared.stderr.contains("SYNCD_SHARED"), "\(noShared)")

        let missing = workspace.path("not-mounted")
        let noFolder = try workspace.run(["merge"] + workspace.location(shared: missing))
        #expect(noFolder.status == 66, "\(noFolder)")
        #expect(noFolder.stderr.contains(missing))
        #expect(!FileManager.default.fileExists(atPath: missing))

        #expect(try workspace.run(["merge"] + workspace.location()).status == 0)
        let otherDevice = try workspace.run(["merge"] + workspace.location(device: "phone"))
        #expect(otherDevice.status == 78 && otherDevice.stderr.contains("desk"), "\(otherDevice)")
        let noDevice = try workspace.run(["merge"] + workspace.location(state: workspace.state("fresh"), device: nil))
        #expect(noDevice.status == 78 && noDevice.stderr.contains("--device"), "\(noDevice)")
        // …leaving no store and no key behind, half made: the commands that only read the store
        // still say there is none (a mistyped --state), and the next command given an ID makes it
        for arguments in [["key"], ["merge"]] {
            let run = try workspace.run(arguments + workspace.location(state: workspace.state("fresh"), device: nil))
            #expect(run.status == 78, "\(arguments): \(run)")
        }
        #expect(!FileManager.default.fileExists(atPath: workspace.state("fresh") + "/store.sqlite"))
        #expect(!FileManager.default.fileExists(atPath: workspace.state("fresh") + "/signing.key"))
        let status = try workspace.run(["status"] + workspace.location(state: workspace.state("fresh"), device: nil))
        #expect(status.status == 78 && status.stderr.contains("no store in"), "\(status)")
        // A device ID given on the command line is a usage error; from the environment, a setting
        let badDevice = try workspace.run(
            ["merge"] + workspace.location(state: workspace.state("fresh"), device: "Desk"))
        #expect(badDevice.status == 64 && badDevice.stderr.contains("Desk"), "\(badDevice)")
        var environment = workspace.environment
        environment["SYNCD_DEVICE"] = "Desk"
        let badSetting = try workspace.run(
            ["merge"] + workspace.location(state: workspace.state("fresh"), device: nil), environment: environment)
        #expect(badSetting.status == 78 && badSetting.stderr.contains("Desk"), "\(badSetting)")
        // A largest file size of 0 would refuse every file, this device's own included
        #expect(try workspace.run(["merge", "--max-file-size", "0"] + workspace.location()).status == 64)
        environment = workspace.environment
        environment["SYNCD_MAX_FILE_SIZE"] = "0"
        let zeroSize = try workspace.run(["merge"] + workspace.location(), environment: environment)
        #expect(zeroSize.status == 78 && zeroSize.stderr.contains("maxFileSize"), "\(zeroSize)")

        let inside = try workspace.run(["merge"] + workspace.location(state: workspace.shared))
        #expect(inside.status == 73, "\(inside)")

        let missingConfig = try workspace.run(
            ["merge", "--config", workspace.path("none.json")] + workspace.location())
        #expect(missingConfig.status == 78 && missingConfig.stderr.contains("none.json"), "\(missingConfig)")
    }

    @Test("commands that only read the store work while the shared folder is missing, and say so (status among its warnings; key, which shows nothing the folder changes, says nothing); the others exit 66")
    func readingWithoutFolder() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let id = try workspace.run(["put", "--type", "Note"] + workspace.location(), stdin: #"{"title": "kept"}"#)
            .stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let missing = workspace.path("unmounted")
        let location = workspace.location(shared: missing)
        let status = try workspace.run(["status"] + location)
        #expect(status.status == 0, "\(status)")
        #expect(status.stdout.contains("Warning: the shared folder \(missing) cannot be used"), "\(status)")
        #expect(status.stdout.contains("1 live"), "\(status)")
        let statusJSON = try workspace.run(["status", "--json"] + location)
        #expect(statusJSON.status == 0 && statusJSON.stdout.contains("cannot be used"), "\(statusJSON)")
        for arguments in [["list"], ["get", id], ["export"], ["conflicts"], ["key"], ["trust", "--list"]] {
            let run = try workspace.run(arguments + location)
            #expect(run.status == 0, "\(arguments): \(run)")
            // (key shows nothing the folder would change: no note; status says it once, among its warnings)
            #expect(run.stderr.contains("note: the shared folder") == (arguments != ["key"]), "\(arguments): \(run)")
        }
        #expect(!status.stderr.contains("cannot be used"), "\(status)")
        #expect(try workspace.run(["get", id] + location).stdout.contains("kept"))
        for arguments in [["merge"], ["put", "--type", "Note"], ["delete", id], ["tidy"], ["key", "--rotate"]] {
            let run = try workspace.run(arguments + location, stdin: "{}")
            #expect(run.status == 66, "\(arguments): \(run)")
        }
        #expect(!FileManager.default.fileExists(atPath: missing))
        #expect(try workspace.run(["list"] + workspace.location()).stdout.contains(id))
    }

    @Test(
        "commands that only read the store work with no shared folder given at all (a key read before the folder is set up), and say so; the others exit 78"
    )
    func readingWithNoFolderGiven() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        #expect(
            try workspace.run(["put", "--type", "Note"] + workspace.location(), stdin: #"{"title": "kept"}"#).status
                == 0)
        let location = ["--state", workspace.state(), "--device", "desk"]
        let status = try workspace.run(["status"] + location)
        #expect(status.status == 0, "\(status)")
        #expect(status.stdout.contains("Shared folder:  (none given)"), "\(status)")
        #expect(status.stdout.contains("Warning: no shared folder given: pass --shared DIR"), "\(status)")
        #expect(status.stdout.contains("1 live"), "\(status)")
        for arguments in [["list"], ["export"], ["conflicts"], ["key"], ["trust", "--list"]] {
            let run = try workspace.run(arguments + location)
            #expect(run.status == 0, "\(arguments): \(run)")
            #expect(run.stderr.contains("note: no shared folder given") == (arguments != ["key"]), "\(arguments): \(run)")
        }
        // A new device's key before any folder exists: the store is claimed, the key printed
        let fresh = ["--state", workspace.path("fresh-state"), "--device", "laptop"]
        let key = try workspace.run(["key"] + fresh)
        #expect(key.status == 0 && !key.stdout.isEmpty, "\(key)")
        for arguments in [["merge"], ["put", "--type", "Note"], ["tidy"], ["key", "--rotate"]] {
            let run = try workspace.run(arguments + location, stdin: "{}")
            #expect(run.status == 78 && run.stderr.contains("no shared folder given"), "\(arguments): \(run)")
        }
    }

    @Test(
        "control characters in a file name are shown escaped in text output, never raw: a name cannot forge a line of the report"
    )
    func controlCharactersEscaped() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let forged = "x\nmerged    p9.json phone, generation 7\u{1B}[2K.json"
        try workspace.write(forged, Array("{}".utf8))
        let merge = try workspace.run(["merge"] + workspace.location())
        #expect(merge.status == 3, "\(merge)")
        #expect(!merge.stdout.contains("\nmerged    p9.json") && !merge.stdout.contains("\u{1B}"), "\(merge.stdout)")
        #expect(merge.stdout.contains("x\\u{A}merged"), "\(merge.stdout)")
        let status = try workspace.run(["status"] + workspace.location())
        #expect(!status.stdout.contains("\u{1B}") && status.stdout.contains("\\u{1B}"), "\(status.stdout)")
        // JSON says it as JSON does
        let json = try workspace.run(["merge", "--json"] + workspace.location())
        #expect(json.stdout.contains("x\\nmerged"), "\(json.stdout)")
        // A name that holds the escape's own characters is not shown as an escaped control
        try workspace.write("y\\u{A}z.json", Array("{}".utf8))
        let literal = try workspace.run(["merge"] + workspace.location())
        #expect(
            literal.stdout.contains("y\\\\u{A}z.json") && !literal.stdout.contains("y\\u{A}z.json"), "\(literal.stdout)"
        )
        // Nor is a backslash before an escaped control, nor a backslash in a name with neither
        try workspace.write("w\\\nz.json", Array("{}".utf8))
        try workspace.write("C:\\w.json", Array("{}".utf8))
        let before = try workspace.run(["merge"] + workspace.location())
        #expect(before.stdout.contains("w\\\\\\u{A}z.json") && before.stdout.contains("C:\\w.json"), "\(before.stdout)")
    }

    @Test(
        "a shared folder that is a link to an unmounted drive: commands that only read the store work with a note, the others exit 66 (not 73)"
    )
    func folderBehindBrokenLink() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        #expect(try workspace.run(["merge"] + workspace.location()).status == 0)
        let link = workspace.path("Sync")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "/nonexistent/usb/Sync")
        let status = try workspace.run(["status"] + workspace.location(shared: link))
        #expect(status.status == 0 && status.stdout.contains("Warning: the shared folder"), "\(status)")
        let merge = try workspace.run(["merge"] + workspace.location(shared: link))
        #expect(merge.status == 66, "\(merge)")
    }

    @Test(
        "a file under this device's own name that it cannot read is neither overwritten nor lost: its parts go out around it",
        .enabled(
            if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"),
            "needs root and setpriv to run as nobody")
    )
    func unreadableOwnFileKept() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        // desk.json (not written by this state directory) readable by root only; syncctl runs as nobody
        let original = Files.snapshot("desk", generation: 5, versions: [Files.version(1, by: "desk")])
        try workspace.write("desk.json", original)
        try workspace.write(
            "phone.json", Files.snapshot("phone", generation: 1, versions: [Files.version(2, by: "phone")]))
        #expect(chmod(workspace.sharedPath("desk.json"), 0o000) == 0)
        #expect(chmod(workspace.shared, 0o777) == 0)
        let state = workspace.state()
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        #expect(chown(state, 65534, 65534) == 0)
        let nobody = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        let merge = try workspace.run(["merge"] + workspace.location(), prefix: nobody)
        // It was skipped (exit 3), left as it was, and the device's records went out in parts
        #expect(merge.status == 3, "\(merge)")
        #expect(FileManager.default.contents(atPath: workspace.sharedPath("desk.json")) == Data(original))
        #expect(merge.stdout.contains("desk.json is not replaced"), "\(merge)")
        let names = try FileManager.default.contentsOfDirectory(atPath: workspace.shared)
        #expect(names.filter { $0.hasPrefix("desk.") && $0 != "desk.json" }.count == 16, "\(names)")
        // And once it can be read, it merges: its record is held
        #expect(chmod(workspace.sharedPath("desk.json"), 0o644) == 0)
        let again = try workspace.run(["merge"] + workspace.location(), prefix: nobody)
        #expect(again.status == 0, "\(again)")
        let listed = try workspace.run(["list", "--json"] + workspace.location(), prefix: nobody)
        #expect(listed.stdout.contains(Files.id(1).rawValue), "\(listed)")
    }

    @Test("a state directory that is a link to a directory not there (a drive not mounted yet), or a path under a file, is said to be so: not taken for one without a store, nor made")
    func stateDirectoryLinkToNothing() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let link = workspace.path("state-link")
        #expect(symlink(workspace.path("not-mounted/state"), link) == 0)
        // A state path under a file (a typo in --state) is not a directory without a store either
        try Data("x".utf8).write(to: URL(fileURLWithPath: workspace.path("a-file")))
        let cases = [
            (link, "symbolic link to a directory that is not there"),
            (workspace.path("a-file/state"), "Not a directory"),
        ]
        for (state, said) in cases {
            for arguments in [["status"], ["merge"]] {
                let run = try workspace.run(arguments + workspace.location(state: state))
                #expect(run.status == 73, "\(arguments): \(run)")
                #expect(run.stderr.contains(said) && !run.stderr.contains("no store"), "\(arguments): \(run)")
            }
        }
        #expect(!FileManager.default.fileExists(atPath: workspace.path("not-mounted")))
    }

    @Test(
        "the default configuration file under another user's HOME (kept by sudo -E or setpriv) is said to be so, with how to name the file to read",
        .enabled(
            if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"),
            "needs root and setpriv to run as nobody")
    )
    func defaultConfigurationOfAnotherUser() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        // Given a HOME whose configuration directory only root may enter
        let home = workspace.path("home")
        try FileManager.default.createDirectory(atPath: home + "/.config/syncd", withIntermediateDirectories: true)
        try Data(#"{"device": "desk"}"#.utf8).write(to: URL(fileURLWithPath: home + "/.config/syncd/config.json"))
        #expect(chmod(home + "/.config/syncd", 0o700) == 0)
        #expect(chmod(workspace.root.path, 0o755) == 0)
        #expect(chmod(home, 0o755) == 0)
        #expect(chmod(home + "/.config", 0o755) == 0)
        let nobody = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        // When another user runs syncctl with that HOME
        let run = try workspace.run(["status", "--state", workspace.path("state")], prefix: nobody)
        // Then it is refused, naming the file, why, and what to do
        #expect(run.status == 78, "\(run)")
        #expect(
            run.stderr.contains("\(home)/.config/syncd/config.json: Permission denied (the default configuration file")
                && run.stderr.contains("--config FILE"), "\(run)")
    }

    @Test(
        "a state directory this user may not look into (the system syncd's, mode 0700) is said to be one, with how to run as syncd's user: not taken for one without a store",
        .enabled(
            if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"),
            "needs root and setpriv to run as nobody")
    )
    func stateDirectoryClosedToThisUser() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        // Given a store made by root in a state directory only root may enter
        #expect(try workspace.run(["merge"] + workspace.location()).status == 0)
        #expect(chmod(workspace.state(), 0o700) == 0)
        let before = try FileManager.default.contentsOfDirectory(atPath: workspace.state()).sorted()
        #expect(chmod(workspace.root.path, 0o755) == 0)
        #expect(chmod(workspace.shared, 0o777) == 0)
        let home = workspace.root.appendingPathComponent("home").path
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        #expect(chmod(home, 0o777) == 0)
        let nobody = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        // When another user runs a command that reads the store, or a merge
        for arguments in [["status"], ["list"], ["merge"]] {
            let run = try workspace.run(arguments + workspace.location(), prefix: nobody)
            // Then it is refused as a state directory it cannot use, saying why and how, not as an empty one
            #expect(run.status == 73, "\(arguments): \(run)")
            #expect(
                run.stderr.contains("Permission denied: this user may not look into it, or into a directory above it")
                    && run.stderr.contains("sudo -u syncd") && !run.stderr.contains("no store"),
                "\(arguments): \(run)")
        }
        // And nothing was made there
        #expect(try FileManager.default.contentsOfDirectory(atPath: workspace.state()).sorted() == before)
    }

    @Test(
        "an edit saved in the store but not published (a folder this user cannot write) prints its id all the same, exits 74 and says not to make it again; a merge meanwhile prints its report with why it published nothing, and exits 74; the next merge publishes it",
        .enabled(
            if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"),
            "needs root and setpriv to run as nobody")
    )
    func editSavedNotPublished() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let state = workspace.state()
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        #expect(chown(state, 65534, 65534) == 0)
        #expect(chmod(workspace.shared, 0o777) == 0)
        let nobody = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        #expect(try workspace.run(["merge"] + workspace.location(), prefix: nobody).status == 0)
        // When the folder becomes read-only for that user, and it puts a record
        #expect(chmod(workspace.shared, 0o755) == 0)
        let put = try workspace.run(
            ["put", "--type", "Note"] + workspace.location(), stdin: #"{"title": "once"}"#, prefix: nobody)
        // Then it exits 74, prints the new record's id, and says it is saved: not to be made again
        #expect(put.status == 74, "\(put)")
        let id = put.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(RecordID(id) != nil, "\(put)")
        #expect(
            put.stderr.contains("record \(id) is saved in this device's store")
                && put.stderr.contains("Do not make the edit again"), "\(put)")
        // And a merge meanwhile prints its report, saying why nothing was published, then fails the same way
        let merge = try workspace.run(["merge", "--json"] + workspace.location(), prefix: nobody)
        #expect(merge.status == 74, "\(merge)")
        guard case .object(let report) = try StrictJSON.parse(Array(merge.stdout.utf8)),
            case .string(let failure)? = report["publishFailure"]
        else {
            Issue.record("no report with publishFailure: \(merge)")
            return
        }
        #expect(failure.contains("could not publish") && merge.stderr.contains(failure), "\(merge)")
        #expect(report["publishedFiles"] == .array([]), "\(merge)")
        let text = try workspace.run(["merge"] + workspace.location(), prefix: nobody)
        #expect(text.status == 74 && text.stdout.contains("This device's snapshot is not published"), "\(text)")
        // And an edit refused meanwhile (a record deleted already) says why, and that nothing could be published either
        #expect(try workspace.run(["delete", id] + workspace.location(), prefix: nobody).status == 74)
        let again = try workspace.run(["delete", id] + workspace.location(), prefix: nobody)
        #expect(again.status == 65, "\(again)")
        #expect(
            again.stderr.contains("this device's files could not be published") && again.stderr.contains("deleted"),
            "\(again)")
        // And once the folder is writable, the next merge publishes it
        #expect(chmod(workspace.shared, 0o777) == 0)
        #expect(try workspace.run(["merge"] + workspace.location(), prefix: nobody).status == 0)
        let published = try Files.published(in: workspace.shared, device: "desk")
        #expect(published.records.contains { "\($0)".contains(id) }, "\(published.records)")
    }

    @Test("a store that is not a database, or is damaged, is said to be so and what to do (exit 73), not a permissions problem")
    func damagedStore() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        #expect(try workspace.run(["merge"] + workspace.location()).status == 0)
        let store = workspace.state() + "/store.sqlite"
        for damage in ["not a database", "truncated"] {
            if damage == "truncated" {
                #expect(try workspace.run(["merge"] + workspace.location(state: workspace.state("other"))).status == 0)
                try FileManager.default.copyItem(atPath: workspace.state("other") + "/store.sqlite", toPath: store + ".new")
                #expect(truncate(store + ".new", 8192) == 0)
                try FileManager.default.removeItem(atPath: store)
                try FileManager.default.moveItem(atPath: store + ".new", toPath: store)
            } else {
                try Data("garbage".utf8).write(to: URL(fileURLWithPath: store))
            }
            for path in [store + "-wal", store + "-shm"] { try? FileManager.default.removeItem(atPath: path) }
            for arguments in [["status"], ["merge"]] {
                let run = try workspace.run(arguments + workspace.location())
                #expect(run.status == 73, "\(damage) \(arguments): \(run)")
                #expect(
                    run.stderr.contains("the store \(store) is damaged")
                        && run.stderr.contains("make a new store from the shared folder")
                        && !run.stderr.contains("permissions"), "\(damage) \(arguments): \(run)")
            }
        }
    }

    @Test(
        "a command that only reads the store, given a state directory with no store (a mistyped --state), exits 78 and leaves nothing there; the first merge says it made a store"
    )
    func readingANonexistentStore() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let typo = workspace.state("stat")
        for arguments in [
            ["status"], ["list"], ["export"], ["conflicts"], ["get", Files.id(1).rawValue], ["trust", "--list"],
        ] {
            let run = try workspace.run(arguments + workspace.location(state: typo))
            #expect(run.status == 78, "\(arguments): \(run)")
            #expect(run.stderr.contains("no store in \(typo)"), "\(arguments): \(run)")
            #expect(!FileManager.default.fileExists(atPath: typo + "/store.sqlite"), "\(arguments)")
            #expect(!FileManager.default.fileExists(atPath: typo + "/signing.key"), "\(arguments)")
        }
        // A regular file given as the state directory is said to be one, by every command
        let file = workspace.path("afile")
        try Data("x".utf8).write(to: URL(fileURLWithPath: file))
        for arguments in [["status"], ["merge"]] {
            let run = try workspace.run(arguments + workspace.location(state: file))
            #expect(run.status == 73 && run.stderr.contains("it is not a directory"), "\(arguments): \(run)")
        }
        let merge = try workspace.run(["merge"] + workspace.location())
        #expect(merge.status == 0 && merge.stderr.contains("made a new store for device desk"), "\(merge)")
        #expect(try workspace.run(["list"] + workspace.location()).status == 0)
    }

    @Test(
        "status --json names in one word why a file did not merge (problemKind, as merge --json does); export accepts --json like every command that prints data"
    )
    func problemKindAndExportJSON() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        try workspace.write(
            "phone.json", Array(#"{"format": 1, "device": "phone", "generation": 1, "records": ["#.utf8))
        let merge = try workspace.run(["merge"] + workspace.location())
        #expect(merge.status == 3, "\(merge)")
        let status = try workspace.run(["status", "--json"] + workspace.location())
        guard case .object(let report) = try StrictJSON.parse(Array(status.stdout.utf8)),
            case .array(let sources)? = report["sources"]
        else {
            Issue.record("no sources in \(status)")
            return
        }
        let phone = sources.first {
            if case .object(let source) = $0 { source["name"] == .string("phone.json") } else { false }
        }
        guard case .object(let source)? = phone else {
            Issue.record("no phone.json in \(status)")
            return
        }
        #expect(source["problemKind"] != nil && source["problemKind"] != .null, "\(source)")
        let export = try workspace.run(["export", "--json"] + workspace.location())
        #expect(export.status == 0 && export.stdout.hasPrefix(#"{"device":"desk""#), "\(export)")
    }

    @Test("a wrong command line exits 64")
    func usage() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        #expect(
            try workspace.run(
                ["resolve", Files.id(1).rawValue, "--take", "1", "--from", "x"] + workspace.location(device: nil)
            ).status == 64)
        // --device names this device in resolve too: alone it chooses no version, and says where that went
        let oldMeaning = try workspace.run(["resolve", Files.id(1).rawValue] + workspace.location(device: "phone"))
        #expect(oldMeaning.status == 64 && oldMeaning.stderr.contains("--from DEVICE"), "\(oldMeaning)")
        #expect(try workspace.run(["put"] + workspace.location()).status == 64)
        #expect(try workspace.run(["frobnicate"]).status == 64)
    }
}
