import Dispatch
import SnapshotFormat
import SyncStore
import Synchronization

/// The shared folder as a pass found it, before any file is read: what is known of the files
/// not to read, and the files to read.
struct FolderScan {
    /// The rows and outcomes of the entries not to read (unchanged, not regular files).
    var findings: FolderFindings
    /// The files to read (changed since last read, or all with `rereadAll`), in name order.
    var changed: [(name: String, status: FileStatus)]
    /// The rows the store held, by name.
    var known: [String: StoredSource]
    /// Whether this device ever wrote a file (a brand-new store takes files under its name as its own).
    var hasWritten: Bool
}

extension SyncDevice {
    /// The shared folder's entries against the rows the store holds.
    ///
    /// With `rereadAll`, files are read again even when their stat is unchanged (after an inotify
    /// overflow, a lost watch, or the periodic rescan).
    func scanFolder(rereadAll: Bool) throws -> FolderScan {
        var findings = FolderFindings(readLimits: ReadLimits(maxFileSize: settings.maxFileSize))
        findings.report.ownFile = folder.path(of: ownFileName)
        // The listing (a stat per file) and the rows of the files read before are independent:
        // the rows are read on another thread meanwhile (at 1,024 files each takes about 2 ms).
        let store = store
        let rows = Mutex<Result<([String: StoredSource], Bool, [String: Int64]), any Error>?>(nil)
        let reading = DispatchGroup()
        DispatchQueue.global(qos: .userInitiated).async(group: reading) { [self] in
            let result = Result {
                try store.reading { session in
                    (
                        Dictionary(uniqueKeysWithValues: try session.sources().map { ($0.name, $0) }),
                        try session.hasWritten(), try ownFilesReadBeyondLimit(session)
                    )
                }
            }
            rows.withLock { $0 = result }
        }
        let listing = Result { try folder.candidates() }
        reading.wait()
        let (entries, ignored, notUTF8) = try listing.get()
        let (known, hasWritten, ownLargeFiles) = try rows.withLock { $0! }.get()
        findings.readLimits.ownLargeFiles = ownLargeFiles
        findings.report.ignoredNames = ignored.filter { !isOwnTemporaryName($0) }
        removeStaleTemporaryFiles(among: ignored)
        findings.previousRows = known
        // Not read, and said at every pass: such a name is a sync tool's copy made under another
        // encoding (`laptop (<Latin-1 name>).json`), which may hold versions no other file has.
        for entry in notUTF8 {
            guard let status = entry.status else { continue }
            findings.report.sources.append(
                status.kind == .regular
                    ? SourceOutcome(
                        name: entry.name, status: .skipped,
                        reason: SyncDevice.notUTF8Reason, rejectedRecords: [], problemKind: SyncDevice.notUTF8Kind)
                    : SourceOutcome(
                        name: entry.name, status: .ignored,
                        reason: SnapshotFileReadError.notRegular(status.kind).description, rejectedRecords: []))
        }
        var changed: [(name: String, status: FileStatus)] = []
        for entry in entries {
            guard let status = entry.status else { continue }
            findings.presentNames.insert(entry.name)
            if status.kind != .regular {
                findings.notRegular[entry.name] = status
                findings.report.sources.append(
                    SourceOutcome(
                        name: entry.name, status: .ignored,
                        reason: SnapshotFileReadError.notRegular(status.kind).description, rejectedRecords: []))
                continue
            }
            // A file refused as too large is read again once the limit allows it (raised since).
            let limit = findings.readLimits.of(entry.name)
            if let previous = known[entry.name], previous.hasSameStat(as: status), !rereadAll,
                previous.problemKind != "too_large" || status.size > limit
            {
                // Not read again, and its row kept as it was, so an idle pass writes nothing.
                var row = previous
                row.present = true
                findings.rows.append(row)
                findings.report.sources.append(SourceOutcome(unchanged: previous))
                continue
            }
            changed.append((entry.name, status))
        }
        return FolderScan(findings: findings, changed: changed, known: known, hasWritten: hasWritten)
    }
}

extension SyncDevice {
    /// The files under this device's own names that are read beyond `--max-file-size`
    /// (``ReadLimits/ownLargeFiles``), with the size each is read up to: the largest file this
    /// device published under that name (of the files its store keeps track of), never more.
    ///
    /// - Its current parts published larger than the limit (a part that cannot split further).
    /// - A name it no longer publishes, or a part that shrank: a part replaced by a split or a
    ///   join and left in the folder by a pass that died before removing it (or before the rename
    ///   of the smaller file) is read, merged and removed; refused, it would be reported at every
    ///   pass, or block its name.
    ///
    /// What another writer puts in the folder never raises these sizes: they come from what this
    /// device wrote (``StoreSession/largestWrittenFiles(largerThan:)``), not from what it read.
    private func ownFilesReadBeyondLimit(_ session: StoreSession) throws -> [String: Int64] {
        let limit = settings.maxFileSize
        var sizes: [String: Int64] = [:]
        for part in try session.ownParts(largerThan: limit) {
            guard let prefix = part.part else { continue }
            sizes[prefix.fileName(for: device)] = part.bytes
        }
        for (part, bytes) in try session.largestWrittenFiles(largerThan: limit) {
            let name = part.fileName(for: device)
            sizes[name] = max(sizes[name] ?? 0, bytes)
        }
        return sizes
    }
}

extension StoredSource {
    /// Whether this row's stat matches a file's.
    func hasSameStat(as status: FileStatus) -> Bool {
        fileSystemDevice == status.fileSystemDevice && inode == status.inode && size == status.size
            && modifiedNanos == status.modifiedNanos && changedNanos == status.changedNanos
    }
}

extension SyncDevice {
    /// The ``SourceOutcome/problemKind`` of a `*.json` file whose name is not valid UTF-8.
    static let notUTF8Kind = "name_not_utf8"
    /// Why such a file is not merged, and what to do.
    static let notUTF8Reason =
        "its name is not valid UTF-8 (its bad bytes shown as \\xHH), so it cannot be read by name: if it is a sync tool's copy of a device's file, it may hold versions no other file has; rename it to a name in UTF-8 ending in .json (as the copy's name would read) and merge again"
}
