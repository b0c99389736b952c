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
    case read(SnapshotReading, ownBytes: [UInt8], FileStatus, digests: RecordDigests)

    /// The status of the very file read, when it was opened.
    var status: FileStatus? {
        switch self {
        case .unreadable: nil
        case .invalid(_, let status), .read(_, _, let status, _): status
        }
    }
}

extension SyncDevice {
    /// Reads and parses the named files, on every core.
    func loadInParallel(_ names: [String]) -> [LoadedSource] {
        let results = Mutex([LoadedSource?](repeating: nil, count: names.count))
        DispatchQueue.concurrentPerform(iterations: names.count) { index in
            let loaded = load(names[index])
            results.withLock { $0[index] = loaded }
        }
        return results.withLock { $0.map { $0! } }
    }

    private func load(_ name: String) -> LoadedSource {
        let read: (bytes: [UInt8], status: FileStatus)
        do {
            read = try folder.readSnapshotBytes(name, limit: settings.maxFileSize)
        } catch {
            return .unreadable(error)
        }
        // Records whose bytes are those of a record this file held at its last clean merge are
        // already in the store: they are skipped unread.
        let known = (try? store.reading { try $0.recordDigests(of: name) }).map(RecordDigests.set(of:)) ?? []
        var digests = RecordDigests()
        do {
            let reading = try SnapshotReader.read(
                bytes: read.bytes, fileName: name,
                skipping: known.isEmpty
                    ? nil
                    : { index, bytes in
                        let digest = RecordDigests.digest(of: bytes)
                        digests.append(digest, at: index)
                        return known.contains(digest)
                    },
                observing: known.isEmpty ? { index, bytes in digests.append(RecordDigests.digest(of: bytes), at: index) } : nil)
            return .read(reading, ownBytes: reading.device == device ? read.bytes : [], read.status, digests: digests)
        } catch {
            return .invalid(error, read.status)
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
        var bytes: [UInt8] = []
        bytes.reserveCapacity(entries.count * 16)
        for entry in entries where !excluded.contains(entry.index) {
            withUnsafeBytes(of: entry.digest.high) { bytes.append(contentsOf: $0) }
            withUnsafeBytes(of: entry.digest.low) { bytes.append(contentsOf: $0) }
        }
        return bytes
    }

    /// The digests in a stored form.
    static func set(of stored: [UInt8]) -> Set<Digest> {
        var set = Set<Digest>(minimumCapacity: stored.count / 16)
        stored.withUnsafeBytes { raw in
            var offset = 0
            while offset + 16 <= raw.count {
                set.insert(
                    Digest(high: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self),
                           low: raw.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self)))
                offset += 16
            }
        }
        return set
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
