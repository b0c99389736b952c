import SnapshotFormat
import SyncStore

extension SyncDevice {
    /// Puts a publication's files in place, after the transaction that recorded them committed:
    /// each temporary file renamed over its part's name, then the folder fsynced, then recorded
    /// as published; only then are the files the layout no longer uses removed (a reader
    /// meanwhile sees the old files, or both, never less than either).
    ///
    /// - Returns: warnings for the report (copies kept of files replaced; see ``keepCopies(of:findings:)``).
    func publish(_ publication: Publication, findings: FolderFindings) throws -> [String] {
        if let failure = publication.failure {
            // (Which part failed is in the reason: its temporary file's name.)
            throw EngineError.publishFailed(
                path: "this device's files in \(folder.path)", reason: failure.description, advice: failure.writingAdvice)
        }
        var notes = keepCopies(of: publication.files.map(\.name), findings: findings)
        // The file each name was given: another writer under this ID (two machines given one ID)
        // may rename its own over it before the stat below, which must not pass for this one's.
        var inodes: [String: (fileSystemDevice: Int64, inode: Int64)] = [:]
        if !publication.files.isEmpty {
            // (Set before the renames, whose events come at once.)
            renamedIntoPlace.withLock { $0 = Set(publication.files.map(\.name)) }
            do {
                for file in publication.files {
                    let written = try SystemCalls.statusOfLink(file.temporaryPath)
                    inodes[file.name] = (written.fileSystemDevice, written.inode)
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
                    reason: failure?.description ?? String(describing: error), advice: failure?.writingAdvice)
            }
        }
        let now = clock()
        // Of the files published only: a first merge of a folder of tiny parts has rows by the
        // hundred thousand. And of the files this pass read: a row kept from an earlier pass
        // carries a warning an earlier publication carried already, and would carry it forever.
        let published = Set(publication.files.map(\.name))
        let unread = Set(findings.report.sources.lazy.filter { $0.status == .unchanged && published.contains($0.name) }.map(\.name))
        let warnings = Dictionary(
            findings.rows.lazy.filter { published.contains($0.name) && !unread.contains($0.name) }
                .map { ($0.name, $0.lastWarning) },
            uniquingKeysWith: { _, last in last })
        // The files are in place: failing to note so (a full disk under the store) must not make
        // a published edit look failed, which a script would make again. The next pass finds the
        // files it wrote (their part, generation and digest are in `writtenFile`) and notes it.
        do {
            try recordPublished(publication, inodes: inodes, warnings: warnings, at: now)
        } catch {
            let note = "this device's files are published, but the store could not note so (\(error)); the next merge does"
            logger.warning("publication", metadata: ["reason": "\(note)"])
            notes.append(note)
        }
        guard !publication.obsolete.isEmpty else { return notes }
        var removed: [String] = []
        for name in publication.obsolete {
            guard (try? SystemCalls.remove(folder.path(of: name))) != nil else { continue }
            removed.append(name)
            logger.notice("removed a file of this device's that its parts no longer use", metadata: ["file": "\(name)"])
        }
        try? synchronizeFolder()
        // So that `status` does not list them as in the folder until the next pass; a failure
        // here only leaves that to the next pass.
        try? store.transaction { try $0.markAbsent(removed) }
        return notes
    }

    /// Notes in the store that `publication`'s files are in place, with a row for each as found.
    private func recordPublished(
        _ publication: Publication, inodes: [String: (fileSystemDevice: Int64, inode: Int64)],
        warnings: [String: String?], at now: Timestamp
    ) throws {
        try store.transaction { session in
            try session.markPartsPublished(generation: publication.generation)
            for file in publication.files {
                guard var status = try? SystemCalls.statusOfLink(folder.path(of: file.name)) else { continue }
                if let written = inodes[file.name],
                    (status.fileSystemDevice, status.inode) != (written.fileSystemDevice, written.inode)
                {
                    // Replaced already by another writer: a size no file has, so that the next
                    // pass reads what is there.
                    status.size = -1
                }
                var row = StoredSource(
                    name: file.name, fileSystemDevice: status.fileSystemDevice, inode: status.inode,
                    size: status.size, modifiedNanos: status.modifiedNanos, changedNanos: status.changedNanos,
                    lastSeenAt: now.milliseconds)
                row.device = device.rawValue
                row.role = "own"
                row.generation = publication.generation
                let previous = try session.source(named: file.name)
                row.highestGeneration = max(previous?.highestGeneration ?? 0, publication.generation)
                // A warning about the file this one replaces (another device using this ID, a
                // restored backup) stays in `status` until this file is published again.
                row.lastWarning = warnings[file.name] ?? nil
                row.lastMergedAt = now.milliseconds
                try session.save(row)
            }
        }
    }

    /// Keeps a copy, in the state directory's `replaced/`, of each file under this device's name
    /// that a publication is about to replace although this device did not merge all of it (a
    /// record it rejected, a version that fit no schema, a file it could not read): the file is
    /// this device's to rewrite, but what it held is then still somewhere. The same content is
    /// kept once; the newest ``keptCopies`` copies stay, as long as they take no more than
    /// ``keptCopiesBytes`` together, nor four times the largest file read (the copies this call
    /// makes always stay, and so are made only within that budget, the first one always):
    /// another writer rewriting this device's files again and again, or many of them at once,
    /// cannot fill the state directory's disk.
    ///
    /// - Returns: a warning per file copied (or not), naming the copy.
    private func keepCopies(of names: [String], findings: FolderFindings) -> [String] {
        // Rows with a problem are few: looked at first, whatever the number of files.
        let replaced = Set(names)
        let unmerged = Dictionary(
            findings.rows.lazy.filter { $0.present && $0.lastProblem != nil && replaced.contains($0.name) }
                .map { ($0.name, $0.lastProblem!) }, uniquingKeysWith: { _, last in last })
        guard !unmerged.isEmpty else { return [] }
        let directory = settings.stateDirectory + "/replaced"
        let (four, overflow) = settings.maxFileSize.multipliedReportingOverflow(by: 4)
        let budget = overflow ? Self.keptCopiesBytes : min(Self.keptCopiesBytes, four)
        var notes: [String] = []
        // The copies this call names in its notes: never removed by its pruning below, so they
        // stay within the budget themselves (the first one whatever its size).
        var named: Set<String> = []
        var namedBytes: Int64 = 0
        for (name, problem) in unmerged.sorted(by: { $0.key < $1.key }) {
            let what = "\(name) is replaced, and held what this device did not merge (\(problem))"
            do {
                let bytes = try folder.readSnapshotBytes(name, limit: findings.readLimits.of(name)).bytes
                guard named.isEmpty || namedBytes + Int64(bytes.count) <= budget else {
                    notes.append(
                        "\(what); no copy is kept: the copies of the files this publication replaces would take more than \(budget) bytes in \(directory) (at most four times --max-file-size, and 256 MiB)")
                    continue
                }
                try SystemCalls.createDirectories(directory)
                let copy = "\(clock().milliseconds)-\(name)"
                if let kept = Self.keptCopy(of: bytes, named: name, in: directory) {
                    // Renamed as new: the copies are pruned oldest first.
                    let path = (try? SystemCalls.rename("\(directory)/\(kept)", to: "\(directory)/\(copy)")) != nil ? copy : kept
                    named.insert(path)
                    namedBytes += Int64(bytes.count)
                    notes.append("\(what): a copy of the same content is kept at \(directory)/\(path)")
                    continue
                }
                try SystemCalls.writeNewFile("\(directory)/\(copy)", bytes)
                named.insert(copy)
                namedBytes += Int64(bytes.count)
                notes.append("\(what): a copy is kept at \(directory)/\(copy)")
            } catch {
                notes.append("\(what); no copy could be kept (\(error))")
            }
        }
        if let listing = try? SystemCalls.directoryListing(directory, wantsStatus: { _ in true }) {
            // Named by time first: the newest sort first here; this call's copies before all.
            var total: Int64 = 0
            let newestFirst = listing.sorted { (named.contains($0.name) ? 1 : 0, $0.name) > (named.contains($1.name) ? 1 : 0, $1.name) }
            for (index, entry) in newestFirst.enumerated() {
                total += entry.status?.size ?? 0
                if !named.contains(entry.name), index >= Self.keptCopies || total > budget {
                    try? SystemCalls.remove("\(directory)/\(entry.name)")
                }
            }
        }
        for note in notes { logger.warning("own file replaced", metadata: ["reason": "\(note)"]) }
        return notes
    }

    /// The name of a copy in `directory` of the file `name` holding `bytes`, if one is kept.
    private static func keptCopy(of bytes: [UInt8], named name: String, in directory: String) -> String? {
        guard let listing = try? SystemCalls.directoryListing(directory, wantsStatus: { $0.hasSuffix("-" + name) })
        else { return nil }
        for entry in listing where entry.status?.size == Int64(bytes.count) && entry.name.hasSuffix("-" + name) {
            let path = "\(directory)/\(entry.name)"
            guard let descriptor = try? SystemCalls.openForReading(path) else { continue }
            defer { SystemCalls.close(descriptor) }
            if (try? SystemCalls.readAll(descriptor, expectedSize: bytes.count, path: path)) == bytes { return entry.name }
        }
        return nil
    }

    /// How many copies of replaced files ``keepCopies(of:findings:)`` keeps.
    static let keptCopies = 32
    /// How many bytes those copies may take together at most (a publication's own copies are kept
    /// whatever their size).
    static let keptCopiesBytes: Int64 = 256 << 20

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
