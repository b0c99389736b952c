import Dispatch
import SnapshotFormat
import SnapshotMerge
import SyncStore

extension SyncDevice {
    /// Merges every changed file of the shared folder into the store in one transaction, then
    /// publishes the parts of this device's snapshot whose content changed.
    ///
    /// Everything valid merges even when some files or records are rejected: see
    /// ``MergeReport/hasRejections``.
    ///
    /// - Parameters:
    ///   - rereadAll: read every file again even when its stat is unchanged.
    ///   - acceptDeletions: names of files the mass-deletion valve lets through this time.
    public func merge(rereadAll: Bool = false, acceptDeletions: Set<String> = []) throws -> MergeReport {
        try locked {
            try pass(
                rereadAll: rereadAll, acceptDeletions: acceptDeletions,
                edit: Optional<(StoreSession, Timestamp) throws -> Void>.none
            ).report
        }
    }

    /// One merge pass, as the contract reads: list the folder, read what changed, merge it into
    /// the store, apply a local edit if the command makes one (after the merge, in the same
    /// transaction: an edit always builds on everything in the folder), publish what changed.
    func pass<Edit>(
        rereadAll: Bool = false, acceptDeletions: Set<String> = [], readFirst: Set<String> = [],
        edit: ((StoreSession, Timestamp) throws -> Edit)?
    ) throws -> (report: MergeReport, edit: Edit?) {
        do {
            return try passOnce(rereadAll: rereadAll, acceptDeletions: acceptDeletions, readFirst: readFirst, edit: edit)
        } catch let misplaced as MisplacedParts {
            // Rolled back: read those files first this time (see ReadingPlan).
            logger.notice("a file named like a part holds other records: merging again", metadata: ["files": "\(misplaced.names)"])
            return try pass(
                rereadAll: rereadAll, acceptDeletions: acceptDeletions, readFirst: readFirst.union(misplaced.names),
                edit: edit)
        }
    }

    private func passOnce<Edit>(
        rereadAll: Bool, acceptDeletions: Set<String>, readFirst: Set<String>,
        edit: ((StoreSession, Timestamp) throws -> Edit)?
    ) throws -> (report: MergeReport, edit: Edit?) {
        let now = clock()
        var stopwatch = Stopwatch()
        removeStaleTemporaryFiles()
        // List.
        let scan = try scanFolder(rereadAll: rereadAll)
        var findings = scan.findings
        let plan = ReadingPlan(scan.changed, readFirst: readFirst)
        // Read: what spans every group first, then each group as the merge gets to it.
        let storeIsEmpty = try store.reading { try $0.isEmpty() }
        let held = storeIsEmpty ? [] : try heldDigests(for: scan.changed)
        let reader = SourceReader(
            folder: folder, device: device, maxFileSize: settings.maxFileSize, schemas: schemas, now: now,
            clockSkewMargin: settings.safety.clockSkewMargin)
        var spanning = [[ReadOnly.Version]](repeating: [], count: plan.groups.count)
        trace("scanned")
        let spanningReads = reader.read(plan.spanning, skipping: held)
        try store.reading { session in
            for read in spanningReads {
                let versions = review(
                    read, previous: scan.known[read.name], hasWritten: scan.hasWritten, session: session, now: now,
                    acceptDeletions: acceptDeletions, into: &findings)
                for version in versions {
                    spanning[Int(PartPrefix(of: version.id, digits: ReadingPlan.groupDigits).value)].append(version)
                }
            }
        }
        findings.report.timings.read = stopwatch.lap()
        trace("reviewed")
        // A store that holds no record yet (a first merge) has nothing to look up: each group's
        // records are merged from the files alone, on other threads, while this one saves.
        let groups = OrderedWork(count: plan.groups.count, window: 3, producers: 2) { [spanning] index in
            ReadGroup(index, plan: plan, reader: reader, held: held, spanning: spanning[index], mergeAlone: storeIsEmpty)
        }
        defer { groups.finish() }
        // Merge and store, in one transaction.
        func mergeAndStore() throws -> (Publication?, Edit?) { try store.transaction { session -> (Publication?, Edit?) in
            let inserts = storeIsEmpty ? try session.newRecords(at: now) : nil
            try groups.forEach { group in
                guard group.misplaced.isEmpty else { throw MisplacedParts(names: group.misplaced) }
                var incoming = IncomingVersions()
                incoming.add(group.spanning)
                for read in group.reads {
                    incoming.add(
                        review(
                            read, previous: scan.known[read.name], hasWritten: scan.hasWritten, session: session,
                            now: now, acceptDeletions: acceptDeletions, into: &findings))
                }
                if let merged = group.merged, let inserts {
                    // Merged from the same versions (a first merge holds nothing back).
                    for (record, line) in merged {
                        tally(from: nil, to: record, into: &findings.report)
                        try inserts.insert(record, as: line)
                    }
                    return
                }
                try incoming.forEachRecord { id, versions in
                    let held = try session.record(id)
                    guard let merged = RecordMerge.merge(held: held, incoming: versions), merged != held else { return }
                    tally(from: held, to: merged, into: &findings.report)
                    _ = try session.save(merged, at: now, isNew: held == nil)
                }
            }
            trace("groups merged")
            for row in findings.rows where row != findings.previousRows[row.name] { try session.save(row) }
            try session.markAbsent(except: findings.presentNames)
            let edited = try edit?(session, now)
            findings.report.conflicts = try session.recordsInConflict()
            trace("planning")
            defer { trace("planned") }
            return (try planPublication(session, findings: findings, now: now), edited)
        } }
        let (publication, edited): (Publication?, Edit?)
        if storeIsEmpty && !scan.changed.isEmpty {
            // A first merge fills an empty store: each of its pages is written once, not to the WAL
            // and again by the checkpoint (see SyncStore.fillingEmptyStore). Only when there are
            // files to read: the journal's comings and goings wake syncd's watch on the state
            // directory, and a pass that leaves the store empty would be a first merge again.
            let (result, journaled) = try store.fillingEmptyStore(mergeAndStore)
            (publication, edited) = result
            findings.report.timings.journaled = journaled
            if let problem = store.walModeProblem {
                logger.error(
                    "the store could not return to WAL mode after its first merge; other processes cannot read it while this one writes, and the next write tries again",
                    metadata: ["store.problem": "\(problem)"])
            }
        } else {
            (publication, edited) = try mergeAndStore()
        }
        findings.report.timings.merge = stopwatch.lap()
        trace("committed")
        // Publish.
        if let publication {
            try publish(publication, findings: findings)
            if !publication.files.isEmpty { findings.report.publishedGeneration = publication.generation }
            findings.report.publishedFiles = publication.files.map(\.name)
            findings.report.removedFiles = publication.obsolete
            findings.report.timings.publish = stopwatch.lap()
        }
        var report = findings.report
        report.sources.sort { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
        log(report)
        // Freeing what was read (hundreds of thousands of versions after a first merge) takes a
        // tenth of a second: on another thread, so the report is not kept waiting; the daemon
        // then gives the memory back to the system.
        let leftovers = (spanning, spanningReads)
        let returnsMemory = returnsMemoryAfterPasses
        DispatchQueue.global(qos: .utility).async {
            withExtendedLifetime(leftovers) {}
            if returnsMemory { MemoryAllocator.returnFreedMemory() }
        }
        return (report, edited)
    }

    /// The digests of the lines the store holds where the changed files' records may be: what
    /// their files hold line for line is skipped unread.
    private func heldDigests(for changed: [(name: String, status: FileStatus)]) throws -> Set<ElementDigest> {
        guard !changed.isEmpty else { return [] }
        // A part's records are in its prefix; anything else may hold any record.
        let suggested = changed.map { ReadingPlan.suggestedPart($0.name) ?? .whole }
        let ranges = Set(suggested).filter { part in !suggested.contains { $0 != part && part.isWithin($0) } }
        var digests = Set<ElementDigest>()
        try store.reading { session in
            for range in ranges {
                try session.forEachLineDigest(in: range) { raw in
                    digests.insert(
                        ElementDigest(
                            high: raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self),
                            low: raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
                }
            }
        }
        return digests
    }

    private func tally(from held: ReadOnly.Record?, to merged: ReadOnly.Record, into report: inout MergeReport) {
        let wasInConflict = !(held?.unresolvedConflicts.isEmpty ?? true)
        if !merged.unresolvedConflicts.isEmpty && !wasInConflict { report.newConflicts += 1 }
        guard let held else {
            if merged.version.deleted { report.deleted += 1 } else { report.added += 1 }
            return
        }
        if merged.version.deleted && !held.version.deleted {
            report.deleted += 1
        } else {
            report.changed += 1
        }
    }

    private func log(_ report: MergeReport) {
        for warning in report.warnings { logger.warning("\(warning)") }
        logger.info(
            "merge pass done",
            metadata: [
                "merge.added": "\(report.added)", "merge.changed": "\(report.changed)",
                "merge.deleted": "\(report.deleted)", "merge.conflicts": "\(report.conflicts)",
                "publish.generation": "\(report.publishedGeneration.map(String.init) ?? "unchanged")",
                "publish.files": "\(report.publishedFiles.count)", "pass.readMs": "\(report.timings.read)",
                "pass.mergeMs": "\(report.timings.merge)", "pass.publishMs": "\(report.timings.publish)",
                "pass.firstMergeJournaled": "\(report.timings.journaled)",
            ])
    }

    /// Removes this device's own temporary files left by a process that was killed mid-publish.
    private func removeStaleTemporaryFiles() {
        guard let names = try? SystemCalls.directoryEntries(folder.path) else { return }
        for name in names where name.hasPrefix(".\(ownFileName).") && name.hasSuffix(".tmp") {
            try? SystemCalls.remove(folder.path(of: name))
            logger.notice("removed a temporary file left by an interrupted publish", metadata: ["file": "\(name)"])
        }
    }
}

/// One group of a pass, read (and, for a first merge, merged) ahead of the transaction.
private struct ReadGroup: Sendable {
    /// The versions of the files read first that belong to this group.
    var spanning: [ReadOnly.Version]
    /// The group's own files, read.
    var reads: [SourceRead]
    /// Its records merged from the files alone (a first merge), with their lines.
    var merged: [(record: ReadOnly.Record, line: StoredLine)]?
    /// Files named like a part of this group that hold records of other groups.
    var misplaced: [String] = []

    init(
        _ index: Int, plan: ReadingPlan, reader: SourceReader, held: Set<ElementDigest>, spanning: [ReadOnly.Version],
        mergeAlone: Bool
    ) {
        let group = plan.groups[index]
        self.spanning = spanning
        reads = reader.read(group.files, skipping: held)
        for read in reads {
            guard case .read(let facts) = read.outcome, !facts.reading.part.isWithin(group.prefix) else { continue }
            misplaced.append(read.name)
        }
        guard mergeAlone, misplaced.isEmpty else { return }
        var incoming = IncomingVersions()
        incoming.add(spanning)
        for read in reads {
            if case .read(let facts) = read.outcome { incoming.add(facts.reading.versions) }
        }
        var merged: [(record: ReadOnly.Record, line: StoredLine)] = []
        incoming.forEachRecord { _, versions in
            guard let record = RecordMerge.merge(versions) else { return }
            merged.append((record, StoredLine(of: record)))
        }
        self.merged = merged
    }
}

/// Files named like a part that hold records of other groups: the pass starts again, reading them first.
private struct MisplacedParts: Error {
    var names: [String]
}

/// Milliseconds between the phases of a pass.
private struct Stopwatch {
    private let clock = ContinuousClock()
    private var start: ContinuousClock.Instant

    init() { start = clock.now }

    /// Milliseconds since the last lap.
    mutating func lap() -> Int {
        let now = clock.now
        defer { start = now }
        let elapsed = now - start
        return Int(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)
    }
}
