import CInotifyTools
import Crypto
import Dispatch
import Glibc
import RecordSchemas
import SnapshotFormat
import SyncStore
import Synchronization

/// A changed file of the shared folder, opened by a pass: its top level read and its record
/// elements found (each with its id), none of them parsed yet.
struct OpenedSource: Sendable {
    /// The file's name in the folder.
    var name: String
    /// Its status when listed.
    var listed: FileStatus
    var content: Content
    /// For a file of this device (its own name, or a copy), what the pass needs to know of it as
    /// a whole, found while its bytes were at hand.
    var own: OwnFileFacts? = nil

    enum Content: Sendable {
        /// The file could not be read at all.
        case unreadable(SnapshotFileReadError)
        /// The file was read but is not a snapshot this device may merge.
        case invalid(SnapshotFileProblem, FileStatus)
        /// Its elements found, their ids where plain; `header` is the reading of its top level.
        case split([UInt8], SplitSnapshot, header: SnapshotReading, FileStatus)
        /// Read whole by the reader's plain path (its top level is of an unusual shape).
        case whole(SnapshotReading, bytes: [UInt8], FileStatus)
    }

    /// The status of the very file read, when it was opened.
    var status: FileStatus {
        switch content {
        case .unreadable: listed
        case .invalid(_, let status), .split(_, _, _, let status), .whole(_, _, let status): status
        }
    }

    /// The top level, when the file is a snapshot to merge.
    var header: SnapshotReading? {
        switch content {
        case .unreadable, .invalid: nil
        case .split(_, _, let header, _): header
        case .whole(let reading, _, _): reading
        }
    }
}

/// What a pass knows of a file under this device's name: whether it is one this device wrote,
/// and whether its content may be adopted.
struct OwnFileFacts: Sendable {
    /// Its digest as this device keeps it of a file it writes (``PublishedLayout/fileDigest(of:)``),
    /// or the SHA-256 of its bytes for a file of another layout.
    var fileDigest: String
    /// SHA-256 (hex) of its records' line digests, when it has the layout SnapshotSync writes.
    var recordsDigest: String?
    /// Whether it carries a valid signature by this device's current key.
    var isSignedWithOwnKey: Bool

    init(_ reading: SnapshotReading, bytes: [UInt8], ownKey: PublicKey) {
        let digests = PublishedLayout.digests(of: bytes)
        fileDigest = digests?.file ?? SHA256.hash(data: bytes).hexString
        recordsDigest = digests?.records
        isSignedWithOwnKey =
            reading.key == ownKey
            && reading.signature.map { signature in bytes.withUnsafeBytes { ownKey.verifies(signature, of: $0) } }
                == true
    }
}

/// A record element's digest: the first 16 bytes of the SHA-256 of its bytes. For a line this
/// device publishes (``SyncStore/LineDigest``), element and line digests are equal.
struct ElementDigest: Hashable, Sendable {
    var high: UInt64
    var low: UInt64

    init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    init(of bytes: UnsafeRawBufferPointer) {
        let hash = SHA256.hash(data: bytes)
        (high, low) = hash.withUnsafeBytes {
            ($0.loadUnaligned(fromByteOffset: 0, as: UInt64.self), $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        }
    }

    /// A digest as the store keeps it: 16 bytes (a line's digest, or a merged element's).
    init(stored bytes: UnsafeRawBufferPointer) {
        high = bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self)
        low = bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
    }

    /// Appends its 16 bytes as the store keeps them (``init(stored:)`` reads them back).
    func appendStored(to bytes: inout [UInt8]) {
        withUnsafeBytes(of: (high, low)) { bytes += $0 }
    }

    // Already uniform: its first half is hash enough (a Dictionary of digests hashes each once).
    func hash(into hasher: inout Hasher) { hasher.combine(high) }
}

/// An element whose versions merged, as a file's tally keeps it (``SourceTally/mergedElements``).
struct MergedElement: Sendable {
    var digest: ElementDigest
    /// Its record, when the element was parsed at this read (nil for one skipped as merged
    /// before): should the merge refuse that record, the digest is not kept, so that the file's
    /// next change refuses it again rather than skip it.
    var record: RecordID?
}

/// What the records of one file gave in one group of a pass: the versions to merge and what was
/// wrong with some. A file's tallies over every group make its outcome.
struct SourceTally: Sendable {
    /// The versions to merge: valid, in their part, fitting their schema.
    var versions: [ReadOnly.Version] = []
    /// Records rejected on their own.
    var problems: [RecordProblem] = []
    /// Versions that do not fit their schema, each with why.
    var schemaProblems: [String] = []
    /// Versions whose schema version is newer than the schema files declare.
    var newerSchemas = 0
    /// Versions dated in this device's future.
    var futureDates: FutureDates
    /// Whether a record element is not valid JSON: the whole file is not merged.
    var isInvalidJSON = false
    /// For a whole snapshot: the digests of its elements whose every version was taken (or that
    /// were known merged and skipped), kept by the store once the file merges
    /// (``StoreSession/saveMergedElements(_:of:)``), so that its next change reads only the
    /// elements that differ. For a part read by digest: those of them that are not a line the
    /// store holds.
    var mergedElements: [MergedElement] = []
    /// Whether a part was read by digest (``mergedElements`` then replaces what the store kept).
    var readByDigest = false

    init(now: Timestamp, margin: Int64) {
        futureDates = FutureDates(now: now, margin: margin)
    }

    /// Adds another group's tally of the same file.
    mutating func add(_ other: SourceTally) {
        problems += other.problems
        schemaProblems += other.schemaProblems
        newerSchemas += other.newerSchemas
        futureDates.add(other.futureDates)
        isInvalidJSON = isInvalidJSON || other.isInvalidJSON
        mergedElements += other.mergedElements
        readByDigest = readByDigest || other.readByDigest
    }
}

/// The bytes of a split file's elements, by index, lent to a closure: the file's bytes are an
/// array, whose storage a pointer may not outlive the `withUnsafeBytes` call that made it.
private struct ElementBytes {
    private let bytes: [UInt8]
    private let ranges: [Range<Int>]

    init(_ file: OpenedSource) {
        guard case .split(let bytes, let split, _, _) = file.content else {
            self.bytes = []
            ranges = []
            return
        }
        self.bytes = bytes
        ranges = split.elements
    }

    /// Calls `body` with the bytes of element `element`.
    func with<Result>(_ element: Int, _ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try bytes.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[ranges[element]])) }
    }

    /// The digest of element `element`.
    func digest(_ element: Int) -> ElementDigest { with(element) { ElementDigest(of: $0) } }

    /// Asks the CPU to bring the beginning of element `element` into its cache.
    func prefetch(_ element: Int) {
        with(element) { snapshotsync_prefetch($0.baseAddress) }
    }
}

/// How a pass reads its changed files (the speed of a pass lives here).
///
/// Opening a file reads it whole and finds its top level and its record elements with their ids
/// (``SnapshotReader/split(_:)``), on every core. The records are then read one group of ids at
/// a time (``readGroup(_:)``): each element digested; skipped when the store holds it line for
/// line (its digest is a stored line's: merging it changes nothing); read once when several
/// files hold the same bytes (devices in step hold most records byte for byte); the rest parsed.
/// A file whose top level is of an unusual shape is read whole by the reader's plain path, which
/// also gives the messages of a file that is not valid JSON.
struct SourceReader: Sendable {
    let folder: SharedFolder
    let device: DeviceID
    let readLimits: ReadLimits
    let schemas: SchemaSet
    let now: Timestamp
    let clockSkewMargin: Int64
    /// Whose files may merge (when this device trusts any: only signed ones).
    let trust: TrustList
    /// The key this device signs with.
    let ownKey: PublicKey

    /// Opens `files`, on every core, in order.
    ///
    /// - Parameter findingIDs: find each element's id (files read first need them to divide
    ///   their records among groups; a first merge, to read once what several files hold).
    func open(_ files: [(name: String, status: FileStatus)], findingIDs: Bool = true) -> [OpenedSource] {
        // Read every file, and find where each big one can be cut for two readers. A few large
        // files (fewer than two a core, 8 MiB or more each) are read one after the other, each in
        // a piece per core, so that no core waits while another reads the last file (three files
        // on two cores left one idle for a file's read); others, a file per core at a time.
        let cores = SystemCalls.processorsOnline
        let fewAndLarge = files.count < 2 * cores && files.allSatisfy { $0.status.size >= 8 << 20 }
        let pieces = fewAndLarge ? cores : 1
        let reads = Mutex([FileRead?](repeating: nil, count: files.count))
        let readOne = { @Sendable (index: Int) in
            let read: FileRead
            do throws(SnapshotFileReadError) {
                let (bytes, status) = try folder.readSnapshotBytes(
                    files[index].name, limit: readLimits.of(files[index].name), pieces: pieces, forMerging: true)
                let halves = findingIDs ? bytes.withUnsafeBufferPointer { RecordsHalves.find(in: $0) } : nil
                read = .read(bytes, status, halves)
            } catch {
                read = .unreadable(error)
            }
            reads.withLock { $0[index] = read }
        }
        if pieces > 1 {
            files.indices.forEach(readOne)
        } else {
            DispatchQueue.concurrentPerform(iterations: files.count, execute: readOne)
        }
        let read = reads.withLock { $0.map { $0! } }
        // Find the elements of every half at once: three files on two cores no longer leave one
        // core waiting while the other finds the third file's elements.
        let halves = read.indices.flatMap { index -> [(file: Int, second: Bool)] in
            guard case .read(_, _, _?) = read[index] else { return [] }
            return [(index, false), (index, true)]
        }
        let found = Mutex([RecordsHalves.ElementsFound?](repeating: nil, count: halves.count))
        DispatchQueue.concurrentPerform(iterations: halves.count) { task in
            guard case .read(let bytes, _, let cut?) = read[halves[task].file] else { return }
            let elements = bytes.withUnsafeBufferPointer {
                halves[task].second ? cut.secondHalf(of: $0) : cut.firstHalf(of: $0)
            }
            found.withLock { $0[task] = elements }
        }
        let foundElements = found.withLock { $0 }
        // Where each file's halves are in `foundElements`.
        var firstHalf = [Int?](repeating: nil, count: files.count)
        for task in stride(from: 0, to: halves.count, by: 2) { firstHalf[halves[task].file] = task }
        let opened = Mutex([OpenedSource?](repeating: nil, count: files.count))
        DispatchQueue.concurrentPerform(iterations: files.count) { [firstHalf] index in
            // The halves joined here, on every core: one after the other, the copies took a
            // first merge of 3 × 100,000 small records 8 ms with the other core idle.
            var joined: (arrayOpen: Int, elements: RecordsHalves.ElementsFound)?
            if let task = firstHalf[index], case .read(_, _, let cut?) = read[index],
                let elements = cut.joined(foundElements[task], foundElements[task + 1])
            {
                joined = (cut.arrayOpen, elements)
            }
            let file = open(
                files[index].name, listed: files[index].status, read[index], found: joined, findingIDs: findingIDs)
            opened.withLock { $0[index] = file }
        }
        // Moved out, not copied: a copy retains every array and string a file's reading holds,
        // and a first merge of many small parts opens tens of thousands of files.
        return opened.withLock { opened in opened.indices.map { opened[$0].take()! } }
    }

    /// A file as read: its bytes and where it can be cut in two, or why it could not be read.
    private enum FileRead: Sendable {
        case read([UInt8], FileStatus, RecordsHalves?)
        case unreadable(SnapshotFileReadError)
    }

    private func open(
        _ name: String, listed: FileStatus, _ fileRead: FileRead,
        found: (arrayOpen: Int, elements: RecordsHalves.ElementsFound)?, findingIDs: Bool
    ) -> OpenedSource {
        let read: (bytes: [UInt8], status: FileStatus)
        switch fileRead {
        case .read(let bytes, let status, _): read = (bytes, status)
        case .unreadable(let error): return OpenedSource(name: name, listed: listed, content: .unreadable(error))
        }
        var opened = OpenedSource(
            name: name, listed: listed,
            content: Self.content(name, read.bytes, read.status, findingIDs: findingIDs, found: found))
        guard let header = opened.header else { return opened }
        if let rejection = trust.rejection(of: header, bytes: read.bytes) {
            opened.content = .invalid(.untrusted(device: header.device, reason: rejection), read.status)
        } else if header.device == device {
            opened.own = OwnFileFacts(header, bytes: read.bytes, ownKey: ownKey)
        }
        return opened
    }

    /// A file's content: split, or else read whole by the plain path (which says what is wrong).
    static func content(
        _ name: String, _ bytes: [UInt8], _ status: FileStatus, findingIDs: Bool = true,
        found: (arrayOpen: Int, elements: RecordsHalves.ElementsFound)? = nil
    ) -> OpenedSource.Content {
        if let split = SnapshotReader.split(bytes, findingIDs: findingIDs, found: found) {
            do throws(SnapshotFileProblem) {
                return .split(bytes, split, header: try SnapshotReader.topLevel(of: split, fileName: name), status)
            } catch {
                return .invalid(error, status)
            }
        }
        do throws(SnapshotFileProblem) {
            return .whole(try SnapshotReader.read(bytes: bytes, fileName: name), bytes: bytes, status)
        } catch {
            return .invalid(error, status)
        }
    }

    /// The records of one group: elements of opened files, identified by file and index.
    struct Group: Sendable {
        /// For each file of the pass (by index), the indexes of its elements in this group.
        var elements: [[Int]]
        /// Versions already read (files read whole, elements whose id had to be parsed to be
        /// known), by file index.
        var versions: [[ReadOnly.Version]]
    }

    /// Reads the records of `group` from `files`: digests, skips, shares, parses, and checks them.
    ///
    /// - Parameters:
    ///   - held: digests of the lines the store holds for these records; elements with one are
    ///     skipped.
    ///   - merged: digests of elements the files held when they last merged
    ///     (``SourceTally/mergedElements``); elements with one are skipped too: their versions
    ///     are in the store already.
    /// - Returns: one tally per file (by index).
    func readGroup(
        _ group: Group, of files: [OpenedSource], held: Set<ElementDigest>, merged: Set<ElementDigest> = []
    ) -> GroupReading {
        var tallies = files.map { _ in SourceTally(now: now, margin: clockSkewMargin) }
        var awaiting = ElementsAwaitingLines()
        // Per file, per element of the group: skipped (``skippedAsHeld``, ``skippedAsMerged``),
        // else the index of its reading in `toParse`.
        let (plans, toParse, digests) =
            held.isEmpty && merged.isEmpty
            ? planByID(group, of: files) : planByDigest(group, of: files, held: held, merged: merged)
        var buffers = ParserBuffers()
        let bytesOf = files.map(ElementBytes.init)
        let parsed = toParse.indices.map { index -> ElementReading in
            // The next element's first bytes, fetched while this one is parsed: the first load of
            // each element was a cache miss.
            if index + 1 < toParse.count { bytesOf[toParse[index + 1].file].prefetch(toParse[index + 1].element) }
            let item = toParse[index]
            return bytesOf[item.file].with(item.element) {
                SnapshotReader.readElement(
                    of: $0.assumingMemoryBound(to: UInt8.self), at: item.element, reusing: &buffers)
            }
        }
        // Elements that share a reading share their bytes, so their digest too (devices in step
        // often hold a record byte for byte alike: a first merge then hashes it once, not per file).
        var digestOfReading = [ElementDigest?](repeating: nil, count: toParse.count)
        for (fileIndex, elements) in group.elements.enumerated() where !elements.isEmpty {
            guard let part = files[fileIndex].header?.part else { continue }
            // A whole snapshot keeps the digests of the elements it merged. A part, read by
            // digest, keeps those of the elements that are not a line the store holds: a peer in
            // step publishes the store's own lines, which `held` has, but a peer not in step, or
            // another writer, holds other versions, which its next change would parse and merge
            // again (at 1,000,000 records, a sixth of a part of the benchmark's peers). A first
            // merge reads parts by id, without digests: which of their elements are not a line
            // is known once the group's records are merged (``ElementsAwaitingLines``).
            let keepsMerged = part == .whole
            let keepsUnheld = part != .whole && digests != nil
            let awaitsLines = part != .whole && digests == nil
            if keepsUnheld { tallies[fileIndex].readByDigest = true }
            for (position, (element, plan)) in zip(elements, plans[fileIndex]).enumerated() {
                let digest = {
                    if let known = digests?[fileIndex][position] { return known }
                    guard plan >= 0 else { return bytesOf[fileIndex].digest(element) }
                    if let known = digestOfReading[plan] { return known }
                    let computed = bytesOf[fileIndex].digest(element)
                    digestOfReading[plan] = computed
                    return computed
                }
                guard plan >= 0 else {
                    if keepsMerged || (keepsUnheld && plan == Self.skippedAsMerged) {
                        tallies[fileIndex].mergedElements.append(MergedElement(digest: digest(), record: nil))
                    }
                    continue
                }
                let reading = parsed[plan]
                guard reading.isValidJSON else {
                    tallies[fileIndex].isInvalidJSON = true
                    awaiting.elements.removeAll { $0.file == fileIndex }
                    break
                }
                let before = (tallies[fileIndex].versions.count, tallies[fileIndex].problems.count)
                take(reading.versions, problems: reading.problems, at: element, part: part, into: &tallies[fileIndex])
                // Merged only when every version was taken: one rejected, or not fitting its
                // schema, is read again (and reported) when the file next changes.
                guard tallies[fileIndex].problems.count == before.1,
                    tallies[fileIndex].versions.count == before.0 + reading.versions.count
                else { continue }
                if keepsMerged || keepsUnheld {
                    tallies[fileIndex].mergedElements.append(
                        MergedElement(digest: digest(), record: reading.versions.first?.id))
                } else if awaitsLines, let id = reading.versions.first?.id {
                    awaiting.elements.append((fileIndex, id, plan))
                }
            }
        }
        for (fileIndex, versions) in group.versions.enumerated() {
            for version in versions { check(version, into: &tallies[fileIndex]) }
        }
        if !awaiting.elements.isEmpty { awaiting.readings = toParse }
        return GroupReading(tallies: tallies, awaitingLines: awaiting)
    }

    /// What ``readGroup(_:of:held:merged:)`` gives: one tally per file (by index), and the
    /// elements of parts read by id that wait for their records' lines.
    struct GroupReading {
        var tallies: [SourceTally]
        var awaitingLines: ElementsAwaitingLines
    }

    /// The elements of parts a first merge read by id, without digests, whose every version was
    /// taken. Once the group's records are merged, those that are not their record's line byte for
    /// byte (a version that lost, or another writer's spelling) are digested and kept as merged
    /// (``keepElementsOtherThanLines(_:of:lines:into:)``), so that the part's first change reads
    /// what changed only, as its later changes do; those that are their record's line are lines
    /// the store holds, which a read by digest skips anyway.
    struct ElementsAwaitingLines {
        /// File (by index), record, and the index of the element's reading in `readings`.
        var elements: [(file: Int, id: RecordID, reading: Int)] = []
        /// Each reading's element (elements that share a reading hold the same bytes).
        var readings: [(file: Int, element: Int)] = []
    }

    /// Keeps as merged the elements of `awaiting` that are not their record's line in `lines`
    /// (the group's records merged, in id order), in their files' tallies (by file index).
    func keepElementsOtherThanLines(
        _ awaiting: ElementsAwaitingLines, of files: [OpenedSource],
        lines: [(record: ReadOnly.Record, line: StoredLine)],
        into tallies: inout [SourceTally]
    ) {
        guard !awaiting.elements.isEmpty else { return }
        let bytesOf = files.map(ElementBytes.init)
        // Each reading compared once, however many files hold its bytes.
        var outcome = [LineComparison](repeating: .notCompared, count: awaiting.readings.count)
        for (file, id, reading) in awaiting.elements {
            tallies[file].readByDigest = true
            if case .notCompared = outcome[reading] {
                let source = awaiting.readings[reading]
                outcome[reading] = bytesOf[source.file].with(source.element) { bytes in
                    let isLine =
                        Self.lineIndex(of: id, in: lines).map { index in
                            lines[index].line.line.withUnsafeBytes { Self.equal($0, bytes) }
                        } ?? false
                    return isLine ? .isLine : .differs(ElementDigest(of: bytes))
                }
            }
            if case .differs(let digest) = outcome[reading] {
                tallies[file].mergedElements.append(MergedElement(digest: digest, record: id))
            }
        }
    }

    /// An awaiting element's bytes against its record's line.
    private enum LineComparison {
        case notCompared
        /// The line byte for byte: a read by digest skips it as held.
        case isLine
        /// Another version or spelling: kept as merged, by this digest.
        case differs(ElementDigest)
    }

    /// The index of record `id`'s entry in `lines` (in id order), if it has one.
    private static func lineIndex(of id: RecordID, in lines: [(record: ReadOnly.Record, line: StoredLine)]) -> Int? {
        var (low, high) = (0, lines.count)
        while low < high {
            let middle = (low + high) / 2
            if lines[middle].record.id < id { low = middle + 1 } else { high = middle }
        }
        return low < lines.count && lines[low].record.id == id ? low : nil
    }

    /// An element skipped because its digest is a line the store holds.
    static let skippedAsHeld = -1
    /// An element skipped because its file held it when it last merged.
    static let skippedAsMerged = -2

    /// Per file, per element: skipped (``skippedAsHeld``, ``skippedAsMerged``), else its
    /// reading's index in `toParse`; and the elements' digests when they were computed.
    typealias ReadingPlan = (plans: [[Int]], toParse: [(file: Int, element: Int)], digests: [[ElementDigest]]?)

    /// Which elements to parse when the store holds none of them: the first of the elements of
    /// one id that hold the same bytes (compared, not hashed: most records are the same version,
    /// byte for byte, on every device).
    private func planByID(_ group: Group, of files: [OpenedSource]) -> ReadingPlan {
        var plans: [[Int]] = group.elements.map { Array(repeating: -1, count: $0.count) }
        var toParse: [(file: Int, element: Int)] = []
        var keyed: [(id: RecordID, file: Int32, position: Int32)] = []
        let bytesOf = files.map(ElementBytes.init)
        for (fileIndex, elements) in group.elements.enumerated() where !elements.isEmpty {
            guard case .split(_, let split, _, _) = files[fileIndex].content else { continue }
            for (position, element) in elements.enumerated() {
                if let id = split.ids[element] {
                    keyed.append((id, Int32(fileIndex), Int32(position)))
                } else {
                    plans[fileIndex][position] = toParse.count
                    toParse.append((fileIndex, element))
                }
            }
        }
        keyed.sort { $0.id < $1.id }
        var start = 0
        while start < keyed.count {
            var end = start + 1
            while end < keyed.count, keyed[end].id == keyed[start].id { end += 1 }
            // The first element of this id with the same bytes, if any, is the reading to share
            // (its index in `toParse` is the first of this id's readings at or after `distinct`).
            let distinct = toParse.count
            for entry in keyed[start..<end] {
                let fileIndex = Int(entry.file)
                let element = group.elements[fileIndex][Int(entry.position)]
                let same = bytesOf[fileIndex].with(element) { bytes in
                    toParse[distinct...].firstIndex { earlier in
                        bytesOf[earlier.file].with(earlier.element) { Self.equal($0, bytes) }
                    }
                }
                if let same {
                    plans[fileIndex][Int(entry.position)] = same
                } else {
                    plans[fileIndex][Int(entry.position)] = toParse.count
                    toParse.append((fileIndex, element))
                }
            }
            start = end
        }
        return (plans, toParse, nil)
    }

    private static func equal(_ lhs: UnsafeRawBufferPointer, _ rhs: UnsafeRawBufferPointer) -> Bool {
        lhs.count == rhs.count && (lhs.count == 0 || memcmp(lhs.baseAddress!, rhs.baseAddress!, lhs.count) == 0)
    }

    /// Which elements to parse when the store holds lines for some: by digest, skipping those
    /// whose digest is a held line's or an element merged before, sharing the reading of equal
    /// bytes.
    private func planByDigest(
        _ group: Group, of files: [OpenedSource], held: Set<ElementDigest>, merged: Set<ElementDigest>
    ) -> ReadingPlan {
        var plans: [[Int]] = group.elements.map { _ in [] }
        var digests: [[ElementDigest]] = group.elements.map { _ in [] }
        var toParse: [(file: Int, element: Int)] = []
        var firstHolder: [ElementDigest: Int] = [:]
        let bytesOf = files.map(ElementBytes.init)
        for (fileIndex, elements) in group.elements.enumerated() where !elements.isEmpty {
            guard case .split = files[fileIndex].content else { continue }
            plans[fileIndex].reserveCapacity(elements.count)
            digests[fileIndex].reserveCapacity(elements.count)
            for element in elements {
                let digest = bytesOf[fileIndex].digest(element)
                digests[fileIndex].append(digest)
                if held.contains(digest) {
                    plans[fileIndex].append(Self.skippedAsHeld)
                } else if merged.contains(digest) {
                    plans[fileIndex].append(Self.skippedAsMerged)
                } else if let parsed = firstHolder[digest] {
                    plans[fileIndex].append(parsed)
                } else {
                    firstHolder[digest] = toParse.count
                    plans[fileIndex].append(toParse.count)
                    toParse.append((fileIndex, element))
                }
            }
        }
        return (plans, toParse, digests)
    }

    /// Takes an element's versions into a file's tally: those of a record outside the file's
    /// part are rejected, as are versions that do not fit their schema.
    func take(
        _ versions: [ReadOnly.Version], problems: [RecordProblem], at element: Int, part: PartPrefix,
        into tally: inout SourceTally
    ) {
        for var problem in problems {
            problem.recordIndex = element
            tally.problems.append(problem)
        }
        if let first = versions.first, !part.contains(first.id) {
            tally.problems.append(
                RecordProblem(
                    recordIndex: element, recordID: first.id.rawValue,
                    rule:
                        "record \(first.id) is not in part \(part.rawValue): a part holds only ids starting with \(part.rawValue)"
                ))
            return
        }
        for version in versions { check(version, into: &tally) }
    }

    /// Checks a version against its schema and this device's clock, and keeps it if it fits.
    private func check(_ version: ReadOnly.Version, into tally: inout SourceTally) {
        tally.futureDates.add(version)
        if let violation = schemas.violation(of: version) {
            tally.schemaProblems.append(
                "record \(version.id) (\(version.modifiedBy?.rawValue ?? "no device"), \(version.lastModified?.written ?? "no time")): \(violation)"
            )
            return
        }
        if schemas.newerVersionNote(for: version) != nil { tally.newerSchemas += 1 }
        tally.versions.append(version)
    }
}
