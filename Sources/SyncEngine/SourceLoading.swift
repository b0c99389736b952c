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
    case read(SnapshotReading, ownBytes: [UInt8], FileStatus)

    /// The status of the very file read, when it was opened.
    var status: FileStatus? {
        switch self {
        case .unreadable: nil
        case .invalid(_, let status), .read(_, _, let status): status
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
        do {
            let reading = try SnapshotReader.read(bytes: read.bytes, fileName: name)
            return .read(reading, ownBytes: reading.device == device ? read.bytes : [], read.status)
        } catch {
            return .invalid(error, read.status)
        }
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
