import Foundation
import RecordSchemas
import SnapshotFormat
import SnapshotMerge
import SyncStore
import Synchronization

/// A first merge (the store holds no record) of files too large to hold at once: each file is
/// indexed through a window (its elements' places and ids, ``SnapshotIndex``), then the
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
        var index: SnapshotIndex
        /// Each element's digest, by its index.
        var digests: [RecordDigests.Digest]
        /// The elements in id order (their indexes), nil when the file has them in that order.
        var order: [Int32]?
        /// Its header, `writtenAt` warning and record count (no versions).
        var topLevel: SnapshotReading

        /// The element at `position` in id order.
        func element(at position: Int) -> Int { order.map { Int($0[position]) } ?? position }
    }

    /// What a file's versions gave, gathered round by round.
    struct Facts: Sendable {
        var futureDates: FutureDates
        /// Versions whose schemaVersion is newer than the schema files declare.
        var newerSchemas = 0
    }

    let sources: [Source]
    /// Per round, per file: the positions (in the file's id order) it takes.
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
        let facts = sources.map { _ in Facts(futureDates: FutureDates(now: now, margin: clockSkewMargin)) }
        return .success(StreamedFirstMerge(sources: sources, rounds: plan(sources), facts: facts, schemas: schemas))
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
        var digests: [RecordDigests.Digest] = []
        let index = SnapshotReader.index(
            read: { buffer, offset in try? SystemCalls.readAt(descriptor, into: buffer, at: offset, path: path) },
            observing: { _, element in digests.append(RecordDigests.digest(of: element)) })
        guard let index else { return declined("not a snapshot whose records are objects with ids") }
        // A file written by SnapshotSync is in id order already; any other is sorted here.
        var order: [Int32]?
        if !index.isSorted {
            let ids = index.ids
            var sorted = Array(Int32(0)..<Int32(ids.count))
            sorted.sort { ids[Int($0)] < ids[Int($1)] }
            for (earlier, later) in zip(sorted, sorted.dropFirst()) where ids[Int(earlier)] == ids[Int(later)] {
                return declined("record \(ids[Int(later)]) is there twice")
            }
            order = sorted
        }
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
            Source(
                name: name, path: path, descriptor: descriptor, status: status, index: index, digests: digests, order: order,
                topLevel: topLevel))
    }

    /// The rounds: every record's elements, in id order across the files, `roundSize` records a round.
    private static func plan(_ sources: [Source]) -> [[Range<Int>]] {
        var heads = sources.map { _ in 0 }
        var starts = heads
        var rounds: [[Range<Int>]] = []
        var records = 0
        let ends = sources.map(\.index.ids.count)
        while let id = smallestID(sources, heads: heads, ends: ends) {
            for (file, source) in sources.enumerated()
            where heads[file] < source.index.ids.count && source.index.ids[source.element(at: heads[file])] == id {
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

    /// The smallest id at the files' heads (positions in id order, before `ends`); nil when every file is done.
    private static func smallestID(_ sources: [Source], heads: [Int], ends: [Int]) -> RecordID? {
        var smallest: RecordID?
        for (file, source) in sources.enumerated() where heads[file] < ends[file] {
            let id = source.index.ids[source.element(at: heads[file])]
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

    /// Reads and merges one round's records, in id order.
    private func merge(round: Int) throws -> [MergedAlone.Merged] {
        let ranges = rounds[round]
        // First the round's records: each one's elements (file, element), and which of them to
        // read: an element with the same bytes as an earlier one of its record is read once.
        var members: [(file: Int, element: Int, reading: Int)] = []
        var recordEnds: [Int] = []
        var toRead: [(file: Int, element: Int)] = []
        var heads = ranges.map(\.lowerBound)
        let ends = ranges.map(\.upperBound)
        while let id = Self.smallestID(sources, heads: heads, ends: ends) {
            let first = members.count
            for (file, source) in sources.enumerated() where heads[file] < ranges[file].upperBound {
                let element = source.element(at: heads[file])
                guard source.index.ids[element] == id else { continue }
                heads[file] += 1
                let digest = source.digests[element]
                if let same = members[first...].first(where: { sources[$0.file].digests[$0.element] == digest }) {
                    members.append((file, element, same.reading))
                } else {
                    members.append((file, element, toRead.count))
                    toRead.append((file, element))
                }
            }
            recordEnds.append(members.count)
        }
        let readings = try read(toRead)
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
                // Only the first element of a reading adds its versions (later ones are copies).
                if toRead[member.reading] == (member.file, member.element) { versions += elementVersions }
                let name = sources[member.file].name
                for version in elementVersions {
                    if schemas.violation(of: version) != nil {
                        throw Declined(description: "\(name): record \(version.id) does not fit its schema")
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

    /// Reads `elements` (each a file and an element): their versions, in the same order. Each
    /// file's elements are read in the order of their offsets, neighbours together, so a file in
    /// id order is read in one stretch per round.
    private func read(_ elements: [(file: Int, element: Int)]) throws -> [[ReadOnly.Version]] {
        var readings = [[ReadOnly.Version]](repeating: [], count: elements.count)
        var buffers = ParserBuffers()
        // Bytes between two elements read in one piece rather than apart.
        let gap = 16 << 10
        for (file, source) in sources.enumerated() {
            let wanted = elements.indices.filter { elements[$0].file == file }.sorted {
                elements[$0].element < elements[$1].element
            }
            var next = 0
            while next < wanted.count {
                // A piece: the next elements no more than `gap` apart.
                var last = next
                while last + 1 < wanted.count,
                    source.index.split.elements[elements[wanted[last + 1]].element].lowerBound
                        - source.index.split.elements[elements[wanted[last]].element].upperBound <= gap,
                    source.index.split.elements[elements[wanted[last + 1]].element].upperBound
                        - source.index.split.elements[elements[wanted[next]].element].lowerBound <= 8 << 20
                {
                    last += 1
                }
                let pieceStart = source.index.split.elements[elements[wanted[next]].element].lowerBound
                let pieceEnd = source.index.split.elements[elements[wanted[last]].element].upperBound
                let bytes: [UInt8]
                do {
                    bytes = try SystemCalls.readAt(source.descriptor, count: pieceEnd - pieceStart, at: pieceStart, path: source.path)
                } catch {
                    throw Declined(description: "\(source.name): \(error)")
                }
                try bytes.withUnsafeBufferPointer { bytes in
                    for wantedIndex in wanted[next...last] {
                        let element = elements[wantedIndex].element
                        let place = source.index.split.elements[element]
                        let reading = SnapshotReader.readElement(
                            of: UnsafeBufferPointer(rebasing: bytes[(place.lowerBound - pieceStart)..<(place.upperBound - pieceStart)]),
                            at: element, reusing: &buffers)
                        guard reading.isClean, reading.versions.first?.id == source.index.ids[element] else {
                            throw Declined(description: "\(source.name): record \(element) is not read cleanly")
                        }
                        readings[wantedIndex] = reading.versions
                    }
                }
                next = last + 1
            }
        }
        return readings
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
