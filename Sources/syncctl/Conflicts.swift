import ArgumentParser
import SnapshotFormat
import SyncCommandLine
import SyncEngine

extension SyncctlCommand {
    struct Conflicts: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "conflicts",
            abstract: "Show each record in conflict, its versions side by side.",
            discussion: """
                A record is in conflict when devices changed it without seeing each other's change. \
                Every reader sees the current version (0); the others (1, 2, ...) are kept until \
                someone resolves them with syncctl resolve. Conflicts whose content equals the \
                current version (two devices made the same change) need no work and are not shown.
                """)

        @OptionGroup var global: GlobalOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            try await reportingFailures {
                let device = try await global.openDeviceForReading()
                // One record at a time, as it is read (see syncctl list).
                if output.json {
                    return try printRecordArray { try device.forEachRecord(includeDeleted: true, onlyUnresolved: true, $0) }
                }
                var count = 0
                try device.forEachRecord(includeDeleted: true, onlyUnresolved: true) { record in
                    printConflict(record)
                    count += 1
                }
                if count == 0 { print("No conflicts.") }
            }
        }
    }
}

private func printConflict(_ record: ReadOnly.Record) {
    print("\(record.id)  \(record.version.type)")
    let versions = [record.version] + record.conflicts
    for (index, version) in versions.enumerated() where index == 0 || !version.hasSameContent(as: record.version) {
        var line = "  [\(index)] " + padded(version.modifiedBy?.rawValue ?? "?", 14)
        line += " " + (version.lastModified?.written ?? "(no time)")
        line += index == 0 ? "  current" : ""
        print(line)
        if version.deleted {
            print("      deleted")
        } else {
            for (key, value) in version.fields where index == 0 || record.version.fields[key] != value {
                print("      \(key): \(value.interchangeString)")
            }
            if index > 0 {
                for key in record.version.fields.keys where version.fields[key] == nil {
                    print("      \(key): (absent)")
                }
            }
        }
    }
    print("  resolve with: syncctl resolve \(record.id) --take N")
    print("")
}
