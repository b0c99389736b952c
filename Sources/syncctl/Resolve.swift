import ArgumentParser
import SnapshotFormat
import SnapshotMerge
import SyncCommandLine
import SyncEngine

extension SyncctlCommand {
    struct Resolve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "resolve",
            abstract: "Resolve a record's conflicts, and publish.",
            discussion: """
                Writes one version that supersedes the current version and every conflict, so \
                every device drops the conflicts when it merges it. Choose its content with exactly \
                one of:
                  --take N       version N as numbered by syncctl conflicts (0: the current)
                  --from DEVICE  the version DEVICE made (its greatest, if it made several)
                  --fields FILE  new fields from a JSON object ('-': standard input)

                As in every subcommand, --device is this device's ID (needed only if the store \
                does not know it yet); the new version is made by this device.
                """)

        @OptionGroup var global: GlobalOptions
        @OptionGroup var output: OutputOptions
        @Option(help: "Keep version N's content (0 is the current version, 1... the conflicts).") var take: Int?
        @Option(
            name: .customLong("from"),
            help: ArgumentHelp("Keep the content of the version made by DEVICE.", valueName: "device"))
        var fromDevice: String?
        @Option(help: "New content: a JSON object of fields ('-' for standard input).") var fields: String?
        @Option(
            name: .customLong("schema-version"),
            help: "With --fields: the schema version of the new fields (default: the current version's).")
        var schemaVersion: Int64?
        @Argument(help: "The record's id (a UUID).") var id: RecordID

        func validate() throws {
            let choices = [take != nil, fromDevice != nil, fields != nil].filter { $0 }.count
            if choices == 0, global.device != nil {
                // --device named the version's device here before it meant this device everywhere.
                throw ValidationError(
                    "choose exactly one of --take, --from and --fields (--device is this device's ID; "
                        + "name the device whose version to keep with --from DEVICE)")
            }
            guard choices == 1 else { throw ValidationError("choose exactly one of --take, --from and --fields") }
        }

        func run() async throws {
            try await reportingFailures {
                let device = try await global.openDevice()
                let resolution: Resolution
                if let take {
                    resolution = .take(index: take)
                } else if let fromDevice {
                    guard let record = try device.record(id) else { throw EngineError.noSuchRecord(id.rawValue) }
                    let versions = [record.version] + record.conflicts
                    guard let index = versions.firstIndex(where: { $0.modifiedBy?.rawValue == fromDevice }) else {
                        throw UsageProblem(
                            message: "no version of \(id) was made by \(fromDevice); see syncctl conflicts")
                    }
                    resolution = .take(index: index)
                } else {
                    let object = try readJSONObject(from: fields, what: "the fields")
                    let current = try device.record(id)?.version.schemaVersion ?? 1
                    resolution = .content(fields: object, schemaVersion: schemaVersion ?? current)
                }
                printEditReport(try device.resolve(id: id, with: resolution), json: output.json)
            }
        }
    }

    struct Tidy: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "tidy",
            abstract: "Remove sync-tool copies whose versions are all in this device's file.",
            discussion: """
                Merges first, then deletes each copy (such as 'phone.sync-conflict-*.json' or \
                'phone (1).json') that adds nothing to this device's published file, and says what \
                it removed and what it kept. Never touches any device's own <device>.json.
                """)

        @OptionGroup var global: GlobalOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            try await reportingFailures {
                let report = try await global.openDevice().tidy()
                if output.json { return try printJSON(report) }
                for name in report.removed { print("removed  \(name)") }
                for kept in report.kept { print("kept     \(kept.name): \(kept.reason)") }
                if report.removed.isEmpty && report.kept.isEmpty { print("No sync-tool copies in the folder.") }
                noteFilesNotMerged(report.merge)
            }
        }
    }
}
