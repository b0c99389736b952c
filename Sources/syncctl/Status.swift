import ArgumentParser
import SyncCommandLine
import SyncEngine

extension SyncctlCommand {
    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "status",
            abstract: "Show this device, its folder and store, record counts and every source.",
            discussion: """
                Reads the store (no file in the shared folder is opened): what the last merge \
                saw, and whether this device's own files are still in the folder. It works while the shared folder is missing (an unmounted drive) or not given at all, and says so. Warnings point at what needs a person, such as another device using this \
                device's ID or a peer whose generation went backwards.

                Example (the store of the system's syncd.service):
                  sudo -u syncd syncctl status --state /var/lib/syncd \\
                      --config /etc/syncd/config.json
                """)

        @OptionGroup var global: GlobalOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            try await reportingFailures {
                let status = try await global.openDeviceForReading(notingFolderProblem: false).status()
                if output.json { return try printJSON(status) }
                print("Device:         \(status.device)")
                print("Shared folder:  \(status.sharedFolder.isEmpty ? "(none given)" : status.sharedFolder)")
                print("Store:          \(status.store)")
                print(
                    "Published:      "
                        + (status.publishedGeneration.map { "generation \($0) at \(status.lastPublished ?? "?")" }
                            ?? "never"))
                print(
                    "Records:        \(status.counts.live) live, \(status.counts.deleted) deleted, \(status.counts.inConflict) in conflict"
                )
                if status.trusted.isEmpty {
                    print("Trust:          none (every file merges, signed or not; see syncctl trust)")
                } else {
                    print("Trust:          only files signed by these devices' keys merge")
                    for entry in status.trusted {
                        print(
                            "  " + padded(entry.device, 16) + " " + entry.fingerprint
                                + (entry.isThisDevice ? "  (this device)" : ""))
                    }
                }
                print(status.sources.isEmpty ? "Sources:        none yet (no merge has read the folder)" : "Sources:")
                // Columns as wide as their longest value (a sync tool's copy has a long name).
                let nameWidth = min(status.sources.map(\.name.count).max() ?? 0, 64)
                let deviceWidth = min(max(status.sources.compactMap(\.device?.count).max() ?? 0, 6), 64)
                for source in status.sources {
                    var line = "  " + padded(source.name, nameWidth) + "  " + padded(source.device ?? "?", deviceWidth)
                    line += "  " + padded(source.role ?? "-", 4) + "  "
                    let merged =
                        source.problemKind == "held_back"
                        ? "held back" : source.lastMerged.map { "merged \($0)" } ?? "never merged"
                    line += [source.generation.map { "generation \($0)" }, merged].compactMap { $0 }.joined(separator: ", ")
                    if !source.present { line += " (no longer in the folder)" }
                    print(line)
                    if let problem = source.lastProblem { print("      problem: \(problem)") }
                    if let warning = source.lastWarning { print("      warning: \(warning)") }
                }
                for warning in status.warnings { print("Warning: \(warning)") }
            }
        }
    }
}
