import ArgumentParser
import SyncCommandLine
import SyncEngine

extension SyncctlCommand {
    struct Merge: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "merge",
            abstract: "Merge every device's snapshot in the shared folder, then publish this device's files.",
            discussion: """
                Reads every *.json in the shared folder (this device's own files, its peers', and \
                copies that sync tools make, such as 'laptop.sync-conflict-*.json'), merges them \
                record by record into the store in one transaction, and rewrites, atomically and \
                signed, only those of this device's files whose content changed: <device>.json, or \
                once it is large, its parts <device>.<prefix>.json (docs/parts.md).

                A file that would turn more than half of the live records (and at least 50) into \
                tombstones at once is held back, as a safety valve, until you let it through with \
                --accept-deletions FILE (settings massDeletionShare and massDeletionMinimum); so are \
                a device's parts that would do so together, until --accept-deletions DEVICE. \
                Versions dated more than clockSkewMarginSeconds (default 300) in this device's \
                future are merged but reported, naming the device whose clock is wrong.

                A file that is truncated, not valid JSON, from a newer format, misnamed, too large \
                or unreadable is reported and left alone; invalid records are reported one by one \
                and the rest of their file still merges. Nothing already merged is ever lost.

                Exit status: 0 when everything merged; 3 when everything valid merged but some file \
                or record was skipped or rejected; see docs/syncctl.md for the others.

                Examples:
                  syncctl merge --shared ~/Sync/lists --device laptop    (the first time)
                  syncctl merge --json | jq '.sources[] | select(.reason)'
                  syncctl merge --accept-deletions phone                 (a held-back deletion)
                """)

        @OptionGroup var global: GlobalOptions
        @OptionGroup var output: OutputOptions

        @Option(
            name: .customLong("accept-deletions"),
            help: ArgumentHelp(
                "Let this file, or every file of this device, through the mass-deletion safety valve this time (repeatable).",
                valueName: "file-or-device"))
        var acceptDeletions: [String] = []

        @Flag(name: .customLong("reread"), help: "Parse every file again, even those unchanged since the last merge.")
        var reread = false

        func run() async throws {
            var hasRejections = false
            try await reportingFailures {
                let device = try await global.openDevice()
                let report = try device.merge(
                    rereadAll: reread, acceptDeletions: Set(acceptDeletions), reportingPublishFailure: true)
                hasRejections = report.hasRejections
                if output.json {
                    Swift.print(MergeReportJSON.text(of: report))
                } else {
                    printMergeSummary(report, device: device)
                }
                // What merged is saved and shown; the failure to publish it ends the command (74).
                if let failure = report.publishFailure {
                    printError(failure)
                    throw SyncctlExit.ioError
                }
            }
            if hasRejections { throw SyncctlExit.mergedWithRejections }
        }
    }
}

/// The human-readable summary of a merge pass.
func printMergeSummary(_ report: MergeReport, device: SyncDevice) {
    // Counted and condensed in one loop over the outcomes, without copying them: a first merge of
    // 196,608 tiny parts has as many (grouping copies of them took a tenth of a second).
    var counts: [SourceOutcome.Status: Int] = [:]
    /// Per device, the files merged without a word to say.
    struct PlainMerges {
        var files = 0
        var records = 0
        var generations: ClosedRange<Int64>?

        mutating func add(records: Int?, generation: Int64?) {
            files += 1
            self.records += records ?? 0
            if let generation {
                generations =
                    min(
                        generations?.lowerBound ?? generation, generation)...max(
                        generations?.upperBound ?? generation, generation)
            }
        }
    }
    var plainMerges: [String: PlainMerges] = [:]
    // Unchanged files are only counted: a folder of parts holds hundreds of them. So are files
    // merged without a word to say, when there are many (a first merge of a folder of parts):
    // one line per device then; every file with something to say keeps its own line.
    // By index: `for source in` copies each outcome, a dozen reference counts apiece.
    func isPlainMerge(_ index: Int) -> Bool {
        report.sources[index].status == .merged && report.sources[index].reason == nil
            && report.sources[index].rejectedRecords.isEmpty
    }
    for index in report.sources.indices {
        counts[report.sources[index].status, default: 0] += 1
        guard isPlainMerge(index) else { continue }
        plainMerges[report.sources[index].device ?? "", default: PlainMerges()].add(
            records: report.sources[index].records, generation: report.sources[index].generation)
    }
    func count(_ status: SourceOutcome.Status) -> Int { counts[status] ?? 0 }
    // Unchanged files whose problem stands (not merged before, not read again): they make the exit 3 too.
    let standing = report.sources.indices.count {
        report.sources[$0].status == .unchanged && report.sources[$0].reason != nil
    }
    print("Merged \(device.folder.path) as device \(device.device)")
    print(
        "Sources: \(count(.merged)) read, \(count(.unchanged)) unchanged"
            + (standing > 0 ? " (\(standing) with a problem that stands)" : "")
            + ", \(count(.skipped)) skipped, \(count(.rejected)) rejected, "
            + (count(.heldBack) > 0 ? "\(count(.heldBack)) held back, " : "")
            + "\(count(.ignored) + report.ignoredNames.count) ignored")
    let condensed = plainMerges.values.reduce(0) { $0 + $1.files } > 20
    if condensed {
        for (device, files) in plainMerges.sorted(by: { $0.key < $1.key }) {
            var line = "  " + padded("merged", 10) + padded("\(files.files) files", 32) + " " + device
            if let generations = files.generations {
                line +=
                    generations.lowerBound == generations.upperBound
                    ? ", generation \(generations.lowerBound)"
                    : ", generations \(generations.lowerBound)–\(generations.upperBound)"
            }
            print(line + ", " + TextLine.counted(files.records, "record"))
        }
    }
    for index in report.sources.indices {
        guard report.sources[index].status != .unchanged || report.sources[index].reason != nil,
            !(condensed && isPlainMerge(index))
        else { continue }
        let source = report.sources[index]
        var line = "  " + padded(source.status.rawValue, 10) + padded(source.name, 32)
        if let device = source.device, !device.isEmpty { line += " " + device }
        if let role = source.role, role == "copy" { line += " (copy)" }
        if let generation = source.generation { line += ", generation \(generation)" }
        if let records = source.records { line += ", " + TextLine.counted(records, "record") }
        if let reason = source.reason {
            // ("rejected  x.json: the file is named…", not "…: rejected: the file is named…")
            let prefix = source.status.rawValue + ": "
            line += ": " + (reason.hasPrefix(prefix) ? String(reason.dropFirst(prefix.count)) : reason)
        }
        print(line)
        for rejected in source.rejectedRecords.prefix(20) {
            print("      rejected \(rejected)")
        }
        if source.rejectedRecords.count > 20 {
            print("      … and \(source.rejectedRecords.count - 20) more (see --json)")
        }
    }
    if !report.ignoredNames.isEmpty {
        let shown = report.ignoredNames.prefix(5).joined(separator: ", ")
        print("  ignored   \(shown)\(report.ignoredNames.count > 5 ? ", …" : "") (not snapshot names)")
    }
    var records = "Records: \(report.added) added, \(report.changed) changed, \(report.deleted) deleted"
    records += "; \(report.conflicts) in conflict"
    if report.newConflicts > 0 { records += " (\(report.newConflicts) new)" }
    print(records + (report.conflicts > 0 ? ": see syncctl conflicts" : ""))
    if report.publishFailure != nil {
        print("This device's snapshot is not published: see below")
    } else if let generation = report.publishedGeneration {
        let files = report.publishedFiles
        let shown =
            files.count == 1
            ? files[0]
            : "\(files.count) parts (\(files.prefix(3).joined(separator: ", "))\(files.count > 3 ? ", …" : ""))"
        print("Published \(shown) of this device's snapshot (generation \(generation))")
    } else {
        print("This device's snapshot is up to date: not rewritten")
    }
    if !report.removedFiles.isEmpty {
        print("Removed \(report.removedFiles.joined(separator: ", ")): this device's parts no longer use them")
    }
    let timings = report.timings
    print(
        "Took \(timings.read + timings.merge + timings.publish) ms: read \(timings.read), merge \(timings.merge), publish \(timings.publish)"
    )
    for refusal in report.refusedRecords.prefix(20) {
        print("Refused: \(refusal)")
    }
    if report.refusedRecords.count > 20 {
        print("… and \(report.refusedRecords.count - 20) more records refused (see --json)")
    }
    for warning in report.warnings {
        print("Warning: \(warning)")
    }
}
