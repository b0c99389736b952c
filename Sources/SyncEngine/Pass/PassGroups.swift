import Dispatch
import SnapshotFormat
import SnapshotMerge
import SyncStore
import Synchronization

/// The files a pass reads first (they can hold any record: whole snapshots, parts of one digit),
/// opened, their record elements divided among the pass's groups of ids.
///
/// When they are large together (a first merge of big whole-file snapshots), their bytes are not
/// all kept: the files are opened a few at a time, and each one's elements are written to a
/// spill file in the state directory, group after group, before the next is opened; a group
/// reads its stretch back when it comes (``files(for:)``). Memory is then about one file and
/// the elements' positions, not every file (3 x 400 MB at 1,000,000 records each).
final class SpanningSources: Sendable {
    /// The files, in name order (a spilled file's bytes are not here: see ``files(for:)``).
    let files: [OpenedSource]
    /// For each group, for each file: the indexes of its elements in the group.
    let elements: [[[Int]]]
    /// For each group, for each file: versions already read (of files read whole, and of elements
    /// whose id had to be parsed to be known), not checked yet.
    let versions: [[[ReadOnly.Version]]]
    /// For each file: what its records gave before the groups (problems of elements read early).
    let tallies: [SourceTally]
    /// For each spilled file: where each group's elements are in the spill file.
    private let chunks: [[(offset: Int, count: Int)]?]
    private let spill: SpillFile?

    /// Opens `listed` and divides their elements among the groups of `plan`; `invalid` are files
    /// known to hold an element that is not valid JSON (read whole again, for the message).
    ///
    /// - Parameters:
    ///   - inMemoryBytes: the files' bytes above which their elements go to a spill file (files
    ///     are then opened half as many bytes at a time, one file at least).
    ///   - spillDirectory: where the spill file goes.
    init(
        opening listed: [ReadingPlan.File], plan: ReadingPlan, reader: SourceReader, invalid: Set<String>,
        inMemoryBytes: Int64, spillDirectory: String
    ) {
        let totalBytes = listed.reduce(Int64(0)) { $0 + $1.status.size }
        let spill = totalBytes > inMemoryBytes ? try? SpillFile(in: spillDirectory) : nil
        var batches: [[ReadingPlan.File]] = spill == nil ? [listed] : []
        if spill != nil {
            var bytes: Int64 = 0
            for file in listed {
                if batches.isEmpty || bytes + file.status.size > inMemoryBytes / 2 {
                    batches.append([])
                    bytes = 0
                }
                batches[batches.count - 1].append(file)
                bytes += file.status.size
            }
        }
        var files: [OpenedSource] = []
        var divided: [Divided] = []
        var chunks: [[(offset: Int, count: Int)]?] = []
        var spillSize = 0
        for batch in batches {
            // Each file divided on a core of its own (the pass's thread did it alone: 10 ms of a
            // first merge of 3 × 100,000 small records, with the other core idle).
            let opened = reader.open(batch)
            let dividing = Mutex([(file: OpenedSource, parts: Divided)?](repeating: nil, count: opened.count))
            DispatchQueue.concurrentPerform(iterations: opened.count) { index in
                var file = opened[index]
                let parts = Divided(&file, groups: plan.groups.count, plan: plan, reader: reader, invalid: invalid)
                dividing.withLock { $0[index] = (file, parts) }
            }
            for (file, parts) in dividing.withLock({ $0.map { $0! } }) {
                var file = file
                var fileChunks: [(offset: Int, count: Int)]?
                if let spill, case .split(let bytes, let split, let header, let status) = file.content {
                    fileChunks = Self.write(bytes, split, parts.elements, to: spill, at: &spillSize)
                    if let fileChunks {
                        // Each element now lies in its group's stretch, in the order written.
                        var relative = [Range<Int>](repeating: 0..<0, count: split.elements.count)
                        for (group, elements) in parts.elements.enumerated() {
                            var position = 0
                            for element in elements {
                                relative[element] = position..<(position + split.elements[element].count)
                                position += split.elements[element].count
                            }
                            assert(position == fileChunks[group].count)
                        }
                        file.content = .split([], split.relocated(to: relative), header: header, status)
                    }
                }
                files.append(file)
                divided.append(parts)
                chunks.append(fileChunks)
            }
        }
        self.files = files
        self.spill = spill
        self.chunks = chunks
        elements = (0..<plan.groups.count).map { group in divided.map { $0.elements[group] } }
        versions = (0..<plan.groups.count).map { group in divided.map { $0.versions[group] } }
        tallies = divided.map(\.tally)
    }

    /// The files as group `group` reads them: a spilled file with that group's elements read back.
    func files(for group: Int) throws(SystemCallError) -> [OpenedSource] {
        guard let spill else { return files }
        var result: [OpenedSource] = []
        for (file, fileChunks) in zip(files, chunks) {
            guard let fileChunks, case .split(_, let split, let header, let status) = file.content else {
                result.append(file)
                continue
            }
            let chunk = fileChunks[group]
            var copy = file
            copy.content = .split(
                chunk.count == 0 ? [] : try spill.read(count: chunk.count, at: chunk.offset), split, header: header, status)
            result.append(copy)
        }
        return result
    }

    /// Writes a file's elements to `spill`, group after group (one write per group); where each
    /// group's stretch is, or nil when the spill file cannot be written (the bytes stay in memory).
    private static func write(
        _ bytes: [UInt8], _ split: SplitSnapshot, _ elements: [[Int]], to spill: SpillFile, at size: inout Int
    ) -> [(offset: Int, count: Int)]? {
        var chunks: [(offset: Int, count: Int)] = []
        var chunk: [UInt8] = []
        let start = size
        for groupElements in elements {
            chunk.removeAll(keepingCapacity: true)
            for element in groupElements { chunk += bytes[split.elements[element]] }
            do {
                let offset = size
                try chunk.withUnsafeBytes { try spill.write($0, at: offset) }
            } catch {
                size = start
                return nil
            }
            chunks.append((size, chunk.count))
            size += chunk.count
        }
        return chunks
    }

    /// One file's elements divided among the groups.
    private struct Divided {
        var elements: [[Int]]
        var versions: [[ReadOnly.Version]]
        var tally: SourceTally

        init(_ file: inout OpenedSource, groups groupCount: Int, plan: ReadingPlan, reader: SourceReader, invalid: Set<String>) {
            elements = Array(repeating: [], count: groupCount)
            versions = Array(repeating: [], count: groupCount)
            tally = SourceTally(now: reader.now, margin: reader.clockSkewMargin)
            switch file.content {
            case .unreadable, .invalid:
                return
            case .whole(let reading, _, _):
                tally.problems = reading.problems
                for version in reading.versions { versions[plan.group(of: version.id)].append(version) }
            case .split(let bytes, let split, let header, let status):
                if invalid.contains(file.name) {
                    file.content = SourceReader.content(file.name, bytes, status).invalidIfNotValid(bytes, file.name)
                    return
                }
                var buffers = ParserBuffers()
                for (element, id) in split.ids.enumerated() {
                    if let id {
                        elements[plan.group(of: id)].append(element)
                        continue
                    }
                    // Its id is not plain (escaped, or not a string): read now to know its group.
                    let reading = bytes.withUnsafeBufferPointer {
                        SnapshotReader.readElement(
                            of: UnsafeBufferPointer(rebasing: $0[split.elements[element]]), at: element, reusing: &buffers)
                    }
                    guard reading.isValidJSON else {
                        file.content = SourceReader.content(file.name, bytes, status).invalidIfNotValid(bytes, file.name)
                        tally = SourceTally(now: reader.now, margin: reader.clockSkewMargin)
                        elements = Array(repeating: [], count: groupCount)
                        versions = Array(repeating: [], count: groupCount)
                        return
                    }
                    var early = SourceTally(now: reader.now, margin: reader.clockSkewMargin)
                    reader.take(reading.versions, problems: reading.problems, at: element, part: header.part, into: &early)
                    tally.problems += early.problems
                    if let first = reading.versions.first, header.part.contains(first.id) {
                        for version in reading.versions { versions[plan.group(of: version.id)].append(version) }
                    }
                }
            }
        }
    }
}

extension OpenedSource.Content {
    /// The content of a file known to hold an element that is not valid JSON: what the plain
    /// path says of it (it names the element and the reason).
    func invalidIfNotValid(_ bytes: [UInt8], _ name: String) -> OpenedSource.Content {
        guard case .split(_, _, _, let status) = self else { return self }
        do throws(SnapshotFileProblem) {
            _ = try SnapshotReader.read(bytes: bytes, fileName: name)
            return self
        } catch {
            return .invalid(error, status)
        }
    }
}

/// One group of a pass, read (and, for a first merge, merged) on another thread ahead of the
/// transaction: the records of the files read first that fall in the group, and the group's own
/// parts, opened and read now.
struct GroupRead: Sendable {
    /// For each file read first: what its records in this group gave.
    var spanning: [SourceTally]
    /// The group's own files.
    var sources: [OpenedSource]
    /// What each of them gave.
    var tallies: [SourceTally]
    /// The records merged from the files alone (a first merge), with their lines.
    var merged: [(record: ReadOnly.Record, line: StoredLine)]?
    /// Files named like a part of this group that hold records of other groups.
    var misplaced: [String] = []
    /// Records a first merge refused (too entangled to merge), with the reason.
    var refused: [(id: RecordID, reason: String)] = []
    /// Why the group could not be read (its stretch of the spill file): the pass fails.
    var failure: SystemCallError?

    init(
        _ index: Int, plan: ReadingPlan, reader: SourceReader, spanning: SpanningSources, mergeAlone: Bool,
        mergeLimit: RecordMergeLimit,
        heldBack: [String: String], held: (PartPrefix) -> Set<ElementDigest>, merged: Set<ElementDigest> = []
    ) {
        let group = plan.groups[index]
        // A first merge reads once what several devices' parts hold alike, by id; any other pass
        // skips what the store holds by digest, and needs no ids.
        sources = reader.open(group.files, findingIDs: mergeAlone)
        let spanningFiles: [OpenedSource]
        do throws(SystemCallError) {
            spanningFiles = try spanning.files(for: index)
        } catch {
            (failure, self.spanning, tallies) = (error, [], [])
            return
        }
        let files = spanningFiles + sources
        var elements = spanning.elements[index]
        var versions = spanning.versions[index]
        // By index, here and below: `for source in sources` copies each file's reading.
        for position in sources.indices {
            switch sources[position].content {
            case .split(_, let split, _, _):
                elements.append(Array(split.elements.indices))
                versions.append([])
            case .whole(let reading, _, _):
                elements.append([])
                versions.append(reading.versions)
            case .unreadable, .invalid:
                elements.append([])
                versions.append([])
            }
        }
        var digests = Set<ElementDigest>()
        for range in group.heldRanges { digests.formUnion(held(range)) }
        let reading = reader.readGroup(
            SourceReader.Group(elements: elements, versions: versions), of: files, held: digests, merged: merged)
        // Each file's tally, as `files` lists them: the files read first, then the group's own.
        // Kept in one array until the end, and read by index (copying a tally retains its arrays).
        var all = reading.tallies
        let ownFirst = spanning.files.count
        for position in sources.indices {
            let index = ownFirst + position
            if case .whole(let reading, _, _) = sources[position].content { all[index].problems += reading.problems }
            if all[index].isInvalidJSON, case .split(let bytes, _, _, _) = sources[position].content {
                sources[position].content = sources[position].content.invalidIfNotValid(bytes, sources[position].name)
                all[index] = SourceTally(now: reader.now, margin: reader.clockSkewMargin)
            }
            if let part = sources[position].header?.part, !part.isWithin(group.prefix) {
                misplaced.append(sources[position].name)
            }
        }
        if mergeAlone, misplaced.isEmpty, !all[..<ownFirst].contains(where: \.isInvalidJSON) {
            var incoming = IncomingVersions()
            for index in all.indices where index >= ownFirst || heldBack[spanning.files[index].name] == nil {
                incoming.add(all[index].versions)
            }
            var merged: [(record: ReadOnly.Record, line: StoredLine)] = []
            var refused: [(id: RecordID, reason: String)] = []
            incoming.forEachRecord { id, versions in
                do throws(RecordMergeError) {
                    guard let record = try RecordMerge.merge(versions, limit: mergeLimit) else { return }
                    merged.append((record, StoredLine(of: record)))
                } catch {
                    refused.append((id, error.description))
                }
            }
            // Which of the parts' elements are not their record's line, now that the lines are known.
            reader.keepElementsOtherThanLines(reading.awaitingLines, of: files, lines: merged, into: &all)
            self.merged = merged
            self.refused = refused
        }
        self.spanning = Array(all[..<ownFirst])
        tallies = Array(all[ownFirst...])
    }
}
