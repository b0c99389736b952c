import Crypto
import Dispatch
import SnapshotFormat
import SyncStore
import Synchronization

/// What reading and parsing one file gave: done in parallel, taken in order afterwards.
enum LoadedSource: Sendable {
    /// The file could not be read at all.
    case unreadable(SnapshotFileReadError)
    /// The file was read but is not a snapshot this device may merge.
    case invalid(SnapshotFileProblem, FileStatus)
    /// The file was read and parsed; `ownBytes` are its bytes only when it is under this device's
    /// name (to recognize what this device wrote), empty otherwise.
    /// Read. `copiedFrom` gives, for each version, the index (in this load) of an earlier file
    /// whose identical element gave it too, or -1; empty when no version was.
    case read(SnapshotReading, ownBytes: [UInt8], FileStatus, digests: RecordDigests, copiedFrom: [Int32] = [])

    /// The status of the very file read, when it was opened.
    var status: FileStatus? {
        switch self {
        case .unreadable: nil
        case .invalid(_, let status), .read(_, _, let status, _, _): status
        }
    }
}

extension SyncDevice {
    /// Reads and parses the files `names`, on every core, and returns what each gave, in order.
    ///
    /// In four steps: each file is read and split into its record elements, and every element
    /// hashed (in parallel, a file per core); then every element is classified: skipped when the
    /// same file held those very bytes at its last clean merge (already in the store), taken from
    /// another file of this pass that holds the same bytes (read once), or to be read; then the
    /// elements to read are read in parallel chunks, whatever file they are in; then each file's
    /// reading is put together from its elements (a file per core). Files the split declines
    /// (invalid JSON at the top level, an unusual shape) are read whole, by the reader's own
    /// fallback, which gives the messages.
    func loadInParallel(_ names: [String]) -> [LoadedSource] {
        let prepared = Mutex([PreparedSource?](repeating: nil, count: names.count))
        DispatchQueue.concurrentPerform(iterations: names.count) { index in
            let file = prepare(names[index])
            prepared.withLock { $0[index] = file }
        }
        let files = prepared.withLock { $0.map { $0! } }

        // Classify every element, in file order: the first file holding some bytes reads them.
        var plans: [[ElementPlan]] = []
        var work: [(file: Int, element: Int)] = []
        var firstHolders = FirstHolders(
            capacity: files.reduce(0) { total, file in
                guard case .split(_, let split, _, _, _) = file else { return total }
                return total + split.elements.count
            })
        for (fileIndex, file) in files.enumerated() {
            guard case .split(_, let split, let digests, let known, _) = file else {
                plans.append([])
                continue
            }
            var plan: [ElementPlan] = []
            plan.reserveCapacity(split.elements.count)
            var finder = KnownDigestFinder(known)
            for (element, digest) in digests.enumerated() {
                if finder.holds(digest, near: element) {
                    plan.append(.skip)
                } else if let holder = firstHolders.holder(of: digest, orInsert: fileIndex, element) {
                    plan.append(.copy(holder.file, holder.element))
                } else {
                    plan.append(.read(work.count))
                    work.append((fileIndex, element))
                }
            }
            plans.append(plan)
        }

        // Read the elements to read, in chunks across the cores.
        let toRead = work
        let chunkSize = max(256, work.count / 64 + 1)
        let chunks = (work.count + chunkSize - 1) / chunkSize
        let readings = Mutex([[ElementReading]](repeating: [], count: chunks))
        DispatchQueue.concurrentPerform(iterations: chunks) { chunk in
            var results: [ElementReading] = []
            results.reserveCapacity(chunkSize)
            var buffers = ParserBuffers()
            for (fileIndex, element) in toRead[(chunk * chunkSize)..<min(toRead.count, (chunk + 1) * chunkSize)] {
                guard case .split(let bytes, let split, _, _, _) = files[fileIndex] else { continue }
                let range = split.elements[element]
                results.append(
                    bytes.withUnsafeBufferPointer {
                        SnapshotReader.readElement(
                            of: UnsafeBufferPointer(rebasing: $0[range]), at: element, reusing: &buffers)
                    })
            }
            readings.withLock { $0[chunk] = results }
        }
        let read = readings.withLock { $0.flatMap { $0 } }

        // Each file's reading put together, a file per core.
        let filePlans = plans
        let loaded = Mutex([LoadedSource?](repeating: nil, count: files.count))
        DispatchQueue.concurrentPerform(iterations: files.count) { fileIndex in
            let source = assembled(fileIndex)
            loaded.withLock { $0[fileIndex] = source }
        }
        return loaded.withLock { $0.map { $0! } }

        @Sendable func assembled(_ fileIndex: Int) -> LoadedSource {
            let name = names[fileIndex]
            let file = files[fileIndex]
            switch file {
            case .unreadable(let error):
                return .unreadable(error)
            case .whole(let bytes, let status):
                return readWhole(name, bytes: bytes, status: status)
            case .split(let bytes, let split, let digests, _, _):
                var elements: [ElementReading?] = []
                elements.reserveCapacity(split.elements.count)
                // The versions in the order `assemble` gives them, and where each was copied from.
                var copiedFrom: [Int32] = []
                var anyCopied = false
                for plan in filePlans[fileIndex] {
                    switch plan {
                    case .skip: elements.append(nil)
                    case .read(let at):
                        elements.append(read[at])
                        copiedFrom += repeatElement(-1, count: read[at].versions.count)
                    case .copy(let holderFile, let holderElement):
                        guard case .read(let at) = filePlans[holderFile][holderElement] else {
                            preconditionFailure("an element is copied from one that is read")
                        }
                        elements.append(read[at])
                        copiedFrom += repeatElement(Int32(holderFile), count: read[at].versions.count)
                        anyCopied = true
                    }
                }
                let status = file.status!
                let assembled: SnapshotReading?
                do throws(SnapshotFileProblem) {
                    assembled = try SnapshotReader.assemble(split, fileName: name, elements: elements)
                } catch {
                    return .invalid(error, status)
                }
                guard let reading = assembled else { return readWhole(name, bytes: bytes, status: status) }
                var recordDigests = RecordDigests()
                for (index, digest) in digests.enumerated() { recordDigests.append(digest, at: index) }
                return .read(
                    reading, ownBytes: reading.device == device ? bytes : [], status, digests: recordDigests,
                    copiedFrom: anyCopied ? copiedFrom : [])
            }
        }
    }

    /// A file read and split, not yet parsed.
    private enum PreparedSource: Sendable {
        case unreadable(SnapshotFileReadError)
        /// Split into elements, each with its digest, and the digests the store knows for this file
        /// (in the order of its elements when it last merged).
        case split([UInt8], SplitSnapshot, [RecordDigests.Digest], [RecordDigests.Digest], FileStatus)
        /// To be read whole by the reader (the split declined it).
        case whole([UInt8], FileStatus)

        var status: FileStatus? {
            switch self {
            case .unreadable: nil
            case .split(_, _, _, _, let status), .whole(_, let status): status
            }
        }
    }

    /// What happens to one element of a split file.
    private enum ElementPlan {
        /// Already merged from this file: not read.
        case skip
        /// Read; its reading is at this position of the work list.
        case read(Int)
        /// The same bytes as this element of an earlier file of the pass: its reading is reused.
        case copy(Int, Int)
    }

    private func prepare(_ name: String) -> PreparedSource {
        let read: (bytes: [UInt8], status: FileStatus)
        do {
            read = try folder.readSnapshotBytes(name, limit: settings.maxFileSize)
        } catch {
            return .unreadable(error)
        }
        guard let split = SnapshotReader.split(read.bytes) else { return .whole(read.bytes, read.status) }
        // Hash the elements on every core, in chunks; the stored digests load meanwhile.
        let elements = split.elements
        let chunkSize = 4096
        let chunks = (elements.count + chunkSize - 1) / chunkSize
        let hashed = Mutex([[RecordDigests.Digest]](repeating: [], count: chunks + 1))
        DispatchQueue.concurrentPerform(iterations: chunks + 1) { chunk in
            guard chunk < chunks else {
                let known = (try? store.reading { try $0.recordDigests(of: name) }).map(RecordDigests.list(of:)) ?? []
                hashed.withLock { $0[chunks] = known }
                return
            }
            let digests = read.bytes.withUnsafeBufferPointer { bytes in
                elements[(chunk * chunkSize)..<min(elements.count, (chunk + 1) * chunkSize)].map {
                    RecordDigests.digest(of: UnsafeBufferPointer(rebasing: bytes[$0]))
                }
            }
            hashed.withLock { $0[chunk] = digests }
        }
        let results = hashed.withLock { $0 }
        return .split(read.bytes, split, results.dropLast().flatMap { $0 }, results[chunks], read.status)
    }

    /// Reads a file whole, through the reader's fast path and its fallback (messages included).
    private func readWhole(_ name: String, bytes: [UInt8], status: FileStatus) -> LoadedSource {
        do {
            var digests = RecordDigests()
            let reading = try SnapshotReader.read(
                bytes: bytes, fileName: name,
                observing: { index, element in digests.append(RecordDigests.digest(of: element), at: index) })
            return .read(reading, ownBytes: reading.device == device ? bytes : [], status, digests: digests)
        } catch {
            return .invalid(error, status)
        }
    }

}

/// The digests of one file's records, by their index in `records`.
struct RecordDigests: Sendable {
    /// A record's digest: the first 16 bytes of the SHA-256 of its bytes in the file.
    struct Digest: Hashable, Sendable {
        var high: UInt64
        var low: UInt64
    }

    private(set) var entries: [(index: Int, digest: Digest)] = []

    mutating func append(_ digest: Digest, at index: Int) {
        entries.append((index, digest))
    }

    static func digest(of bytes: UnsafeBufferPointer<UInt8>) -> Digest {
        let hash = SHA256.hash(data: UnsafeRawBufferPointer(bytes))
        return hash.withUnsafeBytes { raw in
            Digest(high: raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self),
                   low: raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        }
    }

    /// The stored form (16 bytes per digest) of the digests whose index is not in `excluded`.
    func stored(excluding excluded: Set<Int>) -> [UInt8] {
        let kept = excluded.isEmpty ? entries[...] : entries.filter { !excluded.contains($0.index) }[...]
        return [UInt8](unsafeUninitializedCapacity: kept.count * 16) { buffer, initialized in
            let raw = UnsafeMutableRawBufferPointer(buffer)
            for (position, entry) in kept.enumerated() {
                raw.storeBytes(of: entry.digest.high, toByteOffset: position * 16, as: UInt64.self)
                raw.storeBytes(of: entry.digest.low, toByteOffset: position * 16 + 8, as: UInt64.self)
            }
            initialized = kept.count * 16
        }
    }

    /// The digests in a stored form, in their order.
    static func list(of stored: [UInt8]) -> [Digest] {
        var list: [Digest] = []
        list.reserveCapacity(stored.count / 16)
        stored.withUnsafeBytes { raw in
            var offset = 0
            while offset + 16 <= raw.count {
                list.append(
                    Digest(high: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self),
                           low: raw.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self)))
                offset += 16
            }
        }
        return list
    }
}

/// The first element of a pass (file and index) that holds each digest.
///
/// Written by hand instead of a `Dictionary`: its keys are SHA-256 prefixes, already spread
/// uniformly, so their first 8 bytes index an open-addressing table directly, where a
/// `Dictionary` hashes each 16-byte key again (SipHash) for a table of the same size. The pass
/// looks up every element it reads: 300,000 for 3 files of 100,000 records.
struct FirstHolders {
    private struct Slot {
        var digest: RecordDigests.Digest
        /// -1 when the slot is empty.
        var file: Int32
        var element: Int32
    }

    private var slots: [Slot]
    private let mask: Int

    /// A table for up to `capacity` digests (at most half full).
    init(capacity: Int) {
        var size = 16
        while size < capacity * 2 { size *= 2 }
        slots = Array(repeating: Slot(digest: .init(high: 0, low: 0), file: -1, element: 0), count: size)
        mask = size - 1
    }

    /// The element that first held `digest`; when none did, `(file, element)` becomes it, and nil is returned.
    mutating func holder(of digest: RecordDigests.Digest, orInsert file: Int, _ element: Int) -> (file: Int, element: Int)? {
        var index = Int(truncatingIfNeeded: digest.high) & mask
        return slots.withUnsafeMutableBufferPointer { slots in
            while true {
                let slot = slots[index]
                if slot.file < 0 {
                    slots[index] = Slot(digest: digest, file: Int32(file), element: Int32(element))
                    return nil
                }
                if slot.digest == digest { return (Int(slot.file), Int(slot.element)) }
                index = (index + 1) & mask
            }
        }
    }
}

/// Finds whether a file's element is one the file held at its last clean merge, looking where it
/// was then: at the same position, or near it (records inserted or removed before it shift it).
///
/// Writers keep their records' order (this code writes them sorted by id), so this finds almost
/// every unchanged record with one comparison, and needs no hash table of every digest. An
/// element it does not find (a file reordered wholesale) is only read again, which changes
/// nothing: merging is idempotent.
struct KnownDigestFinder {
    private let known: [RecordDigests.Digest]
    /// How far the elements found so far have moved since the last merge.
    private var shift = 0
    /// How far from the expected position to look.
    static let window = 64

    init(_ known: [RecordDigests.Digest]) { self.known = known }

    mutating func holds(_ digest: RecordDigests.Digest, near index: Int) -> Bool {
        let expected = index + shift
        if known.indices.contains(expected), known[expected] == digest { return true }
        let low = max(0, expected - Self.window)
        let high = min(known.count, expected + Self.window + 1)
        guard low < high else { return false }
        for candidate in low..<high where known[candidate] == digest {
            shift = candidate - index
            return true
        }
        return false
    }
}

extension SourceCollection {
    /// Records a file whose stat is unchanged since it was last read: not parsed again, and its
    /// row kept as it was, so an idle pass writes nothing.
    mutating func recordUnchanged(_ previous: StoredSource) {
        var row = previous
        row.present = true
        rows.append(row)
        report.sources.append(
            SourceOutcome(
                name: row.name, status: .unchanged, device: row.device, role: row.role, generation: row.generation,
                reason: previous.lastProblem, warning: previous.lastWarning, rejectedRecords: []))
    }
}

extension StoredSource {
    /// Whether this row's stat matches a file's.
    func hasSameStat(as status: FileStatus) -> Bool {
        fileSystemDevice == status.fileSystemDevice && inode == status.inode && size == status.size
            && modifiedNanos == status.modifiedNanos && changedNanos == status.changedNanos
    }
}
