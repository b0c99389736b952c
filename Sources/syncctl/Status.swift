import ArgumentParser
import SnapshotFormat
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
        @Flag(
            name: .customLong("all-files"),
            help: ArgumentHelp(
                "List every source file on a line of its own.",
                discussion:
                    "Without it, a device's parts that merged without a problem are summed up in one line (\"laptop.*.json (256 parts)\"); --json always lists every file."
            ))
        var allFiles = false

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
                let lines = allFiles ? status.sources.map(SourceLine.file) : SourceLine.summing(status.sources)
                // Columns as wide as their longest value (a sync tool's copy has a long name).
                let nameWidth = min(lines.map(\.name.count).max() ?? 0, 64)
                let deviceWidth = min(max(status.sources.compactMap(\.device?.count).max() ?? 0, 6), 64)
                for entry in lines {
                    var line = "  " + padded(entry.name, nameWidth) + "  " + padded(entry.device ?? "?", deviceWidth)
                    line += "  " + padded(entry.role ?? "-", 4) + "  " + entry.state
                    print(line)
                    if case .file(let source) = entry {
                        if let problem = source.lastProblem { print("      problem: \(problem)") }
                        if let warning = source.lastWarning { print("      warning: \(warning)") }
                    }
                }
                for warning in status.warnings { print("Warning: \(warning)") }
            }
        }
    }
}

/// A line of `status`'s sources: one file, or the parts of one device that merged without a
/// problem (a device publishing 256 parts would otherwise fill a screen with lines alike).
private enum SourceLine {
    case file(StatusReport.Source)
    /// Two or more parts of one device and role.
    case parts([StatusReport.Source])

    /// The sources as lines: each device's unremarkable parts (present, merged at their last read,
    /// nothing to say) in one line where its first one was, when it has two or more; every other
    /// source (a whole file, a copy, a part with a problem or a warning, one gone) on its own.
    static func summing(_ sources: [StatusReport.Source]) -> [SourceLine] {
        func groupKey(_ source: StatusReport.Source) -> [String]? {
            guard source.present, source.lastProblem == nil, source.lastWarning == nil, source.problemKind == nil,
                source.lastMerged != nil, let device = source.device, let role = source.role,
                source.name.hasPrefix(device + "."), source.name.hasSuffix(SourceFileName.fileExtension)
            else { return nil }
            let middle = source.name.dropFirst(device.count + 1).dropLast(SourceFileName.fileExtension.count)
            guard PartPrefix(String(middle)) != nil else { return nil }
            return [role, device]
        }
        var members: [[String]: [StatusReport.Source]] = [:]
        for source in sources {
            if let key = groupKey(source) { members[key, default: []].append(source) }
        }
        var lines: [SourceLine] = []
        for source in sources {
            guard let key = groupKey(source), let group = members[key], group.count > 1 else {
                lines.append(.file(source))
                continue
            }
            if group[0] == source {
                lines.append(.parts(group))
            }
        }
        return lines
    }

    var name: String {
        switch self {
        case .file(let source): source.name
        case .parts(let sources): "\(first.device ?? "?").*.json (\(sources.count) parts)"
        }
    }

    /// The file, or the first of the parts (they share their device and role).
    private var first: StatusReport.Source {
        switch self {
        case .file(let source): source
        case .parts(let sources): sources[0]
        }
    }

    var device: String? { first.device }
    var role: String? { first.role }

    /// Its generation and when it last merged; for parts, the range of their generations and
    /// the latest merge (timestamps as written sort as they are in time).
    var state: String {
        switch self {
        case .file(let source):
            let merged =
                source.problemKind == "held_back"
                ? "held back" : source.lastMerged.map { "merged \($0)" } ?? "never merged"
            var state = [source.generation.map { "generation \($0)" }, merged].compactMap { $0 }.joined(
                separator: ", ")
            if !source.present { state += " (no longer in the folder)" }
            return state
        case .parts(let sources):
            let generations = sources.compactMap(\.generation)
            let (low, high) = (generations.min(), generations.max())
            let generation =
                low == high ? low.map { "generation \($0)" } : "generations \(low ?? 0)–\(high ?? 0)"
            let merged = sources.compactMap(\.lastMerged).max().map { "last merged \($0)" }
            return [generation, merged].compactMap { $0 }.joined(separator: ", ")
        }
    }
}
