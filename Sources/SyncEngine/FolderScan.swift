import SnapshotFormat
import SyncStore

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
        var findings = FolderFindings()
        findings.report.ownFile = folder.path(of: ownFileName)
        let (entries, ignored) = try folder.candidates()
        findings.report.ignoredNames = ignored.filter { !$0.hasPrefix(".\(ownFileName).") }
        removeStaleTemporaryFiles(among: ignored)
        let (known, hasWritten) = try store.reading { session in
            (Dictionary(uniqueKeysWithValues: try session.sources().map { ($0.name, $0) }), try session.hasWritten())
        }
        findings.previousRows = known
        var changed: [(name: String, status: FileStatus)] = []
        for entry in entries {
            guard let status = entry.status else { continue }
            findings.presentNames.insert(entry.name)
            if status.kind != .regular {
                findings.report.sources.append(
                    SourceOutcome(
                        name: entry.name, status: .ignored,
                        reason: SnapshotFileReadError.notRegular(status.kind).description, rejectedRecords: []))
                continue
            }
            if let previous = known[entry.name], previous.hasSameStat(as: status), !rereadAll {
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

extension StoredSource {
    /// Whether this row's stat matches a file's.
    func hasSameStat(as status: FileStatus) -> Bool {
        fileSystemDevice == status.fileSystemDevice && inode == status.inode && size == status.size
            && modifiedNanos == status.modifiedNanos && changedNanos == status.changedNanos
    }
}
