import Crypto
import SnapshotFormat
import SyncStore

/// A snapshot file about to be written: its generation and bytes.
struct Publication {
    var generation: Int64
    var bytes: [UInt8]
}

extension SyncDevice {
    /// Decides, inside the merge transaction, whether this device's file must be rewritten, and
    /// if so records the intent (generation and digests) before any byte is written.
    ///
    /// - Parameter ownFileIsCurrent: whether the file in the folder is, readably, the one last published.
    /// - Parameter ownFileRead: the own file as this pass read it, if it did: a file that already
    ///   holds exactly these records is current whatever its generation (and is adopted), and one
    ///   that holds others is not, whatever its generation.
    func planPublication(
        _ session: StoreSession, now: Timestamp, ownFileIsCurrent: Bool, ownFileRead: OwnFileRead? = nil
    ) throws -> Publication? {
        var body: [UInt8] = []
        var isFirst = true
        try session.forEachPublishedLine { line in
            SnapshotWriter.appendLine(line, isFirst: isFirst, into: &body)
            isFirst = false
        }
        let contentDigest = SHA256.hash(data: body).hexString
        let latest = try session.latestCompletedPublication()
        if let ownFileRead, ownFileRead.recordsDigest == contentDigest {
            // Another writer under this ID (a twin, or a restored copy) published this very content:
            // rewriting it would only start a ping-pong of generations. Adopt it.
            if try session.publication(generation: ownFileRead.generation) == nil {
                try session.recordIntent(
                    StoredPublication(
                        generation: ownFileRead.generation, contentDigest: contentDigest,
                        fileDigest: ownFileRead.fileDigest,
                        writtenAt: now.milliseconds, isPublished: true, isAdopted: true))
            }
            return nil
        }
        if let latest, latest.contentDigest == contentDigest, ownFileIsCurrent, ownFileRead == nil { return nil }
        let highestSeen =
            try session.sources()
            .filter { $0.device == device.rawValue }
            .compactMap(\.highestGeneration).max() ?? 0
        let generation = max(try session.latestPublication()?.generation ?? 0, highestSeen) + 1
        var bytes = SnapshotWriter.header(device: device, generation: generation, writtenAt: now)
        bytes += body
        bytes += SnapshotWriter.footer
        try session.recordIntent(
            StoredPublication(
                generation: generation, contentDigest: contentDigest, fileDigest: SHA256.hash(data: bytes).hexString,
                writtenAt: now.milliseconds, isPublished: false))
        return Publication(generation: generation, bytes: bytes)
    }

    /// Writes this device's file atomically: a dot-prefixed temporary file, fsync, rename over
    /// `<device>.json`, fsync of the folder. Then records that it is in place.
    ///
    /// - Parameter warning: a warning found in the file this one replaces during this pass
    ///   (another device using this ID); it stays in `status` until the next publication.
    func publish(_ publication: Publication, keepingWarning warning: String? = nil) throws {
        let finalPath = folder.path(of: ownFileName)
        let temporaryPath = folder.path(of: ".\(ownFileName).\(SystemCalls.processID).tmp")
        do {
            try? SystemCalls.remove(temporaryPath)
            let descriptor = try SystemCalls.createExclusively(temporaryPath)
            do {
                try SystemCalls.writeAll(descriptor, publication.bytes, path: temporaryPath)
                try SystemCalls.synchronize(descriptor, path: temporaryPath)
                SystemCalls.close(descriptor)
            } catch {
                SystemCalls.close(descriptor)
                throw error
            }
            try SystemCalls.rename(temporaryPath, to: finalPath)
            let directory = try SystemCalls.openDirectory(folder.path)
            defer { SystemCalls.close(directory) }
            try SystemCalls.synchronize(directory, path: folder.path)
        } catch {
            try? SystemCalls.remove(temporaryPath)
            try? store.transaction { try $0.forgetIntent(generation: publication.generation) }
            let failure = error as? SystemCallError
            throw EngineError.publishFailed(
                path: finalPath, reason: failure?.description ?? String(describing: error),
                outOfSpace: failure?.isOutOfSpace ?? false)
        }
        let status = try? SystemCalls.statusOfLink(finalPath)
        let now = clock()
        try store.transaction { session in
            try session.markPublished(generation: publication.generation)
            guard let status else { return }
            var row = StoredSource(
                name: ownFileName, fileSystemDevice: status.fileSystemDevice, inode: status.inode, size: status.size,
                modifiedNanos: status.modifiedNanos, changedNanos: status.changedNanos, lastSeenAt: now.milliseconds)
            row.device = device.rawValue
            row.role = "own"
            row.generation = publication.generation
            let previous = try session.source(named: ownFileName)
            row.highestGeneration = max(previous?.highestGeneration ?? 0, publication.generation)
            row.lastWarning = warning
            row.lastMergedAt = now.milliseconds
            try session.save(row)
        }
    }
}
