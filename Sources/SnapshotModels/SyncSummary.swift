import SyncEngine

/// What a sync did, in a form an app can show.
public struct SyncSummary: Hashable, Sendable {
    /// Records this device did not have before.
    public var added: Int
    /// Records whose content changed.
    public var changed: Int
    /// Records deleted by another device.
    public var deleted: Int
    /// Records that became conflicted in this sync.
    public var newConflicts: Int
    /// Records in conflict now.
    public var conflicts: Int
    /// The generation of this device's file written, nil when it was up to date.
    public var publishedGeneration: Int64?
    /// Files and records that were not merged, and why (`phone.json: …`).
    public var problems: [String]
    /// Things a person should look at (a clock far ahead, another device using this ID).
    public var warnings: [String]

    init(_ report: MergeReport) {
        added = report.added
        changed = report.changed
        deleted = report.deleted
        newConflicts = report.newConflicts
        conflicts = report.conflicts
        publishedGeneration = report.publishedGeneration
        var problems: [String] = []
        for source in report.sources {
            if let reason = source.reason, source.status != .ignored { problems.append("\(source.name): \(reason)") }
            problems += source.rejectedRecords.map { "\(source.name): \($0)" }
        }
        self.problems = problems
        warnings = report.warnings
    }
}
