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
                  --take TAG     the version with this tag in syncctl conflicts (8 hex digits)
                  --take N       version N as numbered by syncctl conflicts (0: the current)
                  --from DEVICE  the version DEVICE made (its greatest, if it made several)
                  --fields FILE  new fields from a JSON object ('-': standard input)

                resolve merges the folder first. It resolves only a record still as you saw it: \
                as --seen says (the record tag syncctl conflicts shows), else as the store held it \
                when resolve started. When the record changed (a version or another device's \
                resolution arrived), it keeps the merge, resolves nothing and exits 65: a version \
                nobody saw would be superseded, and a number could name another version than the \
                one shown. Look again with syncctl conflicts. It also says so, exit 65, when the \
                record has no conflicts left (resolved already, or superseded), and when its tag \
                is not the --seen one (naming its tag now). With syncd running, versions arrive \
                at any time: give --seen, as the hint of syncctl conflicts does. What was kept and \
                what was superseded is noted on standard error.

                Examples (ID is the record's id, as syncctl conflicts shows it):
                  syncctl resolve ID --seen 1a2b3c4d --take 9f8e7d6c
                  syncctl resolve ID --from phone
                  syncctl get ID | jq .fields > fields.json    (then edit fields.json)
                  syncctl resolve ID --fields fields.json

                As in every subcommand, --device is this device's ID (needed only if the store \
                does not know it yet); the new version is made by this device.
                """)

        @OptionGroup var global: GlobalOptions
        @OptionGroup var output: OutputOptions
        @Option(
            help: ArgumentHelp(
                "Keep this version's content: its tag, or its number (0 is the current version, 1... the conflicts), as syncctl conflicts shows them.",
                valueName: "tag-or-N"))
        var take: String?
        @Option(
            name: .customLong("from"),
            help: ArgumentHelp("Keep the content of the version made by DEVICE.", valueName: "device"))
        var fromDevice: String?
        @Option(help: "New content: a JSON object of fields ('-' for standard input).") var fields: String?
        @Option(
            name: .customLong("schema-version"), parsing: .unconditional,
            help: "With --fields: the schema version of the new fields (default: the current version's).")
        var schemaVersion: Int64?
        @Option(
            help: ArgumentHelp(
                "The record's tag as syncctl conflicts showed it: resolve only if the record is still so (default: as the store held it when resolve started).",
                valueName: "record-tag"))
        var seen: String?
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
            try validateSchemaVersion(schemaVersion)
            if schemaVersion != nil && fields == nil {
                throw ValidationError("--schema-version goes with --fields: a version kept whole keeps its own")
            }
        }

        func run() async throws {
            try await reportingFailures {
                let device = try await global.openDevice()
                let resolution: Resolution
                // What the person chose from: as --seen says, else the record before this
                // command's merge (a version that merge brings would be superseded unseen, and
                // would move the numbers).
                let expecting: EditExpectation =
                    try seen.map { .tagged($0) } ?? device.record(id).map { .tagged($0.tag) } ?? .absent
                // A tag has 8 hex digits, some of them all decimal: 8 characters are a tag.
                if let take, take.count != 8, let index = Int(take) {
                    resolution = .take(index: index)
                } else if let take {
                    resolution = .takeTagged(take)
                } else if let fromDevice {
                    guard let maker = DeviceID(fromDevice) else {
                        throw UsageProblem(
                            message: "no version of \(id) was made by \(fromDevice); see syncctl conflicts")
                    }
                    resolution = .takeFrom(maker)
                } else {
                    let object = try readJSONObject(from: fields, what: "the fields")
                    let current = try device.record(id)?.version.schemaVersion ?? 1
                    resolution = .content(fields: object, schemaVersion: schemaVersion ?? current)
                }
                do {
                    try printEditReport(
                        try device.resolve(id: id, with: resolution, expecting: expecting), json: output.json)
                } catch EngineError.changedSinceSeen(let changed) where seen != nil {
                    // The tag given is not the record's: say which it is now (a typo is as likely as an arrival).
                    guard let now = try device.record(id) else { throw EngineError.changedSinceSeen(id: changed) }
                    throw EngineError.notAsSeen(id: changed, seen: seen!.lowercased(), now: now.tag)
                }
            }
        }
    }

    struct Tidy: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "tidy",
            abstract: "Remove sync-tool copies whose versions are all in this device's files.",
            discussion: """
                Merges first, then deletes each copy (such as 'phone.sync-conflict-*.json' or \
                'phone (1).json', or of a part: 'phone.3F.sync-conflict-*.json') that adds nothing to \
                this device's published files, and says what it removed and what it kept. Never \
                touches any device's own files (<device>.json or its parts). With --dry-run it \
                removes nothing and says what it would remove (the merge runs all the same).

                Example:
                  syncctl tidy --dry-run && syncctl tidy
                """)

        @OptionGroup var global: GlobalOptions
        @OptionGroup var output: OutputOptions
        @Flag(name: .customLong("dry-run"), help: "Remove nothing: say which copies would be removed.")
        var dryRun = false

        func run() async throws {
            try await reportingFailures {
                let report = try await global.openDevice().tidy(dryRun: dryRun)
                if output.json { return try printJSON(report) }
                for name in report.removed { print((report.dryRun ? "would remove  " : "removed  ") + name) }
                for kept in report.kept { print("kept     \(kept.name): \(kept.reason)") }
                if report.removed.isEmpty && report.kept.isEmpty { print("No sync-tool copies in the folder.") }
                noteFilesNotMerged(report.merge)
            }
        }
    }
}
