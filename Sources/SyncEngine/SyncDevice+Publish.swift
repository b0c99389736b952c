import Crypto
import Dispatch
import Foundation
#if canImport(Glibc)
    import Glibc
#endif
import SnapshotFormat
import SyncStore
import Synchronization

/// What counts as the content of this device's file, to decide whether it changed: the SHA-256 of
/// its records' line digests (``LineDigest``), in order. The store keeps each line's digest, so
/// this reads 16 bytes per record instead of every line.
struct ContentDigest {
    private var hasher = SHA256()

    mutating func add(_ lineDigest: UnsafeRawBufferPointer) {
        hasher.update(bufferPointer: lineDigest)
    }

    func finalize() -> String { hasher.finalize().hexString }
}

/// A snapshot file about to be put in place: its generation, and its temporary file (written and
/// fsynced inside the transaction that records the intent, or by a cold merge's writer thread),
/// or why it could not be written.
struct Publication {
    var generation: Int64
    var file: File

    enum File {
        case written(Result<String, SystemCallError>)
        /// Being written by another thread; `contentDigest` is the one recorded in the intent.
        case beingWritten(ColdFile, contentDigest: String)
    }

    /// The temporary file, once written and fsynced.
    func written() throws(SystemCallError) -> String {
        switch file {
        case .written(let result):
            return try result.get()
        case .beingWritten(let coldFile, let contentDigest):
            guard let built = coldFile.take() else {
                throw SystemCallError(call: "write", subject: "the snapshot file", errno: EIO)
            }
            guard built.contentDigest == contentDigest else {
                built.discard()
                throw SystemCallError(call: "write", subject: "the snapshot file (its records differ from the store's)", errno: EIO)
            }
            return try built.written.get()
        }
    }
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
        _ session: StoreSession, now: Timestamp, ownFileIsCurrent: Bool, ownFileRead: OwnFileRead? = nil,
        expectingChange: Bool = false, coldFile: (file: ColdFile, contentDigest: String)? = nil
    ) throws -> Publication? {
        // Every stored line and its digest, in id order, straight from SQLite's rows.
        let forEachLine: ((UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void) throws -> Void = {
            try session.forEachPublishedLine($0)
        }
        // The content digest decides whether to write at all. When nothing says the content
        // changed, the records are first only hashed, straight from SQLite's rows (no copy);
        // when the pass changed records, the file is built in the same pass that hashes it, or is
        // being built by a cold merge's writer (`coldFile`, used if its generation is still the
        // next: the intent is then recorded from the content digest of the lines inserted, and
        // the file waited for only to be renamed).
        var built: BuiltFile?
        var beingWritten: Publication.File?
        let contentDigest: String
        let changedGeneration = expectingChange ? try nextGeneration(session) : nil
        if let coldFile, let changedGeneration, coldFile.file.generation == changedGeneration {
            beingWritten = .beingWritten(coldFile.file, contentDigest: coldFile.contentDigest)
            contentDigest = coldFile.contentDigest
        } else if let changedGeneration {
            // Removed first: the file built now takes the same temporary path.
            coldFile?.file.discardUnlessTaken()
            built = try buildFile(forEachLine, generation: changedGeneration, now: now)
            contentDigest = built!.contentDigest
        } else {
            coldFile?.file.discardUnlessTaken()
            var hasher = ContentDigest()
            try session.forEachLineDigest { hasher.add($0) }
            contentDigest = hasher.finalize()
        }
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
            built?.discard()
            coldFile?.file.discardUnlessTaken()
            return nil
        }
        if let latest, latest.contentDigest == contentDigest, ownFileIsCurrent, ownFileRead == nil {
            coldFile?.file.discardUnlessTaken()
            return nil
        }
        let generation = try changedGeneration ?? nextGeneration(session)
        if let beingWritten {
            let header = SnapshotWriter.header(device: device, generation: generation, writtenAt: now)
            try session.recordIntent(
                StoredPublication(
                    generation: generation, contentDigest: contentDigest,
                    fileDigest: Self.fileDigest(header: header, recordsDigest: contentDigest),
                    writtenAt: now.milliseconds, isPublished: false))
            return Publication(generation: generation, file: beingWritten)
        }
        let file = try built ?? buildFile(forEachLine, generation: generation, now: now)
        try session.recordIntent(
            StoredPublication(
                generation: generation, contentDigest: file.contentDigest, fileDigest: file.fileDigest,
                writtenAt: now.milliseconds, isPublished: false))
        return Publication(generation: generation, file: .written(file.written))
    }

    /// The temporary file of this process's next publication.
    var temporaryPublicationPath: String { folder.path(of: ".\(ownFileName).\(SystemCalls.processID).tmp") }

    /// A file built by ``buildFile(_:generation:now:)``.
    struct BuiltFile {
        var written: Result<String, SystemCallError>
        var contentDigest: String
        var fileDigest: String

        /// Removes the temporary file, when it is not to be published after all.
        func discard() {
            if case .success(let path) = written { try? SystemCalls.remove(path) }
        }
    }

    /// Starts writing, on another thread, the file of a cold merge from its merged records as
    /// they become ready (the transaction inserts the same records meanwhile).
    func startColdFile(_ merged: MergedAlone, generation: Int64, now: Timestamp) -> ColdFile {
        let file = ColdFile(generation: generation)
        // A thread of its own: it waits for chunks and for the disk, and a waiting thread of the
        // shared pool would leave the merge one core short.
        Thread {
            let built = try? self.buildFile(
                { body in
                    try merged.forEach { _, stored in
                        try stored.line.withUnsafeBytes { line in try stored.digest.withUnsafeBytes { try body(line, $0) } }
                    }
                }, generation: generation, now: now)
            file.finish(built)
        }.start()
        return file
    }

    /// The generation the next file this device writes carries.
    func nextGeneration(_ session: StoreSession) throws -> Int64 {
        let highestSeen =
            try session.sources()
            .filter { $0.device == device.rawValue }
            .compactMap(\.highestGeneration).max() ?? 0
        return max(try session.latestPublication()?.generation ?? 0, highestSeen) + 1
    }

    /// Writes this device's file with every stored record to its temporary file (streamed in
    /// chunks, then fsynced), and computes the digests of its records part and of the whole file
    /// in the same pass over the store. A failure to write (a full disk) is kept, not thrown:
    /// the digests are still computed, and ``publish(_:keepingWarning:)`` reports it.
    func buildFile(
        _ forEachLine: ((UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void) throws -> Void,
        generation: Int64, now: Timestamp
    ) throws -> BuiltFile {
        let header = SnapshotWriter.header(device: device, generation: generation, writtenAt: now)
        let path = temporaryPublicationPath
        var failure: SystemCallError?
        var descriptor: Int32?
        do {
            try? SystemCalls.remove(path)
            descriptor = try SystemCalls.createExclusively(path)
        } catch {
            failure = error
        }
        let chunkSize = 1 << 20
        var chunk = header
        chunk.reserveCapacity(chunkSize + 64 * 1024)
        var written = 0
        func flush() {
            guard let open = descriptor, failure == nil, !chunk.isEmpty else { return }
            do {
                try SystemCalls.writeAll(open, chunk, path: path)
                // The disk writes each chunk while the next is built: the final fsync waits for
                // little (tens of MB otherwise written back all at once).
                SystemCalls.startWriteback(open, offset: written, count: chunk.count)
                written += chunk.count
            } catch {
                failure = error
            }
        }
        var contentHasher = ContentDigest()
        var isFirst = true
        try forEachLine { line, digest in
            SnapshotWriter.appendLine(line, isFirst: isFirst, into: &chunk)
            isFirst = false
            contentHasher.add(digest)
            if chunk.count >= chunkSize {
                flush()
                chunk.removeAll(keepingCapacity: true)
            }
        }
        chunk += SnapshotWriter.footer
        flush()
        if let open = descriptor {
            if failure == nil {
                do { try SystemCalls.synchronize(open, path: path) } catch { failure = error }
            }
            SystemCalls.close(open)
        }
        if failure != nil { try? SystemCalls.remove(path) }
        let contentDigest = contentHasher.finalize()
        return BuiltFile(
            written: failure.map { .failure($0) } ?? .success(path), contentDigest: contentDigest,
            fileDigest: Self.fileDigest(header: header, recordsDigest: contentDigest))
    }

    /// Writes this device's file atomically: a dot-prefixed temporary file, fsync, rename over
    /// `<device>.json`, fsync of the folder. Then records that it is in place.
    ///
    /// - Parameter warning: a warning found in the file this one replaces during this pass
    ///   (another device using this ID); it stays in `status` until the next publication.
    func publish(_ publication: Publication, keepingWarning warning: String? = nil) throws {
        let finalPath = folder.path(of: ownFileName)
        let temporaryPath = temporaryPublicationPath
        do {
            // Written and fsynced inside the transaction that recorded the intent, or by a cold
            // merge's writer thread, waited for here.
            _ = try publication.written()
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

/// A cold merge's file, written by another thread while the transaction inserts its records.
final class ColdFile: Sendable {
    let generation: Int64
    private let done = DispatchGroup()
    /// The file once written (nil if it could not be built), and whether it was taken.
    private let state = Mutex<(built: SyncDevice.BuiltFile?, taken: Bool)>((nil, false))

    init(generation: Int64) {
        self.generation = generation
        done.enter()
    }

    fileprivate func finish(_ built: SyncDevice.BuiltFile?) {
        state.withLock { $0.built = built }
        done.leave()
    }

    /// Waits for the file, and takes it: from now on the caller decides what becomes of it.
    func take() -> SyncDevice.BuiltFile? {
        done.wait()
        return state.withLock { state in
            state.taken = true
            return state.built
        }
    }

    /// Waits for the file and removes it, unless it was taken (or already removed).
    func discardUnlessTaken() {
        done.wait()
        let left = state.withLock { state -> SyncDevice.BuiltFile? in
            defer { state.taken = true }
            return state.taken ? nil : state.built
        }
        left?.discard()
    }
}
