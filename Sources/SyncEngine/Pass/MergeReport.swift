/// What happened to one entry of the shared folder in a merge pass.
public struct SourceOutcome: Codable, Hashable, Sendable {
    /// What the pass did with the entry.
    public enum Status: String, Codable, Sendable {
        /// Read and merged (its valid records at least).
        case merged
        /// Unchanged since it was last read: not parsed again.
        case unchanged
        /// Not merged this time; read again when it changes (truncated, invalid, newer format…).
        case skipped
        /// Not merged: its name does not fit the device inside, or it is too large.
        case rejected
        /// Not a file a reader reads (a link, directory, FIFO…).
        case ignored
        /// Not merged: it would turn too many live records into tombstones at once (a safety
        /// valve); `syncctl merge --accept-deletions NAME` lets it through.
        case heldBack = "held back"
    }

    public var name: String
    public var status: Status
    public var device: String?
    public var role: String?
    public var generation: Int64?
    /// Why it was skipped, rejected or ignored, or a problem still standing from an earlier read.
    public var reason: String?
    /// Something worth a person's attention that did not stop the merge (a clock far ahead, a
    /// generation that went backwards, another device using this device's ID).
    public var warning: String?
    /// How many records the file holds.
    public var records: Int?
    /// Each rejected record or conflict entry, with its rule.
    public var rejectedRecords: [String]
    /// Why the whole file was not merged, in one word (`untrusted`, `invalid_json`, `too_large`,
    /// `held_back`…); nil when it merged.
    public var problemKind: String? = nil
}

/// What a merge pass did: per source, per record, and whether this device's file was published.
public struct MergeReport: Codable, Hashable, Sendable {
    public var sources: [SourceOutcome] = []
    /// Entries that are not snapshot names (other extensions, dot-files): never opened.
    public var ignoredNames: [String] = []
    /// Records this device did not have before.
    public var added = 0
    /// Records whose merged state changed (other than being deleted).
    public var changed = 0
    /// Records whose current version became a tombstone.
    public var deleted = 0
    /// Records that gained conflicts needing a person in this pass.
    public var newConflicts = 0
    /// Records in conflict after the pass.
    public var conflicts = 0
    /// The generation of the files published, nil when this device's parts were all up to date.
    public var publishedGeneration: Int64?
    /// The files of this device's snapshot written by this pass (the parts whose content changed).
    public var publishedFiles: [String] = []
    /// This device's own files removed because its parts no longer use them (after a split or a join).
    public var removedFiles: [String] = []
    /// The path of this device's whole-snapshot file (its parts are named after it).
    public var ownFile = ""
    /// How long the pass took, phase by phase.
    public var timings = PassTimings()
    /// Warnings that need a person (another device using this ID, a generation that went backwards…).
    public var warnings: [String] = []
    /// Records not merged because their versions' vectors are too entangled to merge in bounded
    /// time (``RecordMergeError``), each with its reason; what was held for them stays.
    public var refusedRecords: [String] = []
    /// Bytes of the files read (changed since the last pass).
    public var bytesRead: Int64 = 0
    /// Bytes of this device's files written.
    public var bytesWritten: Int64 = 0
    /// Why this device's files were not published, when the merge was saved but they could not
    /// be (``SyncDevice/merge(rereadAll:acceptDeletions:reportingPublishFailure:)``).
    public var publishFailure: String?

    /// Whether any source or record was skipped or rejected (the documented non-zero exit).
    public var hasRejections: Bool {
        // By index: `contains` copies each outcome, a dozen reference counts apiece.
        sources.indices.contains { index in
            let status = sources[index].status
            return status == .skipped || status == .rejected || status == .heldBack
                || !sources[index].rejectedRecords.isEmpty || (status == .unchanged && sources[index].reason != nil)
        } || !refusedRecords.isEmpty
    }

    public init() {}
}

/// How long each phase of a merge pass took, in milliseconds.
public struct PassTimings: Codable, Hashable, Sendable {
    /// Listing the folder, reading and parsing the changed files.
    public var read = 0
    /// The transaction: reading the parts of each group, merging into the store, saving, and
    /// writing this device's changed parts to temporary files.
    public var merge = 0
    /// Putting this device's files in place (renames, fsync), 0 when nothing was published.
    public var publish = 0
    /// Whether this pass filled an empty store in SQLite's rollback-journal mode, each page
    /// written once (``SyncStore/fillingEmptyStore(_:)``), rather than through the WAL.
    public var journaled = false
    /// How many times the pass started: 1, or more when it learned something only while merging
    /// (a file read first that is not valid JSON, a file named like a part holding other parts'
    /// records, deletions held back), rolled back, and started again knowing it. The other
    /// timings are the last start's.
    public var passes = 1

    public init() {}
}
