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

                Example:
                  syncctl conflicts        then, as its hint says:
                  syncctl resolve ID --seen RECORD-TAG --take VERSION-TAG
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
    print("\(record.id)  \(record.version.type)  record tag \(record.tag)")
    let versions = [record.version] + record.conflicts
    let current = record.version
    // Shown only where versions differ in them: otherwise two versions could look the same.
    let schemaVersionsDiffer = versions.contains { $0.schemaVersion != current.schemaVersion }
    for (index, version) in versions.enumerated() where index == 0 || !version.hasSameContent(as: current) {
        var line = "  [\(index)] " + padded(version.modifiedBy?.rawValue ?? "?", 14)
        line += " " + (version.lastModified?.written ?? "(no time)")
        line += "  tag \(version.tag)"
        line += index == 0 ? "  current" : ""
        print(line)
        if schemaVersionsDiffer { print("      (schemaVersion \(version.schemaVersion))") }
        if index > 0, !version.type.utf8.elementsEqual(current.type.utf8) {
            print("      (type \(JSONValue.string(version.type).interchangeString))")
        }
        if version.deleted {
            print("      deleted")
        } else {
            for (key, value) in version.fields where index == 0 || current.fields[key] != value {
                print("      \(key): \(value.interchangeString)")
            }
            if index > 0 {
                for key in current.fields.keys where version.fields[key] == nil {
                    print("      \(key): (absent)")
                }
            }
        }
        if index > 0, version.unknownKeys != current.unknownKeys {
            print("      (other record keys differ: syncctl get \(record.id) shows them)")
        }
    }
    print("  resolve with: syncctl resolve \(record.id) --seen \(record.tag) --take TAG")
    print("")
}
