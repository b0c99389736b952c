import ArgumentParser
import SnapshotFormat
import SyncCommandLine
import SyncEngine

extension SyncctlCommand {
    struct Put: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "put",
            abstract: "Create or edit a record from a JSON object of fields, and publish.",
            discussion: """
                Reads the record's fields as a JSON object from FILE, or from standard input when \
                FILE is '-' or left out, and makes a new version exactly as the format says: this \
                device's count in the version vector goes one above the highest it has anywhere \
                in the record, lastModified is now (or 1 ms after the current version, if this \
                clock is behind), unknown keys are carried over. The shared folder is merged first, \
                so the edit builds on everything other devices published. Putting the content the \
                record already holds (and it has no conflict) makes no version, and says so.

                Prints the record's id.

                Examples (ID is a record's id, as syncctl list shows it):
                  echo '{"name": "Bananas", "amount": "6"}' | syncctl put --type ShoppingItem
                  syncctl put --type ShoppingItem --id ID item.json
                """)

        @OptionGroup var global: GlobalOptions
        @OptionGroup var output: OutputOptions
        @Option(help: "The record's type (model name), 1-128 characters.") var type: String
        @Option(help: "The record to edit (a UUID); a new record with a random id when left out.") var id: RecordID?
        @Option(
            name: .customLong("schema-version"), parsing: .unconditional,
            help:
                "The schema version of these fields (default: the record's current one; for a new record, the newest the schema files declare for its type, or 1)."
        )
        var schemaVersion: Int64?
        @Argument(help: "A file holding the fields as a JSON object; '-' or nothing for standard input.") var file:
            String?

        func validate() throws {
            guard (1...128).contains(type.unicodeScalars.count) else {
                throw ValidationError("--type must be 1 to 128 characters")
            }
            try validateSchemaVersion(schemaVersion)
        }

        func run() async throws {
            try await reportingFailures {
                let fields = try readJSONObject(from: file, what: "the fields")
                let report = try await global.openDevice().put(
                    id: id, type: type, fields: fields, schemaVersion: schemaVersion)
                try printEditReport(report, json: output.json)
            }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "delete",
            abstract: "Delete a record (write a tombstone), and publish.",
            discussion:
                "The tombstone keeps the record's id, type and unknown keys, so every device learns of the deletion. Nothing is purged."
        )

        @OptionGroup var global: GlobalOptions
        @OptionGroup var output: OutputOptions
        @Option(
            name: .customLong("schema-version"), parsing: .unconditional,
            help: "The schema version to stamp (default: the record's current one).")
        var schemaVersion: Int64?
        @Argument(help: "The record's id (a UUID).") var id: RecordID

        func validate() throws { try validateSchemaVersion(schemaVersion) }

        func run() async throws {
            try await reportingFailures {
                let report = try await global.openDevice().delete(id: id, schemaVersion: schemaVersion)
                try printEditReport(report, json: output.json)
            }
        }
    }
}

/// Prints what an edit did: the id (alone on stdout, for scripts) or the JSON report.
/// `--schema-version` within what every reader accepts (exit 64 outside it): 1 to 2^53−1.
func validateSchemaVersion(_ schemaVersion: Int64?) throws {
    if let schemaVersion, !(1...VersionVector.maximumCount).contains(schemaVersion) {
        throw ValidationError("--schema-version must be from 1 to 9007199254740991 (2^53-1)")
    }
}

///
/// When the edit is saved but could not be published, it says so and exits 74 after printing:
/// the id is printed all the same, so that a script does not make the edit again.
func printEditReport(_ report: EditReport, json: Bool) throws {
    if json {
        try? printJSON(report)
    } else {
        print(report.id)
        for note in report.notes { printError("note: \(note)") }
        noteFilesNotMerged(report.merge)
    }
    if let failure = report.publishFailure {
        printError(
            "record \(report.id) is saved in this device's store, but this device's files were not published: \(failure). Do not make the edit again")
        throw SyncctlExit.ioError
    }
}

/// After an edit's or tidy's merge, a note when it met files or records it did not merge (the
/// command itself succeeded, so it exits 0).
func noteFilesNotMerged(_ merge: MergeReport) {
    guard merge.hasRejections else { return }
    printError(
        "note: some files or records in the shared folder were not merged (rejected, skipped or held back); syncctl merge says which and why"
    )
}
