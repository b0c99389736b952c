import Dispatch
import SnapshotFormat
import SnapshotMerge
import SyncStore

extension SyncDevice {
    /// Merges every changed source in the shared folder into the store in one transaction, then
    /// publishes this device's file if, and only if, its content changed.
    ///
    /// Everything valid merges even when some sources or records are rejected: see
    /// ``MergeReport/hasRejections``.
    ///
    /// - Parameters:
    ///   - rereadAll: parse every file again even when its stat is unchanged.
    ///   - checkPublication: compare this device's file with the store even when nothing changed.
    ///   - acceptDeletions: names of files the mass-deletion valve lets through this time.
    public func merge(
        rereadAll: Bool = false, checkPublication: Bool = true, acceptDeletions: Set<String> = []
    ) throws -> MergeReport {
        try locked {
            try pass(
                rereadAll: rereadAll, checkPublication: checkPublication, acceptDeletions: acceptDeletions,
                edit: Optional<(StoreSession, Timestamp) throws -> Void>.none
            ).report
        }
    }

    /// One merge pass, optionally with a local edit applied in the same transaction after the
    /// merge (so an edit always builds on everything in the folder: the contract's start-up rule).
    ///
    /// With `checkPublication` false, this device's file is compared with the store only when the
    /// pass changed a record or the file is not the one last published (the daemon's cheap pass).
    ///
    /// With `streaming` (and no edit), a first merge of large files merges them through windows
    /// (``StreamedFirstMerge``); when that declines, the pass starts again without.
    func pass<Edit>(
        rereadAll: Bool = false, checkPublication: Bool = true, acceptDeletions: Set<String> = [],
        streaming: Bool = true, edit: ((StoreSession, Timestamp) throws -> Edit)?
    ) throws -> (report: MergeReport, edit: Edit?) {
        let now = clock()
        let stopwatch = ContinuousClock()
        var started = stopwatch.now
        removeStaleTemporaryFiles()
        let storeIsEmpty = try store.reading { try $0.isEmpty() }
        let scan = try scanSources(rereadAll: rereadAll)
        let streamed = streaming && edit == nil && storeIsEmpty ? streamedFirstMerge(scan, now: now) : nil
        var collection =
            streamed.map { collectStreamed(scan, $0, facts: nil, now: now, acceptDeletions: acceptDeletions) }
            ?? collectSources(scan, now: now, acceptDeletions: acceptDeletions)
        collection.report.timings.read = Self.milliseconds(since: &started, stopwatch)
        // A store that holds no record yet (a cold merge) has nothing to look up: every record is
        // merged from the files alone. That pure work (merging, serializing, hashing) starts now
        // on every core, and the transaction inserts each chunk of records as soon as it is ready.
        var mergedAlone = streamed?.merging() ?? (storeIsEmpty ? MergedAlone(collection.incoming) : nil)
        // A cold merge writes the whole store in one transaction: the disk starts on its pages
        // while the records are inserted and the commit copies them, instead of after.
        let writeBehind = mergedAlone.map { _ in WriteBehind(opening: [storePath + "-wal"], sharing: storePath) }
        // The file a cold merge publishes is written by another thread from the same chunks,
        // while the transaction inserts them; the publication waits for it only to rename it.
        var coldFile: ColdFile?
        defer { coldFile?.discardUnlessTaken() }
        let result: (Publication?, Edit?)
        var journaled = false
        do {
            func mergeInOneTransaction() throws -> (Publication?, Edit?) { try store.transaction { session -> (Publication?, Edit?) in
                var changedRecords = 0
                let storeWasEmpty = try session.isEmpty()
                for row in collection.rows where row != collection.previousRows[row.name] { try session.save(row) }
                for (name, digests) in collection.recordDigests { try session.saveRecordDigests(digests, of: name) }
                try session.markAbsent(except: collection.presentNames)
                var report = collection.report
                // The content digest of the records inserted, in id order, for the cold file.
                var coldContent = ContentDigest()
                if storeWasEmpty, let mergedAlone {
                    // The generation depends only on the source rows, saved above.
                    if edit == nil, mergedAlone.chunkCount > 0 {
                        coldFile = try startColdFile(mergedAlone, generation: nextGeneration(session), now: now)
                    }
                    let inserts = try session.newRecords(at: now)
                    try mergedAlone.forEach { record, line in
                        tally(from: nil, to: record, into: &report)
                        try inserts.insert(record, as: line)
                        line.digest.withUnsafeBytes { coldContent.add($0) }
                        changedRecords += 1
                    }
                    if let failure = mergedAlone.failure { throw failure }
                    if let streamed {
                        // The rows again, now with what the records gave (warnings, digests).
                        let complete = collectStreamed(
                            scan, streamed, facts: try streamed.finished(), now: now, acceptDeletions: acceptDeletions)
                        for (row, saved) in zip(complete.rows, collection.rows) where row != saved { try session.save(row) }
                        for (name, digests) in complete.recordDigests { try session.saveRecordDigests(digests, of: name) }
                        report.sources = complete.report.sources
                        report.warnings = complete.report.warnings
                        collection.rows = complete.rows
                    }
                } else if streamed != nil {
                    throw StreamedFirstMerge.Declined(description: "the store is no longer empty")
                } else {
                    // In id order: the store's B-tree grows at its end instead of splitting pages at random.
                    try collection.incoming.forEachRecord { id, versions in
                        let held = storeWasEmpty ? nil : try session.record(id)
                        guard let merged = RecordMerge.merge(held: held, incoming: versions), merged != held else {
                            return
                        }
                        tally(from: held, to: merged, into: &report)
                        _ = try session.save(merged, at: now, isNew: held == nil)
                        changedRecords += 1
                    }
                }
                collection.report = report
                let edited = try edit?(session, now)
                collection.report.conflicts = try session.recordsInConflict()
                let ownFileRow = collection.rows.first { $0.name == ownFileName }
                let latest = try session.latestCompletedPublication()
                let ownFileRead = collection.ownFileRead
                // A file that no longer reads cleanly (truncated, damaged) is not current, whatever its name says.
                let ownFileIsCurrent =
                    ownFileRow.map { $0.present && $0.lastProblem == nil && $0.generation == latest?.generation }
                    ?? false
                guard checkPublication || changedRecords > 0 || edited != nil || !ownFileIsCurrent else {
                    return (nil, edited)
                }
                return (
                    try planPublication(
                        session, now: now, ownFileIsCurrent: ownFileIsCurrent, ownFileRead: ownFileRead,
                        expectingChange: changedRecords > 0 || edited != nil,
                        coldFile: coldFile.map { ($0, coldContent.finalize()) }),
                    edited
                )
            } }
            // A cold merge fills an empty store: each of its pages is written once, not to the WAL
            // and again by the checkpoint (see SyncStore.fillingEmptyStore). Only when it has
            // records to insert: the journal's comings and goings wake syncd's watch on the state
            // directory, and a pass that left the store empty would then be a first merge again,
            // on and on.
            if (mergedAlone?.chunkCount ?? 0) > 0 {
                (result, journaled) = try store.fillingEmptyStore(mergeInOneTransaction)
                if let problem = store.walModeProblem {
                    logger.error(
                        "the store could not return to WAL mode after its first merge; other processes cannot read it while this one writes, and the next write tries again",
                        metadata: ["store.problem": "\(problem)"])
                }
            } else {
                result = try mergeInOneTransaction()
            }
        } catch {
            mergedAlone?.cancel()
            writeBehind?.stop()
            mergedAlone?.waitUntilDone()
            coldFile?.discardUnlessTaken()
            // A file written for a publication whose intent did not commit is not published.
            try? SystemCalls.remove(temporaryPublicationPath)
            if let declined = error as? StreamedFirstMerge.Declined {
                logReadingWhole(because: declined.description)
                return try pass(
                    rereadAll: rereadAll, checkPublication: checkPublication, acceptDeletions: acceptDeletions,
                    streaming: false, edit: edit)
            }
            throw error
        }
        mergedAlone?.waitUntilDone()
        writeBehind?.stop()
        collection.report.timings.merge = Self.milliseconds(since: &started, stopwatch)
        collection.report.timings.streamed = streamed != nil
        collection.report.timings.journaled = journaled
        if let publication = result.0 {
            let ownWarning = collection.report.sources.first { $0.name == ownFileName && $0.status == .merged }?.warning
            try publish(publication, keepingWarning: ownWarning)
            collection.report.publishedGeneration = publication.generation
            collection.report.timings.publish = Self.milliseconds(since: &started, stopwatch)
        }
        for warning in collection.report.warnings {
            logger.warning("\(warning)")
        }
        logger.info(
            "merge pass done",
            metadata: [
                "merge.added": "\(collection.report.added)", "merge.changed": "\(collection.report.changed)",
                "merge.deleted": "\(collection.report.deleted)", "merge.conflicts": "\(collection.report.conflicts)",
                "publish.generation": "\(collection.report.publishedGeneration.map(String.init) ?? "unchanged")",
                "pass.readMs": "\(collection.report.timings.read)",
                "pass.mergeMs": "\(collection.report.timings.merge)",
                "pass.publishMs": "\(collection.report.timings.publish)",
                "pass.firstMergeJournaled": "\(journaled)",
            ])
        // Freeing every version read and record merged (hundreds of thousands after a cold
        // merge) takes a tenth of a second: do it on another thread, so the report is not kept
        // waiting.
        // This thread lets go of them first, so the other one frees them, then trims.
        let leftovers = (collection.incoming, mergedAlone)
        collection.incoming = IncomingVersions()
        mergedAlone = nil
        let returnsMemory = returnsMemoryAfterPasses
        DispatchQueue.global(qos: .utility).async {
            withExtendedLifetime(leftovers) {}
            if returnsMemory { MemoryAllocator.returnFreedMemory() }
        }
        return (collection.report, result.1)
    }

    /// The streamed first merge of `scan`'s files, when it applies: enough bytes to read that
    /// holding them whole would cost much memory, none of the files merged before (no digests
    /// kept), and every file one it can stream. Nil otherwise (the reason is logged).
    private func streamedFirstMerge(_ scan: FolderScan, now: Timestamp) -> StreamedFirstMerge? {
        let size = scan.pending.reduce(Int64(0)) { $0 + $1.status.size }
        guard !scan.pending.isEmpty, size >= settings.streamedFirstMergeThreshold else { return nil }
        // Merging by id looks at every file's head for every record: with more files than
        // this, reading them whole is the better way (and they are small on average).
        guard scan.pending.count <= StreamedFirstMerge.filesAtMost else {
            logReadingWhole(because: "\(scan.pending.count) files to read, more than \(StreamedFirstMerge.filesAtMost)")
            return nil
        }
        let anyDigests = try? store.reading { session in
            try scan.pending.contains { try !(session.recordDigests(of: $0.name) ?? []).isEmpty }
        }
        guard anyDigests == false else { return nil }
        switch StreamedFirstMerge.indexing(
            scan.pending, folder: folder, device: device, maxFileSize: settings.maxFileSize, schemas: schemas,
            now: now, clockSkewMargin: settings.safety.clockSkewMargin)
        {
        case .success(let streamed):
            return streamed
        case .failure(let declined):
            logReadingWhole(because: declined.description)
            return nil
        }
    }

    /// Says why a large first merge reads its files whole after all.
    private func logReadingWhole(because reason: String) {
        logger.notice("first merge: reading the files whole instead of through windows", metadata: ["reason": "\(reason)"])
    }

    private static func milliseconds(since start: inout ContinuousClock.Instant, _ clock: ContinuousClock) -> Int {
        let now = clock.now
        defer { start = now }
        let elapsed = now - start
        return Int(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)
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

    /// Removes this device's own temporary files left by a process that was killed mid-publish.
    private func removeStaleTemporaryFiles() {
        guard let names = try? SystemCalls.directoryEntries(folder.path) else { return }
        for name in names where name.hasPrefix(".\(ownFileName).") && name.hasSuffix(".tmp") {
            try? SystemCalls.remove(folder.path(of: name))
            logger.notice("removed a temporary file left by an interrupted publish", metadata: ["file": "\(name)"])
        }
    }
}
