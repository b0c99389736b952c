import SnapshotFormat
import SnapshotMerge
import SyncStore

/// The files a pass reads first (they can hold any record: whole snapshots, parts of one digit),
/// opened, their record elements divided among the pass's groups of ids.
final class SpanningSources: Sendable {
    /// The files, in name order.
    let files: [OpenedSource]
    /// For each group, for each file: the indexes of its elements in the group.
    let elements: [[[Int]]]
    /// For each group, for each file: versions already read (of files read whole, and of elements
    /// whose id had to be parsed to be known), not checked yet.
    let versions: [[[ReadOnly.Version]]]
    /// For each file: what its records gave before the groups (problems of elements read early).
    let tallies: [SourceTally]

    /// Divides `opened` among the groups of `plan`; `invalid` are files known to hold an element
    /// that is not valid JSON (read whole again, for the message).
    init(_ opened: [OpenedSource], plan: ReadingPlan, reader: SourceReader, invalid: Set<String>) {
        let groupCount = plan.groups.count
        var files = opened
        var elements = [[[Int]]](repeating: Array(repeating: [], count: opened.count), count: groupCount)
        var versions = [[[ReadOnly.Version]]](repeating: Array(repeating: [], count: opened.count), count: groupCount)
        var tallies = opened.map { _ in SourceTally(now: reader.now, margin: reader.clockSkewMargin) }
        for (index, file) in opened.enumerated() {
            switch file.content {
            case .unreadable, .invalid:
                continue
            case .whole(let reading, _, _):
                tallies[index].problems = reading.problems
                for version in reading.versions { versions[plan.group(of: version.id)][index].append(version) }
            case .split(let bytes, let split, let header, let status):
                if invalid.contains(file.name) {
                    files[index].content = SourceReader.content(file.name, bytes, status).invalidIfNotValid(bytes, file.name)
                    continue
                }
                var buffers = ParserBuffers()
                for (element, id) in split.ids.enumerated() {
                    if let id {
                        elements[plan.group(of: id)][index].append(element)
                        continue
                    }
                    // Its id is not plain (escaped, or not a string): read now to know its group.
                    let reading = bytes.withUnsafeBufferPointer {
                        SnapshotReader.readElement(
                            of: UnsafeBufferPointer(rebasing: $0[split.elements[element]]), at: element, reusing: &buffers)
                    }
                    guard reading.isValidJSON else {
                        files[index].content = SourceReader.content(file.name, bytes, status).invalidIfNotValid(bytes, file.name)
                        tallies[index] = SourceTally(now: reader.now, margin: reader.clockSkewMargin)
                        for group in 0..<groupCount {
                            elements[group][index] = []
                            versions[group][index] = []
                        }
                        break
                    }
                    var early = SourceTally(now: reader.now, margin: reader.clockSkewMargin)
                    reader.take(reading.versions, problems: reading.problems, at: element, part: header.part, into: &early)
                    tallies[index].problems += early.problems
                    if let first = reading.versions.first, header.part.contains(first.id) {
                        for version in reading.versions { versions[plan.group(of: version.id)][index].append(version) }
                    }
                }
            }
        }
        self.files = files
        self.elements = elements
        self.versions = versions
        self.tallies = tallies
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
    var refused: [String] = []

    init(
        _ index: Int, plan: ReadingPlan, reader: SourceReader, spanning: SpanningSources, mergeAlone: Bool,
        mergeLimit: RecordMergeLimit,
        heldBack: [String: String], held: (PartPrefix) -> Set<ElementDigest>
    ) {
        let group = plan.groups[index]
        // A first merge reads once what several devices' parts hold alike, by id; any other pass
        // skips what the store holds by digest, and needs no ids.
        sources = reader.open(group.files, findingIDs: mergeAlone)
        let files = spanning.files + sources
        var elements = spanning.elements[index]
        var versions = spanning.versions[index]
        for source in sources {
            switch source.content {
            case .split(_, let split, _, _): elements.append(Array(split.elements.indices))
            default: elements.append([])
            }
            versions.append(source.header.map { if case .whole = source.content { $0.versions } else { [] } } ?? [])
        }
        var digests = Set<ElementDigest>()
        for range in group.heldRanges { digests.formUnion(held(range)) }
        let all = reader.readGroup(SourceReader.Group(elements: elements, versions: versions), of: files, held: digests)
        self.spanning = Array(all[..<spanning.files.count])
        tallies = Array(all[spanning.files.count...])
        for (position, source) in sources.enumerated() {
            if case .whole(let reading, _, _) = source.content { tallies[position].problems += reading.problems }
            if tallies[position].isInvalidJSON, case .split(let bytes, _, _, _) = source.content {
                sources[position].content = source.content.invalidIfNotValid(bytes, source.name)
                tallies[position] = SourceTally(now: reader.now, margin: reader.clockSkewMargin)
            }
            if let part = source.header?.part, !part.isWithin(group.prefix) { misplaced.append(source.name) }
        }
        guard mergeAlone, misplaced.isEmpty, !self.spanning.contains(where: \.isInvalidJSON) else { return }
        var incoming = IncomingVersions()
        for (position, tally) in self.spanning.enumerated() where heldBack[spanning.files[position].name] == nil {
            incoming.add(tally.versions)
        }
        for tally in tallies { incoming.add(tally.versions) }
        var merged: [(record: ReadOnly.Record, line: StoredLine)] = []
        var refused: [String] = []
        incoming.forEachRecord { _, versions in
            do throws(RecordMergeError) {
                guard let record = try RecordMerge.merge(versions, limit: mergeLimit) else { return }
                merged.append((record, StoredLine(of: record)))
            } catch {
                refused.append(error.description)
            }
        }
        self.merged = merged
        self.refused = refused
    }
}
