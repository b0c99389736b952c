import Dispatch
import Logging
import Synchronization
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
    ///
    /// - Parameter reportingPublishFailure: when the merge is saved but this device's files
    ///   cannot be published, return the report with ``MergeReport/publishFailure`` set rather
    ///   than throw ``EngineError/publishFailed(path:reason:advice:)`` (`syncctl merge` shows
    ///   what merged, then fails).
    ///
    /// - Parameter whenLocked: called once the state directory's lock is held, before the folder
    ///   is listed: whatever changed before then, this pass sees (`syncd` drops the requests for
    ///   passes it has pending for such changes).
    public func merge(
        rereadAll: Bool = false, acceptDeletions: Set<String> = [], reportingPublishFailure: Bool = false,
        whenLocked: () -> Void = {}
    ) throws -> MergeReport {
        try locked {
            whenLocked()
            var report = try pass(
                rereadAll: rereadAll, acceptDeletions: acceptDeletions, reportingPublishFailure: reportingPublishFailure,
                edit: Optional<(StoreSession, Timestamp) throws -> Void>.none
            ).report
            // A name given to let through that names nothing here (a typo) is said, not ignored.
            let known = Set(report.sources.map(\.name)).union(report.sources.compactMap(\.device))
            for name in acceptDeletions.subtracting(known).sorted() {
                report.warnings.append(
                    "--accept-deletions '\(name)': no file or device of that name in the shared folder, so nothing was let through for it")
            }
            return report
        }
    }

    /// One merge pass, as the contract reads: list the folder, read what changed, merge it into
    /// the store, apply a local edit if the command makes one (after the merge, in the same
    /// transaction: an edit always builds on everything in the folder), publish what changed.
    func pass<Edit>(
        rereadAll: Bool = false, acceptDeletions: Set<String> = [], reportingPublishFailure: Bool = false,
        edit: ((StoreSession, Timestamp) throws -> Edit)?
    ) throws -> (report: MergeReport, edit: Edit?) {
        var retry = PassRetry()
        var passes = 0
        while true {
            passes += 1
            do {
                var done = try passOnce(rereadAll: rereadAll, acceptDeletions: acceptDeletions, retry: retry, edit: edit)
                done.report.timings.passes = passes
                return done
            } catch let unpublished as UnpublishedPass {
                guard reportingPublishFailure, edit == nil else { throw unpublished.failure }
                var report = unpublished.report
                report.timings.passes = passes
                return (report, nil)
            } catch let again as PassRetry {
                // Rolled back: what the pass learned too late to act on is known from the start now.
                logger.notice("merging again", metadata: ["pass.retry": "\(again)"])
                retry.readFirst.formUnion(again.readFirst)
                retry.invalid.formUnion(again.invalid)
                retry.heldBack.merge(again.heldBack) { $1 }
            }
        }
    }

    private func passOnce<Edit>(
        rereadAll: Bool, acceptDeletions: Set<String>, retry: PassRetry, edit: ((StoreSession, Timestamp) throws -> Edit)?
    ) throws -> (report: MergeReport, edit: Edit?) {
        let now = clock()
        var stopwatch = Stopwatch()
        progress.update { $0 = PassProgress.State(phase: .listing) }
        defer { progress.update { $0.phase = .done } }
        // List.
        let scan = try scanFolder(rereadAll: rereadAll)
        var findings = scan.findings
        // Read what can hold any record first; the rest, one group of ids at a time, as the merge gets to it.
        let plan = ReadingPlan(scan.changed, readFirst: retry.readFirst)
        findings.report.bytesRead = scan.changed.reduce(0) { $0 + $1.status.size }
        progress.update { [bytes = findings.report.bytesRead] in
            $0.phase = .reading
            $0.filesToRead = scan.changed.count
            $0.bytesToRead = bytes
            $0.groups = plan.groups.count
        }
        let storeIsEmpty = try store.reading { try $0.isEmpty() }
        // What the changed whole snapshots held when they last merged: those elements are skipped.
        let merged = rereadAll || storeIsEmpty ? [] : try mergedElements(of: scan.changed)
        let reader = SourceReader(
            folder: folder, device: device, readLimits: scan.findings.readLimits, schemas: schemas, now: now, clockSkewMargin: settings.safety.clockSkewMargin,
            trust: try trustList(reading: scan.changed), ownKey: key.publicKey)
        let spanning = SpanningSources(
            opening: plan.spanning, plan: plan, reader: reader, invalid: retry.invalid,
            inMemoryBytes: settings.spanningBytesInMemory, spillDirectory: settings.stateDirectory)
        progress.update {
            $0.filesRead += spanning.files.count
            $0.phase = .merging
        }
        findings.report.timings.read = stopwatch.lap()
        let heldBack = retry.heldBack
        // A first merge writes this device's first parts while it saves the records (the parts'
        // rows are read only then: the 256 of a device at 1,000,000 records took 0.6 ms of every pass).
        let first =
            try storeIsEmpty && edit == nil && !scan.changed.isEmpty && store.reading { try $0.ownParts().isEmpty }
            ? FirstPublication(device: self, generation: try firstGeneration(scan), now: now) : nil
        let groups = OrderedWork(count: plan.groups.count, window: 4, producers: 2) { index in
            GroupRead(
                index, plan: plan, reader: reader, spanning: spanning, mergeAlone: storeIsEmpty,
                mergeLimit: self.settings.recordMergeLimit, heldBack: heldBack,
                held: { prefix in storeIsEmpty ? [] : (try? self.heldDigests(in: prefix)) ?? [] }, merged: merged)
        }
        defer { groups.finish() }
        // Merge and store, in one transaction.
        func mergeAndStore() throws -> (Publication?, Edit?) { try store.transaction { session -> (Publication?, Edit?) in
            let inserts = storeIsEmpty ? try session.newRecords(at: now) : nil
            // A first merge writes every page of the store once, and its commit waits for the disk
            // to take them all: the disk starts on them as they are written instead (after each
            // group's inserts), through SQLite's own descriptor of the file, never one of ours
            // (see SystemCalls.heldDescriptor).
            let writeback = inserts == nil ? nil : SystemCalls.heldDescriptor(of: storePath).map(Writeback.init)
            defer { writeback?.finish() }
            var tallies = spanning.tallies
            var deletions = [Int](repeating: 0, count: spanning.files.count)
            // What each device's files not held back would delete, over the pass: its parts are
            // held back together when they would delete, together, what one file may not.
            var deletionsByDevice = DeletionsByDevice()
            // Records the merge refused: their elements' digests are not kept (see
            // ``MergedElement/record``).
            var refusedIDs = Set<RecordID>()
            // The rows and merged elements found so far, saved as each group is done (its files'
            // and its records' refusals are then known) and once more at the end: saved all after
            // the last group, they kept one core busy while the other had nothing left to do (a
            // first merge of 12,288 small parts: 140 ms of its last 240).
            var rowsSaved = 0
            func saveFound() throws {
                let previousRows = findings.previousRows
                try session.save(findings.rows[rowsSaved...].lazy.filter { $0 != previousRows[$0.name] })
                rowsSaved = findings.rows.count
                for (name, elements) in findings.mergedElements {
                    var bytes: [UInt8] = []
                    bytes.reserveCapacity(elements.count * 16)
                    for element in elements {
                        if !refusedIDs.isEmpty, let record = element.record, refusedIDs.contains(record) { continue }
                        element.digest.appendStored(to: &bytes)
                    }
                    try session.saveMergedElements(bytes, of: name)
                }
                findings.mergedElements.removeAll()
            }
            // Files read first found not valid JSON in some group: the pass starts again without
            // them, once it has read every group, so that it finds them all (starting again at the
            // first took a pass per such file).
            var invalid: Set<String> = []
            try groups.forEach { group in
                if let failure = group.failure { throw failure }
                guard group.misplaced.isEmpty else { throw PassRetry(readFirst: Set(group.misplaced), invalid: invalid) }
                for (index, tally) in group.spanning.enumerated() where tally.isInvalidJSON {
                    invalid.insert(spanning.files[index].name)
                }
                // Read on, merging nothing: the pass is rolled back.
                guard invalid.isEmpty else { return }
                var incoming = IncomingVersions()
                for (index, tally) in group.spanning.enumerated() {
                    let name = spanning.files[index].name
                    tallies[index].add(tally)
                    guard heldBack[name] == nil else { continue }
                    if inserts == nil { deletions[index] += try self.deletions(by: tally.versions, session: session) }
                    incoming.add(tally.versions)
                }
                // By index: iterating copies each file's reading and tally.
                for index in group.sources.indices {
                    let name = group.sources[index].name
                    var held = heldBack[name]
                    let publisher = group.sources[index].header?.device.rawValue
                    if held == nil, inserts == nil, !acceptDeletions.accepts(name, of: publisher) {
                        let count = try self.deletions(by: group.tallies[index].versions, session: session)
                        held = try massDeletionHold(
                            deletions: count, name: name, session: session, liveRecords: &findings.liveRecords)
                        if held == nil { deletionsByDevice.add(count, by: publisher, in: name) }
                    }
                    review(
                        group.sources[index], tally: group.tallies[index], previous: scan.known[name],
                        hasWritten: scan.hasWritten, heldBack: held, session: session,
                        now: now, into: &findings)
                    if held == nil { incoming.add(group.tallies[index].versions) }
                }
                for (id, reason) in group.refused {
                    findings.report.refusedRecords.append(reason)
                    refusedIDs.insert(id)
                }
                progress.update {
                    $0.groupsDone += 1
                    $0.filesRead += group.sources.count
                    $0.versions += group.spanning.reduce(0) { $0 + $1.versions.count } + group.tallies.reduce(0) { $0 + $1.versions.count }
                }
                if let merged = group.merged, let inserts {
                    // Merged from the same versions on another thread (a first merge holds nothing back).
                    for (record, line) in merged {
                        tally(from: nil, to: record, into: &findings.report)
                        try inserts.insert(record, as: line)
                        first?.add(record.id, line: line)
                    }
                    writeback?.request()
                    try saveFound()
                    return
                }
                try incoming.forEachRecord { id, versions in
                    let held = try session.record(id)
                    let merged: ReadOnly.Record?
                    do throws(RecordMergeError) {
                        merged = try RecordMerge.merge(held: held, incoming: versions, limit: settings.recordMergeLimit)
                    } catch {
                        // Nothing dropped: what is held for the record stays, and the reason is reported.
                        findings.report.refusedRecords.append(error.description)
                        refusedIDs.insert(id)
                        return
                    }
                    guard let merged, merged != held else { return }
                    tally(from: held, to: merged, into: &findings.report)
                    _ = try session.save(merged, at: now, isNew: held == nil)
                }
                try saveFound()
            }
            guard invalid.isEmpty else { throw PassRetry(invalid: invalid) }
            try inserts?.flush()
            progress.update { $0.phase = .publishing }
            // The files read first, now that every group gave its records.
            for (index, source) in spanning.files.enumerated() {
                var held = heldBack[source.name]
                let publisher = source.header?.device.rawValue
                if held == nil, !acceptDeletions.accepts(source.name, of: publisher) {
                    held = try massDeletionHold(
                        deletions: deletions[index], name: source.name, session: session,
                        liveRecords: &findings.liveRecords)
                    // Its records are merged already: the pass starts again without them.
                    if let held { throw PassRetry(heldBack: [source.name: held]) }
                    deletionsByDevice.add(deletions[index], by: publisher, in: source.name)
                }
                review(
                    source, tally: tallies[index], previous: scan.known[source.name], hasWritten: scan.hasWritten,
                    heldBack: held, session: session, now: now, into: &findings)
            }
            // Merged already too: the pass starts again without the files of a device whose
            // deletions together are held back.
            for (device, total) in deletionsByDevice.totals where total.files.count > 1 {
                if let held = try massDeletionHold(
                    deletions: total.count, device: device, files: total.files.count, session: session,
                    liveRecords: &findings.liveRecords)
                {
                    throw PassRetry(heldBack: Dictionary(total.files.map { ($0, held) }, uniquingKeysWith: { $1 }))
                }
            }
            try saveFound()
            try session.markAbsent(except: findings.presentNames, known: Array(scan.known.values), device: device.rawValue)
            let edited = try edit?(session, now)
            findings.report.conflicts = try session.recordsInConflictKept()
            return (try planPublication(session, findings: findings, now: now, first: first?.finish()), edited)
        } }
        let (publication, edited): (Publication?, Edit?)
        do {
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
        } catch {
            first?.discard()
            throw error
        }
        findings.report.timings.merge = stopwatch.lap()
        // Said once its transaction committed (a retried transaction keeps them for the retry):
        // what was done before the pass and not said yet, a key rotation finished by `locked`.
        findings.report.warnings += pendingWarnings.withLock { taken in
            defer { taken = [] }
            return taken
        }
        // Publish.
        if let publication {
            for warning in publication.warnings {
                findings.report.warnings.append(warning)
                logger.warning("publication", metadata: ["reason": "\(warning)"])
            }
            do {
                findings.report.warnings += try publish(publication, findings: findings)
            } catch let failure as EngineError {
                // The merge is saved: what it did is reported all the same.
                findings.report.publishFailure = failure.description
                findings.report.timings.publish = stopwatch.lap()
                // Logged as any pass is (what merged, the conflicts to act on); the failure is
                // said by whoever catches it (syncd logs it as an error).
                let report = Self.inNameOrder(findings.report)
                log(report)
                throw UnpublishedPass(report: report, failure: failure)
            }
            if !publication.files.isEmpty { findings.report.publishedGeneration = publication.generation }
            findings.report.publishedFiles = publication.files.map(\.name)
            findings.report.bytesWritten = publication.files.reduce(0) { $0 + max($1.row.bytes, 0) }
            findings.report.removedFiles = publication.obsolete
            findings.report.timings.publish = stopwatch.lap()
        }
        let report = Self.inNameOrder(findings.report)
        log(report)
        // Freeing what was read (hundreds of thousands of versions after a first merge) takes a
        // tenth of a second: on another thread, so the report is not kept waiting; the daemon
        // then gives the memory back to the system.
        let returnsMemory = returnsMemoryAfterPasses
        DispatchQueue.global(qos: .utility).async {
            withExtendedLifetime(spanning) {}
            if returnsMemory { MemoryAllocator.returnFreedMemory() }
        }
        return (report, edited)
    }

    /// The generation of a first publication: above any this device wrote, and above any file
    /// under its name in the folder (a device whose state was lost must not reuse one).
    private func firstGeneration(_ scan: FolderScan) throws -> Int64 {
        var highest = try store.reading {
            max(try $0.highestWrittenGeneration(), try $0.highestGeneration(seenFrom: device.rawValue))
        }
        let name = device.rawValue
        for file in scan.changed where file.name.hasPrefix(name) {
            let rest = file.name.dropFirst(name.count)
            guard rest.hasPrefix(".") || SourceFileName.copySeparators.contains(where: { rest.hasPrefix($0) }),
                let read = try? folder.readSnapshotBytes(file.name, limit: settings.maxFileSize),
                let split = SnapshotReader.split(read.bytes),
                let top = try? SnapshotReader.topLevel(of: split, fileName: file.name), top.device == device
            else { continue }
            highest = max(highest, top.generation)
        }
        var warnings: [String] = []  // (said again when the first publication is planned)
        return nextGeneration(after: highest, warnings: &warnings)
    }

    /// The digests of the elements that `files` held when they last merged, other than the
    /// store's own lines (``SourceTally/mergedElements``): a foreign writer's file, whose
    /// elements are not this device's lines, then costs what changed in it, not what it holds.
    private func mergedElements(of files: [ReadingPlan.File]) throws -> Set<ElementDigest> {
        let names = files.map(\.name)
        guard !names.isEmpty else { return [] }
        var digests = Set<ElementDigest>()
        try store.reading { session in
            for name in names {
                try session.forEachMergedElement(of: name) { digests.insert(ElementDigest(stored: $0)) }
            }
        }
        return digests
    }

    /// The digests of the lines the store holds under `prefix`: a group's records that its files
    /// hold line for line are skipped unread.
    func heldDigests(in prefix: PartPrefix) throws -> Set<ElementDigest> {
        var digests = Set<ElementDigest>()
        try store.reading { session in
            try session.forEachLineDigest(in: prefix) { digests.insert(ElementDigest(stored: $0)) }
        }
        return digests
    }

    private func tally(from held: ReadOnly.Record?, to merged: ReadOnly.Record, into report: inout MergeReport) {
        let wasInConflict = held?.needsAPerson ?? false
        if merged.needsAPerson && !wasInConflict { report.newConflicts += 1 }
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
        for refusal in report.refusedRecords { logger.warning("\(refusal)") }
        // What a person must act on, at the default level (syncd under systemd logs notices).
        if report.newConflicts > 0 {
            logger.notice(
                "records newly in conflict: syncctl conflicts shows them, syncctl resolve settles them",
                metadata: ["merge.newConflicts": "\(report.newConflicts)", "merge.conflicts": "\(report.conflicts)"])
        }
        if logger.logLevel <= .debug {
            for source in report.sources where source.status != .unchanged {
                var metadata: Logger.Metadata = ["file": "\(source.name)", "file.outcome": "\(source.status.rawValue)"]
                if let generation = source.generation { metadata["file.generation"] = "\(generation)" }
                if let records = source.records { metadata["file.records"] = "\(records)" }
                if let reason = source.reason { metadata["file.reason"] = "\(reason)" }
                logger.debug("read", metadata: metadata)
            }
            for name in report.publishedFiles { logger.debug("published", metadata: ["file": "\(name)"]) }
        }
        var metadata: Logger.Metadata = [
            "merge.added": "\(report.added)", "merge.changed": "\(report.changed)",
            "merge.deleted": "\(report.deleted)", "merge.conflicts": "\(report.conflicts)",
            "publish.generation": "\(report.publishedGeneration.map(String.init) ?? "unchanged")",
            "publish.files": "\(report.publishedFiles.count)",
            "pass.filesRead": "\(report.sources.filter { $0.status != .unchanged && $0.status != .ignored && $0.problemKind != Self.notUTF8Kind }.count)",
            "pass.readMs": "\(report.timings.read)",
            "pass.mergeMs": "\(report.timings.merge)", "pass.publishMs": "\(report.timings.publish)",
            "pass.firstMergeJournaled": "\(report.timings.journaled)",
        ]
        if report.publishFailure != nil { metadata["publish.failed"] = "true" }
        logger.info(report.publishFailure == nil ? "merge pass done" : "merge pass saved, not published", metadata: metadata)
    }

    /// Removes this device's own temporary files left by a process that was killed mid-publish.
    func removeStaleTemporaryFiles(among names: [String]) {
        for name in names where isOwnTemporaryName(name) {
            do {
                try SystemCalls.remove(folder.path(of: name))
                logger.notice("removed a temporary file left by an interrupted publish", metadata: ["file": "\(name)"])
            } catch {
                // (A directory squatting the name: this device's publication under that name fails
                // until a person removes it; its error says so.)
                logger.warning(
                    "cannot remove an entry under this device's temporary name: \(error); remove it",
                    metadata: ["file": "\(name)"])
            }
        }
    }
}

extension SyncDevice {
    /// `report` with its sources in their names' order.
    fileprivate static func inNameOrder(_ report: MergeReport) -> MergeReport {
        var report = report
        // By index, then moved once: sorting the outcomes themselves copied each several times
        // (a first merge of 196,608 tiny parts spent a quarter of a second there).
        let sources = report.sources
        report.sources = sources.map(\.name).indicesInUTF8Order().map { sources[$0] }
        return report
    }
}

/// A pass whose merge was saved but whose publication failed: what it did, and why.
struct UnpublishedPass: Error {
    var report: MergeReport
    var failure: EngineError
}

/// What a pass learned too late to act on (its records were merged already): it starts again,
/// rolled back, knowing it from the start.
struct PassRetry: Error, CustomStringConvertible {
    /// Files named like a part that hold records of other groups: read first.
    var readFirst: Set<String> = []
    /// Files read first with a record element that is not valid JSON: not merged.
    var invalid: Set<String> = []
    /// Files read first that the mass-deletion valve holds back, with why.
    var heldBack: [String: String] = [:]

    var description: String {
        "read first: \(readFirst.sorted()), not valid JSON: \(invalid.sorted()), held back: \(heldBack.keys.sorted())"
    }
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
