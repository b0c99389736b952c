import SnapshotFormat
import SyncStore

extension SyncDevice {
    /// Puts a publication's files in place, after the transaction that recorded them committed:
    /// each temporary file renamed over its part's name, then the folder fsynced, then recorded
    /// as published; only then are the files the layout no longer uses removed (a reader
    /// meanwhile sees the old files, or both, never less than either).
    func publish(_ publication: Publication, findings: FolderFindings) throws {
        if let failure = publication.failure {
            throw EngineError.publishFailed(
                path: folder.path(of: ownFileName), reason: failure.description, outOfSpace: failure.isOutOfSpace)
        }
        if !publication.files.isEmpty {
            // (Set before the renames, whose events come at once.)
            renamedIntoPlace.withLock { $0 = Set(publication.files.map(\.name)) }
            do {
                for file in publication.files {
                    try SystemCalls.rename(file.temporaryPath, to: folder.path(of: file.name))
                }
                try synchronizeFolder()
            } catch {
                for file in publication.files { try? SystemCalls.remove(file.temporaryPath) }
                // The parts stay marked unpublished: the next pass writes them again.
                try? store.transaction { try $0.forgetWritten(generation: publication.generation) }
                let failure = error as? SystemCallError
                throw EngineError.publishFailed(
                    path: folder.path(of: publication.files[0].name),
                    reason: failure?.description ?? String(describing: error), outOfSpace: failure?.isOutOfSpace ?? false)
            }
        }
        let now = clock()
        // Of the files published only: a first merge of a folder of tiny parts has rows by the
        // hundred thousand.
        let published = Set(publication.files.map(\.name))
        let warnings = Dictionary(
            findings.rows.lazy.filter { published.contains($0.name) }.map { ($0.name, $0.lastWarning) },
            uniquingKeysWith: { _, last in last })
        try store.transaction { session in
            try session.markPartsPublished(generation: publication.generation)
            for file in publication.files {
                guard let status = try? SystemCalls.statusOfLink(folder.path(of: file.name)) else { continue }
                var row = StoredSource(
                    name: file.name, fileSystemDevice: status.fileSystemDevice, inode: status.inode,
                    size: status.size, modifiedNanos: status.modifiedNanos, changedNanos: status.changedNanos,
                    lastSeenAt: now.milliseconds)
                row.device = device.rawValue
                row.role = "own"
                row.generation = publication.generation
                let previous = try session.source(named: file.name)
                row.highestGeneration = max(previous?.highestGeneration ?? 0, publication.generation)
                // A warning about the file this one replaces (another device using this ID) stays
                // in `status` until the next publication.
                row.lastWarning = warnings[file.name] ?? nil
                row.lastMergedAt = now.milliseconds
                try session.save(row)
            }
        }
        guard !publication.obsolete.isEmpty else { return }
        for name in publication.obsolete {
            try? SystemCalls.remove(folder.path(of: name))
            logger.notice("removed a file of this device's that its parts no longer use", metadata: ["file": "\(name)"])
        }
        try? synchronizeFolder()
    }

    /// Whether `name` is a file the last publication of this process renamed into place, and
    /// this is the first time it is asked (`syncd` asks for each file its watcher reports: its
    /// own renames need no pass, and a pass started by them could read a peer's file half-written).
    public func isOwnRename(_ name: String) -> Bool {
        renamedIntoPlace.withLock { $0.remove(name) != nil }
    }

    /// `fsync` of the shared folder: the renames and removals in it are on disk.
    private func synchronizeFolder() throws {
        let directory = try SystemCalls.openDirectory(folder.path)
        defer { SystemCalls.close(directory) }
        try SystemCalls.synchronize(directory, path: folder.path)
    }
}
