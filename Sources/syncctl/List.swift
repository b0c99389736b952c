import ArgumentParser
import SnapshotFormat
import SyncCommandLine
import SyncEngine

extension SyncctlCommand {
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List the merged records, one line each.",
            discussion: """
                Shows id, type, when and by whom the current version was made, and a mark for \
                conflicts. Does not read the shared folder: run syncctl merge first for the latest.

                Examples:
                  syncctl list --type ShoppingItem
                  syncctl list --deleted --json | jq length
                """)

        @OptionGroup var global: GlobalOptions
        @OptionGroup var output: OutputOptions
        @Option(help: "Only records of this type (model name).") var type: String?
        @Flag(help: "Include deleted records (tombstones).") var deleted = false

        func run() async throws {
            try await reportingFailures {
                let device = try await global.openDeviceForReading()
                // One record at a time, straight to the output: a million records are not held at once.
                if output.json {
                    return try printRecordArray { try device.forEachRecord(type: type, includeDeleted: deleted, $0) }
                }
                var out = StandardOutput()
                var count = 0
                // The type column as wide as the longest type (at least 16, at most 40 characters:
                // a longer type pushes its own line's columns, not every line's).
                let longest = try type?.count ?? device.longestRecordType()
                let typeWidth = min(max(longest, 16), 40)
                try device.forEachRecord(type: type, includeDeleted: deleted) { record in
                    let version = record.version
                    var line = record.id.rawValue + "  " + padded(version.type, typeWidth)
                    line += " " + (version.lastModified?.written ?? "(no time)".padding(24))
                    line += " " + (version.modifiedBy?.rawValue ?? "?")
                    if version.deleted { line += "  [deleted]" }
                    if !record.unresolvedConflicts.isEmpty {
                        line += "  [\(record.unresolvedConflicts.count) conflict(s)]"
                    }
                    try out.write { $0 += (line + "\n").utf8 }
                    count += 1
                }
                try out.flush()
                if count == 0 { print("No records\(type.map { " of type \($0)" } ?? "").") }
            }
        }
    }

    struct Get: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "get",
            abstract: "Print one record, with its conflicts, as JSON.",
            discussion: """
                Prints the record exactly as this device would publish it: its normal form, plus conflicts if any.

                Example:
                  syncctl get 3F2504E0-4F89-41D3-9A0C-0305E82C3301 > record.json
                """)

        @OptionGroup var global: GlobalOptions
        @Flag(name: .customLong("json"), help: "Accepted for uniformity: get always prints JSON.")
        var json = false
        @Argument(help: "The record's id (a UUID, any case).") var id: RecordID

        func run() async throws {
            try await reportingFailures {
                guard let record = try await global.openDeviceForReading().record(id) else {
                    throw EngineError.noSuchRecord(id.rawValue)
                }
                printCanonical(.object(record.normalForm))
            }
        }
    }

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "export",
            abstract: "Print every live record as one JSON document for scripts.",
            discussion: """
                Prints {"device": ..., "records": [{"id", "type", "schemaVersion", "lastModified", \
                "modifiedBy", "fields"}, ...]} sorted by id; deleted records are left out. Conflicts \
                are not included: see syncctl conflicts --json.
                """)

        @OptionGroup var global: GlobalOptions
        @Option(help: "Only records of this type.") var type: String?
        // Accepted as in every command that prints data: export prints JSON only.
        @Flag(name: .customLong("json"), help: "Accepted for uniformity: export always prints JSON.")
        var json = false

        func run() async throws {
            try await reportingFailures {
                let device = try await global.openDeviceForReading()
                // Written as it is read, one record at a time (a million records are not held at
                // once), in RFC 8785 as the document built whole would print: "device" before
                // "records", each record's members in key order, its fields the interchange bytes
                // the store holds.
                var out = StandardOutput()
                try out.write { bytes in
                    bytes += #"{"device":"#.utf8
                    CanonicalJSON.writeString(device.device.rawValue, into: &bytes)
                    bytes += #","records":["#.utf8
                }
                var isFirst = true
                try device.forEachRecord(type: type) { record in
                    let version = record.version
                    try out.write { bytes in
                        func string(_ text: String?) {
                            if let text { CanonicalJSON.writeString(text, into: &bytes) } else { bytes += "null".utf8 }
                        }
                        bytes += (isFirst ? #"{"fields":"# : #",{"fields":"#).utf8
                        bytes += version.encodedFields.bytes
                        bytes += #","id":"#.utf8
                        string(version.id.rawValue)
                        bytes += #","lastModified":"#.utf8
                        string(version.lastModified?.written)
                        bytes += #","modifiedBy":"#.utf8
                        string(version.modifiedBy?.rawValue)
                        bytes += #","schemaVersion":"#.utf8
                        CanonicalJSON.writeNumber(Double(version.schemaVersion), into: &bytes, largeIntegersWithExponent: true)
                        bytes += #","type":"#.utf8
                        string(version.type)
                        bytes.append(UInt8(ascii: "}"))
                    }
                    isFirst = false
                }
                try out.write { $0 += "]}\n".utf8 }
                try out.flush()
            }
        }
    }
}

extension String {
    func padding(_ width: Int) -> String { padded(self, width) }
}
