import ArgumentParser
import SnapshotFormat
import SyncCommandLine
import SyncEngine

extension SyncctlCommand {
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List the merged records, one line each.",
            discussion:
                "Shows id, type, when and by whom the current version was made, and a mark for conflicts. Does not read the shared folder: run syncctl merge first for the latest."
        )

        @OptionGroup var global: GlobalOptions
        @OptionGroup var output: OutputOptions
        @Option(help: "Only records of this type (model name).") var type: String?
        @Flag(help: "Include deleted records (tombstones).") var deleted = false

        func run() async throws {
            try await reportingFailures {
                let records = try await global.openDevice().records(type: type, includeDeleted: deleted)
                if output.json { return printCanonical(.array(records.map { .object($0.normalForm) })) }
                for record in records {
                    let version = record.version
                    var line = record.id.rawValue + "  " + padded(version.type, 16)
                    line += " " + (version.lastModified?.written ?? "(no time)".padding(24))
                    line += " " + (version.modifiedBy?.rawValue ?? "?")
                    if version.deleted { line += "  [deleted]" }
                    if !record.unresolvedConflicts.isEmpty {
                        line += "  [\(record.unresolvedConflicts.count) conflict(s)]"
                    }
                    print(line)
                }
                if records.isEmpty { print("No records\(type.map { " of type \($0)" } ?? "").") }
            }
        }
    }

    struct Get: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "get",
            abstract: "Print one record, with its conflicts, as JSON.",
            discussion:
                "Prints the record exactly as this device would publish it: its normal form, plus conflicts if any.")

        @OptionGroup var global: GlobalOptions
        @OptionGroup var output: OutputOptions
        @Argument(help: "The record's id (a UUID, any case).") var id: String

        func run() async throws {
            try await reportingFailures {
                let id = try recordID(id)
                guard let record = try await global.openDevice().record(id) else {
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

        func run() async throws {
            try await reportingFailures {
                let device = try await global.openDevice()
                var records: [JSONValue] = []
                for record in try device.records(type: type) {
                    var object = JSONObject()
                    let version = record.version
                    object["id"] = .string(version.id.rawValue)
                    object["type"] = .string(version.type)
                    object["schemaVersion"] = .number(Double(version.schemaVersion))
                    object["lastModified"] = version.lastModified.map { .string($0.written) } ?? .null
                    object["modifiedBy"] = version.modifiedBy.map { .string($0.rawValue) } ?? .null
                    object["fields"] = .object(version.fields)
                    records.append(.object(object))
                }
                var document = JSONObject()
                document["device"] = .string(device.device.rawValue)
                document["records"] = .array(records)
                printCanonical(.object(document))
            }
        }
    }
}

extension String {
    func padding(_ width: Int) -> String { padded(self, width) }
}
