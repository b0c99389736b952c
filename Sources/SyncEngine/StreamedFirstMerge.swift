import Foundation
import RecordSchemas
import SnapshotFormat
import SnapshotMerge
import SyncStore
import Synchronization

/// A first merge (the store holds no record) of files too large to hold at once: each file is
/// indexed through a window (its elements' places and ids, ``SortedSnapshotIndex``), then the
/// files are merged by record id, as the merge step of a merge sort, a round of records at a
/// time: each round reads its elements' bytes, reads each distinct element once, merges each
/// record and hands the round to the inserts and the file's writer (``MergedAlone``), which let
/// go of it. Memory is then the indexes (about 32 bytes per element) and a few rounds, instead
/// of every file's bytes and every version read.
///
/// It applies to clean files as SnapshotSync writes them, and stops at anything else (see
/// ``StreamedFirstMerge/Declined``): the pass then rolls back and reads the usual way, which
/// gives every message. Design and limits: `docs/design-streaming-cold-merge.md`.
final class StreamedFirstMerge: Sendable {
    /// Why the streamed merge does not apply to a pass; the pass then reads the usual way.
    struct Declined: Error, CustomStringConvertible {
        var description: String
    }

    /// One file, indexed and kept open, so every round reads the very file indexed.
    struct Source: Sendable {
        var name: String
        var path: String
        var descriptor: Int32
        var status: FileStatus
        var index: SortedSnapshotIndex
        /// Its header, `writtenAt` warning and record count (no versions).
        var topLevel: SnapshotReading
    }

    /// What a file's versions gave, gathered round by round.
    struct Facts: Sendable {
        /// Each element's digest, by its index.
        var digests: [RecordDigests.Digest]
        var futureDates: FutureDates
        /// Versions whose schemaVersion is newer than the schema files declare.
        var newerSchemas = 0
    }

    let sources: [Source]
    /// Per round, per file: the elements it takes.
    private let rounds: [[Range<Int>]]
    private let facts: Mutex<[Facts]>
    private let schemas: SchemaSet

    /// Records per round: small enough that a few rounds in flight stay a few tens of MB.
    static let roundSize = 4096
    /// Rounds merged ahead of the consumers at most.
    static let window = 4

    private init(sources: [Source], rounds: [[Range<Int>]], facts: [Facts], schemas: SchemaSet) {
        self.sources = sources
        self.rounds = rounds
        self.facts = Mutex(facts)
        self.schemas = schemas
    }

    deinit {
        for source in sources { SystemCalls.close(source.descriptor) }
    }

    /// Indexes every file of `pending`, on every core; nil (with the reason) when one of them is
    /// not a clean file this merge can stream.
    static func indexing(
        _ pending: [(name: String, status: FileStatus)], folder: SharedFolder, device: DeviceID, maxFileSize: Int64,
        schemas: SchemaSet, now: Timestamp, clockSkewMargin: Int64
    ) -> Result<StreamedFirstMerge, Declined> {
        let indexed = Mutex([Result<Source, Declined>?](repeating: nil, count: pending.count))
        let queue = TaskQueue()
        for (position, file) in pending.enumerated() {
            queue.add {
                let result = index(file.name, in: folder, device: device, maxFileSize: maxFileSize)
                indexed.withLock { $0[position] = result }
            }
        }
        queue.run()
        var sources: [Source] = []
        var declined: Declined?
        for result in indexed.withLock({ $0 }) {
            switch result! {
            case .success(let source): sources.append(source)
            case .failure(let reason): declined = declined ?? reason
            }
        }
        if let declined {
            for source in sources { SystemCalls.close(source.descriptor) }
            return .failure(declined)
        }
        let facts = sources.map {
            Facts(
                digests: Array(repeating: .init(high: 0, low: 0), count: $0.index.ids.count),
                futureDates: FutureDates(now: now, margin: clockSkewMargin))
        }
        return .success(
            StreamedFirstMerge(sources: sources, rounds: plan(sources.map(\.index.ids)), facts: facts, schemas: schemas))
    }

    private static func index(_ name: String, in folder: SharedFolder, device: DeviceID, maxFileSize: Int64)
        -> Result<Source, Declined>
    {
        let path = folder.path(of: name)
        let descriptor: Int32
        do {
            descriptor = try SystemCalls.openForReadingNoFollow(path)
        } catch {
            return .failure(Declined(description: "\(name): \(error)"))
        }
        func declined(_ reason: String) -> Result<Source, Declined> {
            SystemCalls.close(descriptor)
            return .failure(Declined(description: "\(name): \(reason)"))
        }
        guard let status = try? SystemCalls.status(of: descriptor, path: path) else { return declined("no status") }
        guard status.kind == .regular, status.size <= maxFileSize else { return declined("not a regular file within the size limit") }
        let index = SnapshotReader.indexSorted { buffer, offset in
            try? SystemCalls.readAt(descriptor, into: buffer, at: offset, path: path)
        }
        guard let index else { return declined("not a snapshot with records in increasing id order") }
        let topLevel: SnapshotReading
        do throws(SnapshotFileProblem) {
            topLevel = try SnapshotReader.topLevel(of: index.split, fileName: name)
        } catch {
            return declined("\(error)")
        }
        // This device's own name is read the usual way: what it holds is compared with what
        // this device published.
        guard topLevel.device != device else { return declined("holds this device's records") }
        return .success(
            Source(name: name, path: path, descriptor: descriptor, status: status, index: index, topLevel: topLevel))
    }

    /// The rounds: every record's elements, in id order across the files, `roundSize` records a round.
    private static func plan(_ ids: [[RecordID]]) -> [[Range<Int>]] {
        var heads = ids.map { _ in 0 }
        var starts = heads
        var rounds: [[Range<Int>]] = []
        var records = 0
        while true {
            var smallest: RecordID?
            for (file, head) in heads.enumerated() where head < ids[file].count {
                if smallest.map({ ids[file][head] < $0 }) ?? true { smallest = ids[file][head] }
            }
            guard let id = smallest else { break }
            for (file, head) in heads.enumerated() where head < ids[file].count && ids[file][head] == id {
                heads[file] += 1
            }
            records += 1
            if records == roundSize {
                rounds.append(zip(starts, heads).map { $0..<$1 })
                starts = heads
                records = 0
            }
        }
        if records > 0 { rounds.append(zip(starts, heads).map { $0..<$1 }) }
        return rounds
    }

    /// The rounds merged in the background, for the transaction's inserts and the file's writer
    /// (the two consumers that go through every round).
    func merging() -> MergedAlone {
        MergedAlone(chunkCount: rounds.count, releasing: (consumers: 2, window: Self.window)) { [self] round in
            try merge(round: round)
        }
    }

    /// Reads and merges one round's records, in id order.
    private func merge(round: Int) throws -> [MergedAlone.Merged] {
        let ranges = rounds[round]
        // Each file's elements of the round are one stretch of its bytes.
        var stretches: [(bytes: [UInt8], start: Int)] = []
        for (source, range) in zip(sources, ranges) {
            guard let first = range.first else {
                stretches.append(([], 0))
                continue
            }
            let start = source.index.split.elements[first].lowerBound
            let end = source.index.split.elements[range.upperBound - 1].upperBound
            do {
                stretches.append((try SystemCalls.readAt(source.descriptor, count: end - start, at: start, path: source.path), start))
            } catch {
                throw Declined(description: "\(source.name): \(error)")
            }
        }
        var digests: [[RecordDigests.Digest]] = []
        for ((source, range), stretch) in zip(zip(sources, ranges), stretches) {
            digests.append(
                stretch.bytes.withUnsafeBufferPointer { bytes in
                    range.map { element in
                        let place = source.index.split.elements[element]
                        return RecordDigests.digest(
                            of: UnsafeBufferPointer(rebasing: bytes[(place.lowerBound - stretch.start)..<(place.upperBound - stretch.start)]))
                    }
                })
        }
        var futureDates = facts.withLock { $0.map { $0.futureDates.emptied() } }
        var newerSchemas = sources.map { _ in 0 }
        var merged: [MergedAlone.Merged] = []
        merged.reserveCapacity(Self.roundSize)
        var heads = ranges.map(\.lowerBound)
        var buffers = ParserBuffers()
        var versions: [ReadOnly.Version] = []
        // The distinct elements of the record at hand: their digests and versions.
        var distinct: [(digest: RecordDigests.Digest, versions: [ReadOnly.Version])] = []
        while true {
            var smallest: RecordID?
            for (file, head) in heads.enumerated() where head < ranges[file].upperBound {
                let id = sources[file].index.ids[head]
                if smallest.map({ id < $0 }) ?? true { smallest = id }
            }
            guard let id = smallest else { break }
            versions.removeAll(keepingCapacity: true)
            distinct.removeAll(keepingCapacity: true)
            for file in heads.indices where heads[file] < ranges[file].upperBound {
                let element = heads[file]
                guard sources[file].index.ids[element] == id else { continue }
                heads[file] += 1
                let digest = digests[file][element - ranges[file].lowerBound]
                let elementVersions: [ReadOnly.Version]
                if let same = distinct.first(where: { $0.digest == digest }) {
                    // The same bytes as an earlier file's element: read once, merged once.
                    elementVersions = same.versions
                } else {
                    let place = sources[file].index.split.elements[element]
                    let start = stretches[file].start
                    let reading = stretches[file].bytes.withUnsafeBufferPointer { bytes in
                        SnapshotReader.readElement(
                            of: UnsafeBufferPointer(rebasing: bytes[(place.lowerBound - start)..<(place.upperBound - start)]),
                            at: element, reusing: &buffers)
                    }
                    guard reading.isClean, reading.versions.first?.id == id else {
                        throw Declined(description: "\(sources[file].name): record \(element) is not clean")
                    }
                    elementVersions = reading.versions
                    distinct.append((digest, elementVersions))
                    versions += elementVersions
                }
                for version in elementVersions {
                    if schemas.violation(of: version) != nil {
                        throw Declined(description: "\(sources[file].name): record \(id) does not fit its schema")
                    }
                    if schemas.newerVersionNote(for: version) != nil { newerSchemas[file] += 1 }
                    futureDates[file].add(version)
                }
            }
            if let record = RecordMerge.merge(versions) { merged.append((record, StoredLine(of: record))) }
        }
        facts.withLock { facts in
            for (file, range) in ranges.enumerated() {
                facts[file].digests.replaceSubrange(range, with: digests[file])
                facts[file].futureDates.add(futureDates[file])
                facts[file].newerSchemas += newerSchemas[file]
            }
        }
        return merged
    }

    /// What each file gave, once every round is merged; declined when a file changed since it
    /// was indexed (its records may no longer be the ones merged).
    func finished() throws -> [Facts] {
        for source in sources {
            guard let now = try? SystemCalls.status(of: source.descriptor, path: source.path),
                now.size == source.status.size, now.modifiedNanos == source.status.modifiedNanos,
                now.changedNanos == source.status.changedNanos
            else { throw Declined(description: "\(source.name) changed while it was read") }
        }
        return facts.withLock { $0 }
    }
}
