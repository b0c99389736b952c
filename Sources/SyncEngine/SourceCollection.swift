import Crypto
import Dispatch
import Foundation
import SnapshotMerge
import Synchronization
import SnapshotFormat
import SyncStore

/// What the reading half of a merge pass gathered: versions by record, source rows to save,
/// and the report so far. Reading does no writes to the store.
struct SourceCollection {
    /// The versions to merge, as read from each file (a file's versions that fit their schemas).
    var incoming: IncomingVersions = IncomingVersions()
    var rows: [StoredSource] = []
    /// The rows as the store held them before this pass, to write only what changed.
    var previousRows: [String: StoredSource] = [:]
    var report = MergeReport()
    var presentNames: Set<String> = []
    /// Live records in the store before this pass (for the mass-deletion valve), read when first needed.
    var liveRecords: Int?
    /// This device's own file, when this pass read it cleanly.
    var ownFileRead: OwnFileRead?
    /// The files of this pass (by their index in the load) whose versions all went to the merge.
    var mergedLoads: Set<Int> = []
    /// The record digests to keep for each file whose records all merge in this pass.
    var recordDigests: [String: [UInt8]] = [:]
}

/// The shared folder as a pass found it, before any file is read.
struct FolderScan {
    /// The outcomes of the files not to read.
    var collection: SourceCollection
    /// The files to read, in name order.
    var pending: [(name: String, status: FileStatus)]
    /// The rows the store held.
    var known: [String: StoredSource]
    var hasPublished: Bool
}

/// The versions a pass merges, kept as each file gave them; ``forEachRecord(_:)`` groups them by
/// record.
///
/// Grouping by sorting one index of every version beats a dictionary of arrays keyed by record:
/// no hashing of each version's id into a table much larger than the caches, and the records
/// come out in id order, the order the store and the published file want.
struct IncomingVersions {
    private(set) var batches: [[ReadOnly.Version]] = []

    mutating func add(_ versions: [ReadOnly.Version]) {
        if !versions.isEmpty { batches.append(versions) }
    }

    /// Calls `body` with each record's id and every version of it, in id order.
    func forEachRecord(_ body: (RecordID, [ReadOnly.Version]) throws -> Void) rethrows {
        try forEachRecord(in: sortedOrder()[...], body)
    }

    /// One entry per version, sorted by record id.
    fileprivate func sortedOrder() -> [Entry] {
        var order: [Entry] = []
        order.reserveCapacity(batches.reduce(0) { $0 + $1.count })
        for (batch, versions) in batches.enumerated() {
            for (index, version) in versions.enumerated() {
                order.append(Entry(id: version.id, batch: Int32(batch), index: Int32(index)))
            }
        }
        order.sort { $0.id < $1.id }
        return order
    }

    fileprivate struct Entry {
        var id: RecordID
        var batch: Int32
        var index: Int32
    }

    fileprivate func forEachRecord(in order: ArraySlice<Entry>, _ body: (RecordID, [ReadOnly.Version]) throws -> Void)
        rethrows
    {
        var group: [ReadOnly.Version] = []
        var start = order.startIndex
        while start < order.endIndex {
            let id = order[start].id
            var end = start
            group.removeAll(keepingCapacity: true)
            while end < order.endIndex, order[end].id == id {
                group.append(batches[Int(order[end].batch)][Int(order[end].index)])
                end += 1
            }
            try body(id, group)
            start = end
        }
    }

}

/// Every record merged from a pass's versions alone (as for a store that holds none of them),
/// with its line and digest: the pure part of a cold merge. It runs in the background on every
/// core, in chunks in id order, and each chunk can be taken as soon as it is ready, so the
/// transaction inserts (and the file is written) while later chunks are still being merged.
final class MergedAlone: Sendable {
    typealias Merged = (record: ReadOnly.Record, line: StoredLine)
    /// Chunks, in id order.
    let chunkCount: Int
    private let ready: [DispatchGroup]
    private let state: Mutex<State>
    /// Signalled when a chunk is let go of, or the merge cancelled.
    private let released = NSCondition()
    /// Set when the pass failed: the chunks not started yet are left empty.
    private let cancelled = Atomic(false)
    /// When chunks are let go of once every consumer went through them: how many consumers go
    /// through, and how many chunks past the last one let go of may be merged meanwhile.
    private let releasing: (consumers: Int, window: Int)?

    private struct State {
        var chunks: [[Merged]]
        /// How many consumers went through each chunk.
        var consumed: [Int]
        /// Every chunk before this one is let go of.
        var releasedUpTo = 0
        /// Why producing a chunk failed, if it did.
        var failure: (any Error)?
        /// Which producer thread made each chunk.
        var producers: [Int]
        /// Chunks let go of, by the producer thread that made them (which frees them).
        var released: [Int: [[Merged]]] = [:]
    }

    /// Starts merging `incoming`'s records in the background (on `queue`; tests hold it back).
    convenience init(_ incoming: IncomingVersions, on queue: DispatchQueue = .global()) {
        let order = incoming.sortedOrder()
        // Chunks that end where a record's versions end.
        var bounds = [0]
        let chunkSize = max(1024, order.count / 32)
        while let last = bounds.last, last < order.count {
            var end = min(order.count, last + chunkSize)
            while end < order.count, order[end].id == order[end - 1].id { end += 1 }
            bounds.append(end)
        }
        let ends = bounds
        self.init(chunkCount: ends.count - 1, on: queue) { chunk in
            var merged: [Merged] = []
            incoming.forEachRecord(in: order[ends[chunk]..<ends[chunk + 1]]) { _, versions in
                guard let record = RecordMerge.merge(versions) else { return }
                merged.append((record, StoredLine(of: record)))
            }
            return merged
        }
    }

    /// Starts producing `chunkCount` chunks in the background with `produce`, on every core, in
    /// increasing order. With `releasing`, a chunk is let go of once that many consumers went
    /// through it (``forEach(_:)``), and a chunk is produced only while fewer than `window`
    /// chunks before it are held: memory stays bounded however many records there are.
    init(
        chunkCount: Int, releasing: (consumers: Int, window: Int)? = nil, on queue: DispatchQueue = .global(),
        produce: @escaping @Sendable (Int) throws -> [Merged]
    ) {
        self.chunkCount = chunkCount
        self.releasing = releasing
        ready = (0..<chunkCount).map { _ in
            let group = DispatchGroup()
            group.enter()
            return group
        }
        state = Mutex(
            State(
                chunks: Array(repeating: [], count: chunkCount), consumed: Array(repeating: 0, count: chunkCount),
                producers: Array(repeating: 0, count: chunkCount)))
        guard chunkCount > 0 else { return }
        queue.async { [ready, self] in
            // Chunks are handed to the cores in increasing order, so the first ones are ready first.
            @Sendable func work(_ chunk: Int, producer: Int = 0) {
                defer { ready[chunk].leave() }
                if let releasing {
                    self.waitForRoom(before: chunk, window: releasing.window)
                    // The chunks this thread produced and the consumers let go of are freed
                    // here, by the thread that allocated them: glibc's malloc then frees into
                    // this thread's own heap instead of waiting for another thread's.
                    _ = self.state.withLock { state in
                        guard let mine = state.released[producer], !mine.isEmpty else { return [[Merged]]() }
                        state.released[producer] = []
                        return mine
                    }
                }
                guard !self.cancelled.load(ordering: .relaxed) else { return }
                do {
                    let merged = try produce(chunk)
                    self.state.withLock { state in
                        state.chunks[chunk] = merged
                        state.producers[chunk] = producer
                    }
                } catch {
                    self.state.withLock { if $0.failure == nil { $0.failure = error } }
                    self.cancel()
                }
            }
            guard releasing != nil else {
                DispatchQueue.concurrentPerform(iterations: chunkCount) { work($0) }
                return
            }
            // Bounded production shares the cores with its consumers (the inserts, the file's
            // writer): threads of its own, two per core, keep the cores busy when one of them
            // waits (for the allocator's locks, for room). Measured on 2 cores, 3 × 1,000,000
            // records: 13.3 s instead of 15.3 s with the two threads of concurrentPerform.
            let next = Atomic(0)
            let group = DispatchGroup()
            for producer in 0..<(2 * max(1, ProcessInfo.processInfo.activeProcessorCount)) {
                group.enter()
                Thread {
                    while case let chunk = next.add(1, ordering: .relaxed).oldValue, chunk < chunkCount {
                        work(chunk, producer: producer)
                    }
                    group.leave()
                }.start()
            }
            group.wait()
        }
    }

    /// Waits until fewer than `window` chunks before `chunk` are held (or the merge is cancelled).
    /// The first chunk not let go of never waits for a later one: no chunk waits forever.
    private func waitForRoom(before chunk: Int, window: Int) {
        released.lock()
        defer { released.unlock() }
        while state.withLock({ $0.releasedUpTo }) + window <= chunk, !cancelled.load(ordering: .relaxed) {
            released.wait()
        }
    }

    /// Calls `body` with every merged record, in id order, waiting for each chunk to be ready.
    func forEach(_ body: (Merged) throws -> Void) rethrows {
        for index in 0..<chunkCount {
            ready[index].wait()
            do {
                let merged = state.withLock { $0.chunks[index] }
                for record in merged { try body(record) }
            }
            // This consumer's hold on the chunk ended above: whoever frees it is a producer.
            guard let releasing else { continue }
            released.lock()
            state.withLock { state in
                state.consumed[index] += 1
                if state.consumed[index] == releasing.consumers {
                    state.released[state.producers[index], default: []].append(state.chunks[index])
                    state.chunks[index] = []
                }
                while state.releasedUpTo < chunkCount, state.consumed[state.releasedUpTo] >= releasing.consumers {
                    state.releasedUpTo += 1
                }
            }
            released.broadcast()
            released.unlock()
        }
    }

    /// Why producing a chunk failed (the chunks after it are left empty), nil when none did.
    var failure: (any Error)? { state.withLock { $0.failure } }

    /// Stops merging: chunks not started are left empty, so waiting for them (the inserts, the
    /// file's writer, ``waitUntilDone()``) ends soon after a failed pass instead of after the
    /// whole merge.
    func cancel() {
        cancelled.store(true, ordering: .relaxed)
        released.lock()
        released.broadcast()
        released.unlock()
    }

    /// Waits until every chunk is merged or skipped (so no work outlives its pass).
    func waitUntilDone() {
        for group in ready { group.wait() }
    }
}

/// What this pass found in this device's own file: to tell whether it already holds what this
/// device would publish, whatever generation it carries (another device using the same ID may
/// have written the same content).
struct OwnFileRead {
    var generation: Int64
    /// SHA-256 of the `records` part, when the file has the layout SnapshotWriter writes.
    var recordsDigest: String?
    /// SHA-256 of the whole file.
    var fileDigest: String
}

extension SyncDevice {
    /// Reads every source of `scan` that changed since it was last read (``scanSources(rereadAll:)``).
    func collectSources(_ scan: FolderScan, now: Timestamp, acceptDeletions: Set<String> = []) -> SourceCollection {
        var collection = scan.collection
        // Reading and parsing are independent per file: do them on every core, then take the
        // results in name order so the report and the merge do not depend on timing.
        let loaded = loadInParallel(scan.pending.map(\.name))
        for (index, ((name, status), load)) in zip(scan.pending, loaded).enumerated() {
            absorb(
                load, at: index, name: name, listed: status, previous: scan.known[name], hasPublished: scan.hasPublished,
                now: now, acceptDeletions: acceptDeletions, into: &collection)
        }
        return collection
    }

    /// The sources of a streamed first merge, taken into a collection as ``collectSources(_:now:acceptDeletions:)``
    /// takes files read whole: from each file's top level, and from what its records gave
    /// (`facts`, once they are merged; without them, the rows hold all but the records' warnings
    /// and digests).
    func collectStreamed(
        _ scan: FolderScan, _ streamed: StreamedFirstMerge, facts: [StreamedFirstMerge.Facts]?, now: Timestamp,
        acceptDeletions: Set<String>
    ) -> SourceCollection {
        var collection = scan.collection
        for (index, source) in streamed.sources.enumerated() {
            let fileFacts = facts?[index]
            absorb(
                .read(
                    source.topLevel, ownBytes: [], source.status,
                    digests: fileFacts == nil ? RecordDigests() : RecordDigests(ordered: streamed.digests(of: index))),
                at: index, name: source.name, listed: source.status, previous: scan.known[source.name],
                hasPublished: scan.hasPublished, now: now, acceptDeletions: acceptDeletions, into: &collection,
                streamed: fileFacts.map { ($0.futureDates.warnings(), $0.newerSchemas) })
        }
        return collection
    }

    /// The shared folder's entries against the rows the store holds: the outcomes of files not
    /// to read (unchanged, not regular), and the files to read.
    ///
    /// With `rereadAll`, files are parsed again even when their stat is unchanged (after an inotify
    /// overflow, a lost watch, or the periodic rescan).
    func scanSources(rereadAll: Bool) throws -> FolderScan {
        var collection = SourceCollection()
        collection.report.ownFile = folder.path(of: ownFileName)
        let (entries, ignored) = try folder.candidates()
        collection.report.ignoredNames = ignored.filter { !$0.hasPrefix(".\(ownFileName).") }
        let (known, hasPublished) = try store.reading { session in
            (Dictionary(uniqueKeysWithValues: try session.sources().map { ($0.name, $0) }), try session.hasPublished())
        }
        collection.previousRows = known
        var pending: [(name: String, status: FileStatus)] = []
        for entry in entries {
            guard let status = entry.status else { continue }
            collection.presentNames.insert(entry.name)
            if status.kind != .regular {
                collection.report.sources.append(
                    SourceOutcome(
                        name: entry.name, status: .ignored,
                        reason: SnapshotFileReadError.notRegular(status.kind).description, rejectedRecords: []))
                continue
            }
            if let previous = known[entry.name], previous.hasSameStat(as: status), !rereadAll {
                collection.recordUnchanged(previous)
                continue
            }
            pending.append((entry.name, status))
        }
        return FolderScan(collection: collection, pending: pending, known: known, hasPublished: hasPublished)
    }

    /// Takes what loading one file gave into the collection: its row, its outcome, its versions.
    private func absorb(
        _ load: LoadedSource, at loadIndex: Int, name: String, listed: FileStatus, previous: StoredSource?, hasPublished: Bool,
        now: Timestamp, acceptDeletions: Set<String>, into collection: inout SourceCollection,
        streamed: (futureWarnings: [String], newerSchemas: Int)? = nil
    ) {
        let status = load.status ?? listed
        var row = StoredSource(
            name: name, fileSystemDevice: status.fileSystemDevice, inode: status.inode, size: status.size,
            modifiedNanos: status.modifiedNanos, changedNanos: status.changedNanos, lastSeenAt: now.milliseconds)
        if let previous {
            row.device = previous.device
            row.role = previous.role
            row.generation = previous.generation
            row.highestGeneration = previous.highestGeneration
            row.lastMergedAt = previous.lastMergedAt
        }
        var outcome = SourceOutcome(name: name, status: .merged, rejectedRecords: [])
        defer {
            collection.rows.append(row)
            collection.report.sources.append(outcome)
        }
        let reading: SnapshotReading
        let bytes: [UInt8]
        let digests: RecordDigests
        let copiedFrom: [Int32]
        switch load {
        case .unreadable(let error):
            outcome.status =
                if case .tooLarge = error { .rejected } else if case .notRegular = error { .ignored } else { .skipped }
            outcome.reason = error.description
            row.lastProblem = error.description
            logger.warning("source not read", metadata: ["source.name": "\(name)", "reason": "\(error)"])
            return
        case .invalid(let error, _):
            outcome.status = if case .misnamed = error { .rejected } else { .skipped }
            outcome.reason = error.description
            row.lastProblem = error.description
            logger.warning("source not merged", metadata: ["source.name": "\(name)", "reason": "\(error)"])
            return
        case .read(let read, let ownBytes, _, let recordDigests, let copies):
            reading = read
            bytes = ownBytes
            digests = recordDigests
            copiedFrom = copies
        }
        outcome.device = reading.device.rawValue
        outcome.role = reading.role == .own ? "own" : "copy"
        outcome.generation = reading.generation
        outcome.records = reading.recordCount
        outcome.rejectedRecords = reading.problems.map(\.description)
        row.device = outcome.device
        row.role = outcome.role
        row.generation = reading.generation
        row.highestGeneration = max(previous?.highestGeneration ?? 0, reading.generation)
        row.lastMergedAt = now.milliseconds
        var notes = reading.warnings
        if let highest = previous?.highestGeneration, reading.generation < highest, previous?.device == outcome.device {
            notes.append(
                "its generation went backwards from \(highest) to \(reading.generation) (restored from a backup?); merged anyway"
            )
        }
        // A file under this device's name is digested once (it holds every record: tens of MB).
        let recordsDigest = reading.device == device ? Self.recordsDigest(of: bytes) : nil
        let fileDigest = reading.device == device ? Self.fileDigest(of: bytes, recordsDigest: recordsDigest) : ""
        if reading.device == device, reading.role == .own, reading.problems.isEmpty {
            collection.ownFileRead = OwnFileRead(
                generation: reading.generation, recordsDigest: recordsDigest, fileDigest: fileDigest)
        }
        if reading.device == device, hasPublished,
            let impostor = try? impostorWarning(reading, bytes: bytes, fileDigest: fileDigest)
        {
            notes.append(impostor)
        }
        // A streamed file's versions were checked round by round; its reading holds none.
        notes += streamed?.futureWarnings ?? futureVersionWarnings(reading.versions, now: now)
        if !acceptDeletions.contains(name), let held = try? massDeletionHold(reading, name: name, into: &collection) {
            outcome.status = .heldBack
            outcome.reason = held
            row.lastProblem = held
            // A held-back file is read again on every pass until it is let through.
            row.size = -1
            collection.report.warnings.append("\(name): \(held)")
            logger.warning("source held back", metadata: ["source.name": "\(name)", "reason": "\(held)"])
            return
        }
        row.lastProblem =
            reading.problems.isEmpty
            ? nil : "\(reading.problems.count) record(s) rejected, first: \(reading.problems[0])"
        row.lastWarning = notes.isEmpty ? nil : notes.joined(separator: "; ")
        outcome.warning = row.lastWarning
        collection.report.warnings += notes.map { "\(name): \($0)" }
        // Versions of declared types that do not fit their schema are rejected before anything is stored.
        var schemaProblems: [String] = []
        var newerSchemas = 0
        var fitting: [ReadOnly.Version] = []
        for (index, version) in reading.versions.enumerated() {
            if let violation = schemas.violation(of: version) {
                schemaProblems.append(
                    "record \(version.id) (\(version.modifiedBy?.rawValue ?? "no device"), \(version.lastModified?.written ?? "no time")): \(violation)"
                )
                // From the first misfit on, the versions that fit are gathered apart.
                if schemaProblems.count == 1 { fitting = Array(reading.versions[..<index]) }
                continue
            }
            if schemas.newerVersionNote(for: version) != nil { newerSchemas += 1 }
            if !schemaProblems.isEmpty { fitting.append(version) }
        }
        if schemaProblems.isEmpty {
            // A version copied from an earlier file whose versions all went to the merge is there
            // already: merging it twice changes nothing, so it is left out.
            collection.mergedLoads.insert(loadIndex)
            if copiedFrom.isEmpty {
                collection.incoming.add(reading.versions)
            } else {
                var distinct: [ReadOnly.Version] = []
                distinct.reserveCapacity(reading.versions.count)
                // Holders are earlier files of the load, or this one (an element it repeats byte
                // for byte: merged already, from its first place in the file).
                let holderMerged = (0...loadIndex).map { collection.mergedLoads.contains($0) }
                for (version, holder) in zip(reading.versions, copiedFrom)
                where holder < 0 || !holderMerged[Int(holder)] {
                    distinct.append(version)
                }
                collection.incoming.add(distinct)
            }
        } else {
            collection.incoming.add(fitting)
        }
        if !schemaProblems.isEmpty {
            outcome.rejectedRecords += schemaProblems
            let note = "\(schemaProblems.count) version(s) do not fit their schema, first: \(schemaProblems[0])"
            row.lastProblem = row.lastProblem.map { $0 + "; " + note } ?? note
            // Read again on every pass: once the schema files change, the versions merge.
            row.size = -1
        }
        newerSchemas += streamed?.newerSchemas ?? 0
        if newerSchemas > 0 {
            let note =
                "\(newerSchemas) version(s) carry a schemaVersion newer than the schema files declare: merged unchecked, kept verbatim"
            row.lastWarning = row.lastWarning.map { $0 + "; " + note } ?? note
            outcome.warning = row.lastWarning
        }
        for problem in reading.problems {
            logger.warning("record rejected", metadata: ["source.name": "\(name)", "record.problem": "\(problem)"])
        }
        if schemaProblems.isEmpty {
            // Every record read without a problem is now merged (or already was): keep their digests.
            collection.recordDigests[name] = digests.stored(excluding: Set(reading.problems.map(\.recordIndex)))
        }
    }

    /// SHA-256 of the records part of a file laid out as SnapshotWriter writes it (header up to
    /// `"records":[`, then the records, then the footer), nil for any other layout.
    static func recordsDigest(of bytes: [UInt8]) -> String? {
        let opening = Array(#","records":["#.utf8)
        let footer = SnapshotWriter.footer
        guard bytes.count >= opening.count + footer.count, bytes.suffix(footer.count).elementsEqual(footer),
            let start = bytes.firstRange(of: opening)?.upperBound
        else { return nil }
        let end = bytes.count - footer.count
        guard start <= end else { return nil }
        // "\n" line ",\n" line …: a line never holds a raw line break (canonical JSON escapes it).
        var digest = ContentDigest()
        guard start < end else { return digest.finalize() }
        guard bytes[start] == 0x0A else { return nil }
        return bytes.withUnsafeBytes { all -> String? in
            var lineStart = start + 1
            var index = lineStart
            while index < end {
                if all[index] == 0x0A {
                    guard index > lineStart, all[index - 1] == UInt8(ascii: ",") else { return nil }
                    LineDigest.of(UnsafeRawBufferPointer(rebasing: all[lineStart..<(index - 1)])).withUnsafeBytes {
                        digest.add($0)
                    }
                    lineStart = index + 1
                }
                index += 1
            }
            LineDigest.of(UnsafeRawBufferPointer(rebasing: all[lineStart..<end])).withUnsafeBytes { digest.add($0) }
            return digest.finalize()
        }
    }

    /// The digest kept for a file this device writes: for the layout SnapshotWriter writes, the
    /// SHA-256 of its header, its footer and its records' digest (already computed, so the file is
    /// hashed once); for any other layout, the SHA-256 of the whole file.
    static func fileDigest(of bytes: [UInt8], recordsDigest: String?) -> String {
        guard let recordsDigest, let start = bytes.firstRange(of: Array(#","records":["#.utf8))?.upperBound else {
            return SHA256.hash(data: bytes).hexString
        }
        return fileDigest(header: bytes[..<start], recordsDigest: recordsDigest)
    }

    /// The digest of a file with this header, ``SnapshotWriter/footer`` and records digest.
    static func fileDigest(header: some Collection<UInt8>, recordsDigest: String) -> String {
        var hasher = SHA256()
        hasher.update(data: Array(header))
        hasher.update(data: SnapshotWriter.footer)
        hasher.update(data: Array(recordsDigest.utf8))
        return hasher.finalize().hexString
    }

    /// A loud warning when a file under this device's name is not one this device wrote.
    private func impostorWarning(_ reading: SnapshotReading, bytes: [UInt8], fileDigest: String) throws -> String? {
        let publication = try store.reading { try $0.publication(generation: reading.generation) }
        guard let publication else {
            return
                "ANOTHER DEVICE IS USING THIS DEVICE'S ID \"\(device)\": generation \(reading.generation) was never written by this device (or this state directory was restored from an older backup). Give each device its own --device ID"
        }
        if publication.isAdopted {
            return
                "ANOTHER DEVICE IS USING THIS DEVICE'S ID \"\(device)\": generation \(reading.generation) was written by it (with the same records as this device, so it is not rewritten). Give each device its own --device ID"
        }
        // Files written before the digest of header, footer and records was kept hold the SHA-256 of the whole file.
        guard
            publication.fileDigest == fileDigest
                || publication.fileDigest == SHA256.hash(data: bytes).hexString
        else {
            return
                "ANOTHER DEVICE IS USING THIS DEVICE'S ID \"\(device)\": generation \(reading.generation) holds content this device did not publish. Give each device its own --device ID"
        }
        return nil
    }
}

extension Sequence where Element == UInt8 {
    /// Lower-case hexadecimal digits.
    var hexString: String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        for byte in self {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}

extension SHA256.Digest {
    var hexString: String { Array(self).hexString }
}
