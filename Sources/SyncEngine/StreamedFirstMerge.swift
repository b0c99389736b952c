import Foundation
import RecordSchemas
import SnapshotFormat
import SnapshotMerge
import SyncStore
import Synchronization

/// A first merge (the store holds no record) of files too large to hold at once: each file is
/// indexed through a window (its elements' places, ids and digests, ``SnapshotIndex``), then the
/// files are merged by record id, as the merge step of a merge sort, a round of records at a
/// time: each round reads the bytes of its distinct elements, reads (parses) them, merges each
/// record and hands the round to the inserts and the file's writer (``MergedAlone``), which let
/// go of it. Memory is then the indexes (about 60 bytes per element) and a few rounds, instead
/// of every file's bytes and every version read.
///
/// It applies to clean files (every record valid, fitting its schema, no id twice), and stops at
/// anything else (``StreamedFirstMerge/Declined``): the pass then rolls back and reads the files
/// whole, which gives every message. Design and limits: `docs/design-streaming-cold-merge.md`.
final class StreamedFirstMerge: Sendable {
    /// Why the streamed merge does not apply to a pass; the pass then reads the files whole.
    struct Declined: Error, CustomStringConvertible {
        var description: String
    }

    /// One file, indexed and kept open, so every round reads the very file indexed.
    struct Source: Sendable {
        var name: String
        var path: String
        var descriptor: Int32
        var status: FileStatus
        /// Its header, `writtenAt` warning and record count (no versions).
        var topLevel: SnapshotReading
        /// Where its elements start in the flat arrays below.
        var base: Int
        var count: Int
    }

    /// What a file's versions gave, gathered round by round.
    struct Facts: Sendable {
        var futureDates: FutureDates
        /// Versions whose schemaVersion is newer than the schema files declare.
        var newerSchemas = 0
    }

    let sources: [Source]
    // Every file's elements, end to end (file `f` from `sources[f].base`): by element, its byte
    // range and digest; by position in the file's id order, its id and its element.
    private let places: [Range<Int>]
    private let digests: [RecordDigests.Digest]
    private let sortedIDs: [RecordID]
    private let sortedElements: [Int32]
    /// Per round, per file: the positions (in the file's id order) it takes.
    private let rounds: [[Range<Int>]]
    private let facts: Mutex<[Facts]>
    private let schemas: SchemaSet

    /// The most files it merges at once (each record's turn compares every file's head).
    static let filesAtMost = 64

    /// Records per round: small enough that a few rounds in flight stay a few tens of MB.
    static let roundSize = 4096
    /// Rounds merged ahead of the consumers at most (room for every producer thread and some).
    static let window = 2 * max(1, ProcessInfo.processInfo.activeProcessorCount) + 2

    private init(_ indexed: [Indexed], schemas: SchemaSet, facts: [Facts]) {
        var base = 0
        sources = indexed.map { file in
            var source = file.source
            source.base = base
            base += source.count
            return source
        }
        places = indexed.flatMap(\.places)
        digests = indexed.flatMap(\.digests)
        sortedIDs = indexed.flatMap(\.sortedIDs)
        sortedElements = indexed.flatMap(\.sortedElements)
        self.facts = Mutex(facts)
        self.schemas = schemas
        rounds = Self.plan(sortedIDs, sources)
    }

    deinit {
        for source in sources { SystemCalls.close(source.descriptor) }
    }

    /// A file as indexing gave it: the file (its `base` set once every file is indexed), and its
    /// elements' facts, put end to end with the other files' afterwards.
    private struct Indexed {
        var source: Source
        var places: [Range<Int>]
        var digests: [RecordDigests.Digest]
        var sortedIDs: [RecordID]
        var sortedElements: [Int32]
    }

    /// Indexes every file of `pending`, on every core; the reason when one of them is not a
    /// clean file this merge can stream.
    static func indexing(
        _ pending: [(name: String, status: FileStatus)], folder: SharedFolder, device: DeviceID, maxFileSize: Int64,
        schemas: SchemaSet, now: Timestamp, clockSkewMargin: Int64
    ) -> Result<StreamedFirstMerge, Declined> {
        let indexed = Mutex([Result<Indexed, Declined>?](repeating: nil, count: pending.count))
        // Per file, per chunk of elements: their digests.
        let digests = Mutex([[[RecordDigests.Digest]]](repeating: [], count: pending.count))
        let queue = TaskQueue()
        // Each file is indexed by one task; its elements are then hashed in chunks, queued behind
        // the files still to index, so no core waits while the last file is indexed alone.
        for (position, file) in pending.enumerated() {
            queue.add {
                let result = index(file.name, in: folder, device: device, maxFileSize: maxFileSize)
                indexed.withLock { $0[position] = result }
                guard case .success(let file) = result else { return }
                let chunks = (file.places.count + hashChunk - 1) / hashChunk
                digests.withLock { $0[position] = Array(repeating: [], count: chunks) }
                for chunk in 0..<chunks {
                    queue.add {
                        let hashed = hash(file, elements: (chunk * hashChunk)..<min(file.places.count, (chunk + 1) * hashChunk))
                        digests.withLock { $0[position][chunk] = hashed }
                    }
                }
            }
        }
        queue.run()
        var files: [Indexed] = []
        var declined: Declined?
        let hashed = digests.withLock { $0 }
        for (position, result) in indexed.withLock({ $0 }).enumerated() {
            switch result! {
            case .success(var file):
                file.digests = hashed[position].flatMap { $0 }
                // A chunk whose bytes could not be read again has no digests.
                if file.digests.count == file.places.count {
                    files.append(file)
                } else {
                    SystemCalls.close(file.source.descriptor)
                    declined = declined ?? Declined(description: "\(file.source.name) could not be read again")
                }
            case .failure(let reason): declined = declined ?? reason
            }
        }
        if let declined {
            for file in files { SystemCalls.close(file.source.descriptor) }
            return .failure(declined)
        }
        let facts = files.map { _ in Facts(futureDates: FutureDates(now: now, margin: clockSkewMargin)) }
        return .success(StreamedFirstMerge(files, schemas: schemas, facts: facts))
    }

    private static func index(_ name: String, in folder: SharedFolder, device: DeviceID, maxFileSize: Int64)
        -> Result<Indexed, Declined>
    {
        let path = folder.path(of: name)
        let descriptor: Int32
        do {
            descriptor = try SystemCalls.openForReadingNoFollow(path)
        } catch {
            return .failure(Declined(description: "\(name): \(error)"))
        }
        func declined(_ reason: String) -> Result<Indexed, Declined> {
            SystemCalls.close(descriptor)
            return .failure(Declined(description: "\(name): \(reason)"))
        }
        guard let status = try? SystemCalls.status(of: descriptor, path: path) else { return declined("no status") }
        guard status.kind == .regular, status.size <= maxFileSize else {
            return declined("not a regular file within the size limit")
        }
        let index = SnapshotReader.index(
            read: { buffer, offset in try? SystemCalls.readAt(descriptor, into: buffer, at: offset, path: path) })
        guard let index else { return declined("not a snapshot whose records are objects with ids") }
        let topLevel: SnapshotReading
        do throws(SnapshotFileProblem) {
            topLevel = try SnapshotReader.topLevel(of: index.split, fileName: name)
        } catch {
            return declined("\(error)")
        }
        // This device's own name is read the usual way: what it holds is compared with what
        // this device published.
        guard topLevel.device != device else { return declined("holds this device's records") }
        // Parts are small and read whole (their records are checked against their prefix).
        guard topLevel.part.isWhole else { return declined("a part of a snapshot") }
        // A file written by SnapshotSync is in id order already; any other is sorted here (pairs
        // rather than indexes into the ids: the comparisons then read memory in order).
        var sortedIDs = index.ids
        var sortedElements: [Int32]
        if index.isSorted {
            sortedElements = Array(0..<Int32(index.ids.count))
        } else {
            var pairs = index.ids.enumerated().map { (id: $0.element, element: Int32($0.offset)) }
            pairs.sort { $0.id < $1.id }
            sortedIDs = pairs.map(\.id)
            sortedElements = pairs.map(\.element)
            for (earlier, later) in zip(sortedIDs, sortedIDs.dropFirst()) where earlier == later {
                return declined("record \(later) is there twice")
            }
        }
        return .success(
            Indexed(
                source: Source(
                    name: name, path: path, descriptor: descriptor, status: status, topLevel: topLevel, base: 0,
                    count: index.split.elements.count),
                places: index.split.elements, digests: [], sortedIDs: sortedIDs, sortedElements: sortedElements))
    }

    /// Elements hashed per task.
    private static let hashChunk = 16384

    /// The digests of a file's `elements`, read again (a stretch of the file, from the page
    /// cache); empty when the read fails.
    private static func hash(_ file: Indexed, elements: Range<Int>) -> [RecordDigests.Digest] {
        guard let first = elements.first else { return [] }
        let start = file.places[first].lowerBound
        guard
            let bytes = try? SystemCalls.readAt(
                file.source.descriptor, count: file.places[elements.upperBound - 1].upperBound - start, at: start,
                path: file.source.path)
        else { return [] }
        return bytes.withUnsafeBufferPointer { bytes in
            elements.map { element in
                let place = file.places[element]
                return RecordDigests.digest(of: UnsafeBufferPointer(rebasing: bytes[(place.lowerBound - start)..<(place.upperBound - start)]))
            }
        }
    }

    /// The rounds: every record's elements, in id order across the files, `roundSize` records a round.
    private static func plan(_ sortedIDs: [RecordID], _ sources: [Source]) -> [[Range<Int>]] {
        var heads = sources.map(\.base)
        let ends = sources.map { $0.base + $0.count }
        var starts = heads
        var rounds: [[Range<Int>]] = []
        var records = 0
        func round() -> [Range<Int>] {
            sources.indices.map { (starts[$0] - sources[$0].base)..<(heads[$0] - sources[$0].base) }
        }
        sortedIDs.withUnsafeBufferPointer { ids in
            while let id = smallestID(ids, heads: heads, ends: ends) {
                for file in heads.indices where heads[file] < ends[file] && ids[heads[file]] == id { heads[file] += 1 }
                records += 1
                if records == roundSize {
                    rounds.append(round())
                    starts = heads
                    records = 0
                }
            }
        }
        if records > 0 { rounds.append(round()) }
        return rounds
    }

    /// The smallest id at the files' heads (flat positions, before `ends`); nil when every file is done.
    private static func smallestID(_ ids: UnsafeBufferPointer<RecordID>, heads: [Int], ends: [Int]) -> RecordID? {
        var smallest: RecordID?
        for file in heads.indices where heads[file] < ends[file] {
            let id = ids[heads[file]]
            if smallest.map({ id < $0 }) ?? true { smallest = id }
        }
        return smallest
    }

    /// The rounds merged in the background, for the transaction's inserts and the file's writer
    /// (the two consumers that go through every round).
    func merging() -> MergedAlone {
        MergedAlone(chunkCount: rounds.count, releasing: (consumers: 2, window: Self.window)) { [self] round in
            try merge(round: round)
        }
    }

    /// An element of a round's record: its file, and its flat element index.
    private struct Member {
        var file: Int
        var element: Int
        /// The element read for it (the first of the record with the same bytes), in `toRead`.
        var reading: Int
    }

    /// Reads and merges one round's records, in id order.
    private func merge(round: Int) throws -> [MergedAlone.Merged] {
        let ranges = rounds[round]
        // First the round's records: each one's elements, and which of them to read: an element
        // with the same bytes as an earlier one of its record is read once.
        var members: [Member] = []
        var recordEnds: [Int] = []
        var toRead: [Int] = []
        var expectedIDs: [RecordID] = []
        sortedIDs.withUnsafeBufferPointer { ids in
            sortedElements.withUnsafeBufferPointer { sortedElements in
                digests.withUnsafeBufferPointer { digests in
                    var heads = sources.indices.map { sources[$0].base + ranges[$0].lowerBound }
                    let ends = sources.indices.map { sources[$0].base + ranges[$0].upperBound }
                    while let id = Self.smallestID(ids, heads: heads, ends: ends) {
                        let first = members.count
                        for file in heads.indices where heads[file] < ends[file] && ids[heads[file]] == id {
                            let element = sources[file].base + Int(sortedElements[heads[file]])
                            heads[file] += 1
                            let digest = digests[element]
                            if let same = members[first...].first(where: { digests[$0.element] == digest }) {
                                members.append(Member(file: file, element: element, reading: same.reading))
                            } else {
                                members.append(Member(file: file, element: element, reading: toRead.count))
                                toRead.append(element)
                                expectedIDs.append(id)
                            }
                        }
                        recordEnds.append(members.count)
                    }
                }
            }
        }
        let readings = try read(toRead, expecting: expectedIDs)
        // Then each record's versions: every distinct element's, merged.
        var futureDates = facts.withLock { $0.map { $0.futureDates.emptied() } }
        var newerSchemas = sources.map { _ in 0 }
        var merged: [MergedAlone.Merged] = []
        merged.reserveCapacity(recordEnds.count)
        var versions: [ReadOnly.Version] = []
        var start = 0
        for end in recordEnds {
            versions.removeAll(keepingCapacity: true)
            for member in members[start..<end] {
                let elementVersions = readings[member.reading]
                // Only the element read adds its versions (the others are copies of it).
                if toRead[member.reading] == member.element { versions += elementVersions }
                for version in elementVersions {
                    if schemas.violation(of: version) != nil {
                        throw Declined(description: "\(sources[member.file].name): record \(version.id) does not fit its schema")
                    }
                    if schemas.newerVersionNote(for: version) != nil { newerSchemas[member.file] += 1 }
                    futureDates[member.file].add(version)
                }
            }
            start = end
            if let record = RecordMerge.merge(versions) { merged.append((record, StoredLine(of: record))) }
        }
        facts.withLock { facts in
            for file in facts.indices {
                facts[file].futureDates.add(futureDates[file])
                facts[file].newerSchemas += newerSchemas[file]
            }
        }
        return merged
    }

    /// Reads the flat `elements`: their versions, in the same order. Each file's elements are read
    /// in the order of their offsets, neighbours in one piece, so a file in id order is read in a
    /// stretch per round. Each must be clean and hold the record `expecting` says (the id
    /// indexing found: a file rewritten in place since may hold others).
    private func read(_ elements: [Int], expecting expectedIDs: [RecordID]) throws -> [[ReadOnly.Version]] {
        var readings = [[ReadOnly.Version]](repeating: [], count: elements.count)
        var buffers = ParserBuffers()
        // Bytes between two elements read in one piece rather than apart, and the largest piece.
        let gap = 16 << 10
        let largest = 8 << 20
        // The elements to read (their positions in `elements`), by offset: files are end to end.
        let wanted = elements.indices.sorted { elements[$0] < elements[$1] }
        try places.withUnsafeBufferPointer { places in
            var next = 0
            while next < wanted.count {
                let file = sources.lastIndex { $0.base <= elements[wanted[next]] }!
                let fileEnd = sources[file].base + sources[file].count
                var last = next
                while last + 1 < wanted.count {
                    let following = elements[wanted[last + 1]]
                    guard following < fileEnd, places[following].lowerBound - places[elements[wanted[last]]].upperBound <= gap,
                        places[following].upperBound - places[elements[wanted[next]]].lowerBound <= largest
                    else { break }
                    last += 1
                }
                let pieceStart = places[elements[wanted[next]]].lowerBound
                let pieceEnd = places[elements[wanted[last]]].upperBound
                let source = sources[file]
                let bytes: [UInt8]
                do {
                    bytes = try SystemCalls.readAt(source.descriptor, count: pieceEnd - pieceStart, at: pieceStart, path: source.path)
                } catch {
                    throw Declined(description: "\(source.name): \(error)")
                }
                try bytes.withUnsafeBufferPointer { bytes in
                    for position in wanted[next...last] {
                        let element = elements[position]
                        let place = places[element]
                        let reading = SnapshotReader.readElement(
                            of: UnsafeBufferPointer(rebasing: bytes[(place.lowerBound - pieceStart)..<(place.upperBound - pieceStart)]),
                            at: element - source.base, reusing: &buffers)
                        guard reading.isClean, reading.versions.first?.id == expectedIDs[position] else {
                            throw Declined(description: "\(source.name): record \(element - source.base) is not read cleanly")
                        }
                        readings[position] = reading.versions
                    }
                }
                next = last + 1
            }
        }
        return readings
    }

    /// Each file's digests, in the order of its elements.
    func digests(of file: Int) -> [RecordDigests.Digest] {
        Array(digests[sources[file].base..<(sources[file].base + sources[file].count)])
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
