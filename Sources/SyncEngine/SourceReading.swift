import Crypto
import Dispatch
import RecordSchemas
import SnapshotFormat
import SyncStore
import Synchronization

/// What reading one changed file of the shared folder gave a pass.
struct SourceRead: Sendable {
    /// The file's name in the folder.
    var name: String
    /// Its status when listed.
    var listed: FileStatus
    /// What came of reading it.
    var outcome: Outcome

    enum Outcome: Sendable {
        /// The file could not be read at all.
        case unreadable(SnapshotFileReadError)
        /// The file was read but is not a snapshot this device may merge.
        case invalid(SnapshotFileProblem, FileStatus)
        /// The file was read; what it holds.
        case read(SourceFacts)
    }

    /// The status of the very file read, when it was opened.
    var status: FileStatus {
        switch outcome {
        case .unreadable: listed
        case .invalid(_, let status): status
        case .read(let facts): facts.status
        }
    }
}

/// A file read cleanly enough to merge: its top level, its versions and what was wrong with some.
struct SourceFacts: Sendable {
    /// The top level, the rejected records and the versions to merge: every valid version that
    /// fits its schema, but those of records the store holds line for line (merging them
    /// changes nothing).
    var reading: SnapshotReading
    /// The status of the file read.
    var status: FileStatus
    /// The file's bytes when it is under this device's name (to recognize what this device wrote).
    var ownBytes: [UInt8]
    /// Versions that do not fit their schema, each with why.
    var schemaProblems: [String] = []
    /// Versions whose schema version is newer than the schema files declare.
    var newerSchemas = 0
    /// Versions dated in this device's future, one warning per device.
    var futureWarnings: [String] = []
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
}

/// How a pass reads a group of changed files: every file on every core, each distinct record
/// element parsed once.
///
/// In steps, each on every core: read each file and find its top level and its elements; digest
/// every element; then, in order, skip an element the store holds line for line (its digest is
/// a stored line's digest: merging it changes nothing), share one element's reading among
/// files holding the same bytes (devices in step hold most records byte for byte), and parse
/// the rest; last, put each file's reading together. A file whose elements cannot be found (not
/// valid JSON at the top level, an unusual shape) is read whole by the reader's plain path,
/// which gives the messages.
struct SourceReader: Sendable {
    let folder: SharedFolder
    let device: DeviceID
    let maxFileSize: Int64
    let schemas: SchemaSet
    let now: Timestamp
    let clockSkewMargin: Int64

    /// Reads `files` and returns what each gave, in order.
    ///
    /// - Parameter held: digests of the lines the store holds; elements with one are skipped.
    func read(_ files: [(name: String, status: FileStatus)], skipping held: Set<ElementDigest>) -> [SourceRead] {
        guard !files.isEmpty else { return [] }
        let prepared = Mutex([Prepared?](repeating: nil, count: files.count))
        DispatchQueue.concurrentPerform(iterations: files.count) { index in
            let file = prepare(files[index].name)
            prepared.withLock { $0[index] = file }
        }
        let ready = prepared.withLock { $0.map { $0! } }
        trace("prepared \(files.count)")
        let digests = digestElements(ready)
        trace("digested")
        // In order, so that the first file holding some bytes is the one that reads them.
        var firstHolder: [ElementDigest: (file: Int, element: Int)] = [:]
        var toParse: [(file: Int, element: Int)] = []
        var plans: [[ElementPlan]] = []
        for (fileIndex, file) in ready.enumerated() {
            guard case .split = file else {
                plans.append([])
                continue
            }
            var plan: [ElementPlan] = []
            plan.reserveCapacity(digests[fileIndex].count)
            for (element, digest) in digests[fileIndex].enumerated() {
                if held.contains(digest) {
                    plan.append(.skip)
                } else if let holder = firstHolder[digest] {
                    plan.append(.same(as: holder.file, holder.element))
                } else {
                    firstHolder[digest] = (fileIndex, element)
                    plan.append(.parse(toParse.count))
                    toParse.append((fileIndex, element))
                }
            }
            plans.append(plan)
        }
        firstHolder = [:]
        trace("classified \(toParse.count)")
        let parsed = parseElements(toParse, of: ready)
        trace("parsed")
        let plan = plans
        let reads = Mutex([SourceRead?](repeating: nil, count: files.count))
        DispatchQueue.concurrentPerform(iterations: files.count) { fileIndex in
            let read = assemble(ready[fileIndex], name: files[fileIndex].name, listed: files[fileIndex].status) {
                element in
                switch plan[fileIndex][element] {
                case .skip: return nil
                case .parse(let at): return parsed[at]
                case .same(let holderFile, let holderElement):
                    guard case .parse(let at) = plan[holderFile][holderElement] else {
                        preconditionFailure("an element shares the reading of one that is parsed")
                    }
                    return parsed[at]
                }
            }
            reads.withLock { $0[fileIndex] = read }
        }
        trace("assembled")
        return reads.withLock { $0.map { $0! } }
    }

    /// A file read and split, its elements not parsed yet.
    private enum Prepared: Sendable {
        case unreadable(SnapshotFileReadError)
        case invalid(SnapshotFileProblem, FileStatus)
        /// Its elements found; its top level read (valid).
        case split([UInt8], SplitSnapshot, SnapshotReading, FileStatus)
        /// To be read whole by the reader's plain path.
        case whole([UInt8], FileStatus)
    }

    /// What becomes of one element of a split file.
    private enum ElementPlan {
        /// The store holds it line for line: not read.
        case skip
        /// Parsed; its reading is at this position of the parsed elements.
        case parse(Int)
        /// The same bytes as this element of an earlier file: its reading is shared.
        case same(as: Int, Int)
    }

    private func prepare(_ name: String) -> Prepared {
        let read: (bytes: [UInt8], status: FileStatus)
        do throws(SnapshotFileReadError) {
            read = try folder.readSnapshotBytes(name, limit: maxFileSize)
        } catch {
            return .unreadable(error)
        }
        guard let split = SnapshotReader.split(read.bytes) else { return .whole(read.bytes, read.status) }
        do throws(SnapshotFileProblem) {
            let topLevel = try SnapshotReader.topLevel(of: split, fileName: name)
            return .split(read.bytes, split, topLevel, read.status)
        } catch {
            return .invalid(error, read.status)
        }
    }

    /// Every split file's element digests, by file, in order: in chunks on every core.
    private func digestElements(_ files: [Prepared]) -> [[ElementDigest]] {
        let chunkSize = 2048
        let chunks = files.enumerated().flatMap { index, file -> [(file: Int, range: Range<Int>)] in
            guard case .split(_, let split, _, _) = file else { return [] }
            return stride(from: 0, to: split.elements.count, by: chunkSize).map {
                (index, $0..<min($0 + chunkSize, split.elements.count))
            }
        }
        let done = Mutex([[ElementDigest]](repeating: [], count: chunks.count))
        DispatchQueue.concurrentPerform(iterations: chunks.count) { chunk in
            guard case .split(let bytes, let split, _, _) = files[chunks[chunk].file] else { return }
            let digests = bytes.withUnsafeBytes { raw in
                chunks[chunk].range.map { ElementDigest(of: UnsafeRawBufferPointer(rebasing: raw[split.elements[$0]])) }
            }
            done.withLock { $0[chunk] = digests }
        }
        var byFile = [[ElementDigest]](repeating: [], count: files.count)
        for (chunk, digests) in done.withLock({ $0 }).enumerated() { byFile[chunks[chunk].file] += digests }
        return byFile
    }

    /// Parses the elements `toParse`, in chunks on every core.
    private func parseElements(_ toParse: [(file: Int, element: Int)], of files: [Prepared]) -> [ElementReading] {
        let chunkSize = 512
        let chunkCount = (toParse.count + chunkSize - 1) / chunkSize
        let done = Mutex([[ElementReading]](repeating: [], count: chunkCount))
        DispatchQueue.concurrentPerform(iterations: chunkCount) { chunk in
            var buffers = ParserBuffers()
            let range = (chunk * chunkSize)..<min(toParse.count, (chunk + 1) * chunkSize)
            let readings = toParse[range].map { item -> ElementReading in
                guard case .split(let bytes, let split, _, _) = files[item.file] else {
                    preconditionFailure("only elements of split files are parsed")
                }
                return bytes.withUnsafeBufferPointer {
                    SnapshotReader.readElement(
                        of: UnsafeBufferPointer(rebasing: $0[split.elements[item.element]]), at: item.element,
                        reusing: &buffers)
                }
            }
            done.withLock { $0[chunk] = readings }
        }
        return done.withLock { $0.flatMap { $0 } }
    }

    /// One file's reading from its elements' readings (nil for a skipped element).
    private func assemble(
        _ file: Prepared, name: String, listed: FileStatus, element: (Int) -> ElementReading?
    ) -> SourceRead {
        switch file {
        case .unreadable(let error):
            return SourceRead(name: name, listed: listed, outcome: .unreadable(error))
        case .invalid(let problem, let status):
            return SourceRead(name: name, listed: listed, outcome: .invalid(problem, status))
        case .whole(let bytes, let status):
            return readWhole(name, bytes: bytes, listed: listed, status: status)
        case .split(let bytes, let split, _, let status):
            let elements = split.elements.indices.map(element)
            let assembled: SnapshotReading?
            do throws(SnapshotFileProblem) {
                assembled = try SnapshotReader.assemble(split, fileName: name, elements: elements)
            } catch {
                return SourceRead(name: name, listed: listed, outcome: .invalid(error, status))
            }
            // An element that is not valid JSON makes the whole file invalid: the plain path says why.
            guard let reading = assembled else { return readWhole(name, bytes: bytes, listed: listed, status: status) }
            return SourceRead(name: name, listed: listed, outcome: .read(facts(reading, bytes: bytes, status: status)))
        }
    }

    private func readWhole(_ name: String, bytes: [UInt8], listed: FileStatus, status: FileStatus) -> SourceRead {
        do {
            let reading = try SnapshotReader.read(bytes: bytes, fileName: name)
            return SourceRead(name: name, listed: listed, outcome: .read(facts(reading, bytes: bytes, status: status)))
        } catch {
            return SourceRead(name: name, listed: listed, outcome: .invalid(error, status))
        }
    }

    /// The facts of a file read: its versions checked against their schemas and this clock.
    private func facts(_ reading: SnapshotReading, bytes: [UInt8], status: FileStatus) -> SourceFacts {
        var facts = SourceFacts(reading: reading, status: status, ownBytes: reading.device == device ? bytes : [])
        var dates = FutureDates(now: now, margin: clockSkewMargin)
        var fitting: [ReadOnly.Version] = []
        fitting.reserveCapacity(reading.versions.count)
        for version in reading.versions {
            dates.add(version)
            if let violation = schemas.violation(of: version) {
                facts.schemaProblems.append(
                    "record \(version.id) (\(version.modifiedBy?.rawValue ?? "no device"), \(version.lastModified?.written ?? "no time")): \(violation)"
                )
                continue
            }
            if schemas.newerVersionNote(for: version) != nil { facts.newerSchemas += 1 }
            fitting.append(version)
        }
        facts.reading.versions = fitting
        facts.futureWarnings = dates.warnings()
        return facts
    }
}
