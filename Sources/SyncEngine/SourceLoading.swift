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
    /// hashed (in parallel, see ``prepare(_:)``); then every element is classified: skipped when
    /// the same file held those very bytes at its last clean merge (already in the store), taken
    /// from an earlier element of the pass that holds the same bytes (read once), or to be read;
    /// then the elements to read are read in chunks; then each file's reading is put together
    /// from its elements. The last three overlap, on every core (see the comment inside). Files
    /// the split declines (invalid JSON at the top level, an unusual shape) are read whole, by the
    /// reader's own fallback, which gives the messages.
    func loadInParallel(_ names: [String]) -> [LoadedSource] {
        let files = prepare(names)
        guard !files.isEmpty else { return [] }

        // Classifying, reading and putting together run as one queue of tasks, so no core waits
        // for a whole step to end: each file's classification adds the next file's and its own
        // element chunks to read; a file is put together as soon as it and every earlier file
        // (which its copied elements come from) are read.
        let chunkSize = 512
        struct Progress {
            var plans: [[ElementPlan]]
            /// Per file, per chunk: the readings of the elements it reads, in order.
            var readings: [[[ElementReading]]]
            /// Per file: chunks still to read; -1 until it is classified.
            var pendingChunks: [Int]
            /// Files before this one are put together (or queued to be).
            var assembling = 0
            var loaded: [LoadedSource?]
        }
        let progress = Mutex(
            Progress(
                plans: Array(repeating: [], count: files.count), readings: Array(repeating: [], count: files.count),
                pendingChunks: Array(repeating: -1, count: files.count), loaded: Array(repeating: nil, count: files.count)))
        // Only the classifications touch it, one after another; freed after the last.
        let firstHolders = Mutex(
            FirstHolders(
                capacity: files.reduce(0) { total, file in
                    guard case .split(_, let split, _, _, _) = file else { return total }
                    return total + split.elements.count
                }))
        let queue = TaskQueue()
        queue.add { classify(0) }
        queue.run()
        let loaded = progress.withLock { $0.loaded.map { $0! } }
        // Every element's reading is in `loaded` now. Letting go of the work lists (a reference
        // per version: 35 ms after 130,000 elements, with every core otherwise idle) is left to
        // another thread, so the merge starts at once.
        let leftovers = progress.withLock { progress in
            defer { progress.readings = [] }
            return progress.readings
        }
        DispatchQueue.global(qos: .utility).async { withExtendedLifetime(leftovers) {} }
        return loaded

        /// Classifies every element of a file, in order: skipped when the file held those bytes at
        /// its last clean merge, copied when an earlier element of the pass holds them (the first
        /// file holding some bytes reads them), read otherwise.
        @Sendable func classify(_ fileIndex: Int) {
            var plan: [ElementPlan] = []
            var toRead: [Int] = []
            if case .split(_, let split, let digests, let known, _) = files[fileIndex] {
                plan.reserveCapacity(split.elements.count)
                firstHolders.withLock { firstHolders in
                    var finder = KnownDigestFinder(known)
                    for (element, digest) in digests.enumerated() {
                        if finder.holds(digest, near: element) {
                            plan.append(.skip)
                        } else if let holder = firstHolders.holder(of: digest, orInsert: fileIndex, element) {
                            plan.append(.copy(holder.file, holder.element))
                        } else {
                            plan.append(.read(toRead.count))
                            toRead.append(element)
                        }
                    }
                }
            }
            let chunks = (toRead.count + chunkSize - 1) / chunkSize
            progress.withLock {
                $0.plans[fileIndex] = plan
                $0.readings[fileIndex] = Array(repeating: [], count: chunks)
                $0.pendingChunks[fileIndex] = chunks
            }
            if fileIndex + 1 < files.count {
                queue.add { classify(fileIndex + 1) }
            } else {
                firstHolders.withLock { $0 = FirstHolders(capacity: 0) }
            }
            for chunk in 0..<chunks {
                let elements = Array(toRead[(chunk * chunkSize)..<min(toRead.count, (chunk + 1) * chunkSize)])
                queue.add { read(elements, of: fileIndex, chunk: chunk) }
            }
            queueReadyFiles()
        }

        @Sendable func read(_ elements: [Int], of fileIndex: Int, chunk: Int) {
            guard case .split(let bytes, let split, _, _, _) = files[fileIndex] else { return }
            var buffers = ParserBuffers()
            let results = bytes.withUnsafeBufferPointer { bytes in
                elements.map { element in
                    SnapshotReader.readElement(
                        of: UnsafeBufferPointer(rebasing: bytes[split.elements[element]]), at: element,
                        reusing: &buffers)
                }
            }
            progress.withLock {
                $0.readings[fileIndex][chunk] = results
                $0.pendingChunks[fileIndex] -= 1
            }
            queueReadyFiles()
        }

        /// Queues putting together each file that is read, with every file before it.
        @Sendable func queueReadyFiles() {
            let ready = progress.withLock { progress -> [Int] in
                var ready: [Int] = []
                while progress.assembling < files.count, progress.pendingChunks[progress.assembling] == 0 {
                    ready.append(progress.assembling)
                    progress.assembling += 1
                }
                return ready
            }
            for fileIndex in ready {
                queue.add {
                    let source = assembled(fileIndex)
                    progress.withLock { $0.loaded[fileIndex] = source }
                }
            }
        }

        @Sendable func assembled(_ fileIndex: Int) -> LoadedSource {
            let name = names[fileIndex]
            let file = files[fileIndex]
            let (filePlans, readings) = progress.withLock { ($0.plans, $0.readings) }
            func read(_ at: Int, in file: Int) -> ElementReading { readings[file][at / chunkSize][at % chunkSize] }
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
                        let reading = read(at, in: fileIndex)
                        elements.append(reading)
                        copiedFrom += repeatElement(-1, count: reading.versions.count)
                    case .copy(let holderFile, let holderElement):
                        guard case .read(let at) = filePlans[holderFile][holderElement] else {
                            preconditionFailure("an element is copied from one that is read")
                        }
                        let reading = read(at, in: holderFile)
                        elements.append(reading)
                        copiedFrom += repeatElement(Int32(holderFile), count: reading.versions.count)
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
                return .read(
                    reading, ownBytes: reading.device == device ? bytes : [], status, digests: RecordDigests(ordered: digests),
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

    /// Reads and splits every file and hashes its elements, on every core.
    ///
    /// As tasks rather than a file per core: reading and splitting a file is sequential, so with
    /// three files on two cores one core would idle while the last file is split. Here each split
    /// file adds its hashing, in chunks, to the queue behind the files still to read, and
    /// whichever core is free takes the next task.
    private func prepare(_ names: [String]) -> [PreparedSource] {
        struct Progress {
            var files: [PreparedSource?]
            /// Per file: its elements' digests by chunk, then (last) the digests the store knows.
            var digests: [[[RecordDigests.Digest]]]
        }
        let chunkSize = 4096
        let progress = Mutex(
            Progress(files: Array(repeating: nil, count: names.count), digests: Array(repeating: [], count: names.count)))
        let queue = TaskQueue()
        for (index, name) in names.enumerated() {
            queue.add {
                let read: (bytes: [UInt8], status: FileStatus)
                do throws(SnapshotFileReadError) {
                    read = try self.folder.readSnapshotBytes(name, limit: self.settings.maxFileSize)
                } catch {
                    progress.withLock { $0.files[index] = .unreadable(error) }
                    return
                }
                guard let split = SnapshotReader.split(read.bytes) else {
                    progress.withLock { $0.files[index] = .whole(read.bytes, read.status) }
                    return
                }
                let elements = split.elements
                let chunks = (elements.count + chunkSize - 1) / chunkSize
                progress.withLock {
                    $0.files[index] = .split(read.bytes, split, [], [], read.status)
                    $0.digests[index] = Array(repeating: [], count: chunks + 1)
                }
                queue.add {
                    let known = (try? self.store.reading { try $0.recordDigests(of: name) }).map(RecordDigests.list(of:)) ?? []
                    progress.withLock { $0.digests[index][chunks] = known }
                }
                for chunk in 0..<chunks {
                    queue.add {
                        let digests = read.bytes.withUnsafeBufferPointer { bytes in
                            elements[(chunk * chunkSize)..<min(elements.count, (chunk + 1) * chunkSize)].map {
                                RecordDigests.digest(of: UnsafeBufferPointer(rebasing: bytes[$0]))
                            }
                        }
                        progress.withLock { $0.digests[index][chunk] = digests }
                    }
                }
            }
        }
        queue.run()
        let done = progress.withLock { $0 }
        return zip(done.files, done.digests).map { file, digests in
            guard case .split(let bytes, let split, _, _, let status) = file! else { return file! }
            return .split(bytes, split, digests.dropLast().flatMap { $0 }, digests.last ?? [], status)
        }
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

    init() {}

    /// The digests of every record of a file, in order.
    init(ordered digests: [Digest]) {
        entries = digests.enumerated().map { ($0.offset, $0.element) }
    }

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
