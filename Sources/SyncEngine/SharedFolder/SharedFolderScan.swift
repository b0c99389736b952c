import SnapshotFormat

/// One entry of the shared folder, looked at without following links or opening anything but
/// regular files.
public struct FolderEntry: Sendable {
    /// The entry's name in the folder.
    public var name: String
    /// Its status (`lstat`), nil when it vanished between listing and looking.
    public var status: FileStatus?
}

/// The shared folder: listing its entries and reading a snapshot file safely.
public struct SharedFolder: Sendable {
    /// The folder's path as given.
    public let path: String

    /// A shared folder that must exist and be a directory.
    ///
    /// - Throws: ``EngineError/sharedFolderMissing(path:reason:)``: a vanished folder (an
    ///   unmounted drive) is never read as "everything was deleted".
    public init(path: String) throws {
        self.path = path
        do {
            let status = try SystemCalls.status(path)
            guard status.kind == .directory else {
                throw EngineError.sharedFolderMissing(
                    path: path, reason: "it is \(status.kind.rawValue), not a directory")
            }
        } catch let error as SystemCallError {
            throw EngineError.sharedFolderMissing(path: path, reason: error.description)
        }
    }

    /// The folder at `path`, not checked: for a device that only reads its store.
    init(unchecked path: String) { self.path = path }

    /// The full path of an entry.
    public func path(of name: String) -> String { path + "/" + name }

    /// Every entry whose name a reader considers (`*.json`, not starting with `.`), the names of
    /// the others, and the entries whose names are not valid UTF-8 but would be considered (shown
    /// with `\xHH` for their bad bytes: a sync tool's copy made under another encoding, which
    /// cannot be opened by name here).
    public func candidates() throws -> (considered: [FolderEntry], ignored: [String], notUTF8: [FolderEntry]) {
        let entries: [(name: String, status: FileStatus?, isValidUTF8: Bool)]
        do {
            entries = try SystemCalls.directoryListing(path, wantsStatus: SourceFileName.isConsidered)
        } catch {
            throw EngineError.sharedFolderMissing(path: path, reason: error.description)
        }
        var considered: [FolderEntry] = []
        var ignored: [String] = []
        var notUTF8: [FolderEntry] = []
        // Sorted by index over the names: sorting the (name, status) tuples copied each through the
        // runtime's generic tuple witnesses, 10 % of a merge with nothing to do at 1,024 files.
        for entry in entries.map(\.name).indicesInUTF8Order().lazy.map({ entries[$0] }) {
            guard SourceFileName.isConsidered(entry.name) else {
                ignored.append(entry.name)
                continue
            }
            if entry.isValidUTF8 {
                considered.append(FolderEntry(name: entry.name, status: entry.status))
            } else {
                notUTF8.append(FolderEntry(name: entry.name, status: entry.status))
            }
        }
        return (considered, ignored, notUTF8)
    }

    /// How much of a large file is read first to tell whether it can be JSON at all.
    static let openingBytes = 4096

    /// Reads a regular file's bytes once, refusing links, special files and files over `limit`.
    ///
    /// Returns the bytes and the status of the very file read (checked again after opening, so
    /// a file swapped for a link or FIFO in between is not read).
    ///
    /// - Parameters:
    ///   - pieces: how many stretches of the file to read at once (``SystemCalls/readAll(_:expectedSize:path:pieces:)``).
    ///   - forMerging: for a merge's reading only: a large file that cannot be JSON from its first
    ///     byte on (``SnapshotReader/cannotBeJSON(opening:)``) is returned as its first
    ///     ``openingBytes`` only, which the reader refuses as it would the whole file. Whoever
    ///     keeps or compares the bytes (a copy kept of a file replaced) reads the whole file.
    public func readSnapshotBytes(
        _ name: String, limit: Int64, pieces: Int = 1, forMerging: Bool = false
    ) throws(SnapshotFileReadError) -> (bytes: [UInt8], status: FileStatus) {
        let fullPath = path(of: name)
        let descriptor: Int32
        do {
            descriptor = try SystemCalls.openForReadingNoFollow(fullPath)
        } catch {
            // Removed (or renamed away) since the folder was listed: a sync tool's ordinary churn.
            if error.isNotFound { throw .vanished }
            throw .unreadable(error.description)
        }
        defer { SystemCalls.close(descriptor) }
        let status: FileStatus
        do {
            status = try SystemCalls.status(of: descriptor, path: fullPath)
        } catch {
            throw .unreadable(error.description)
        }
        guard status.kind == .regular else { throw .notRegular(status.kind) }
        guard status.size <= limit else { throw .tooLarge(size: status.size, limit: limit) }
        do {
            // A large file that cannot be JSON from its first bytes on is not read whole (a
            // gigabyte of zeros would cost a gigabyte of memory to be refused at byte 0).
            if forMerging, status.size > Self.openingBytes {
                var opening = [UInt8](repeating: 0, count: Self.openingBytes)
                let count = try opening.withUnsafeMutableBytes {
                    try SystemCalls.readAt(descriptor, into: $0, at: 0, path: fullPath)
                }
                opening.removeSubrange(count...)
                if SnapshotReader.cannotBeJSON(opening: opening) { return (opening, status) }
            }
            let bytes = try SystemCalls.readAll(
                descriptor, expectedSize: Int(status.size), path: fullPath, pieces: pieces,
                maximum: Int(clamping: limit))
            guard Int64(bytes.count) <= limit else { throw SnapshotFileReadError.grewPastLimit(limit: limit) }
            return (bytes, status)
        } catch let error as SystemCallError {
            throw .unreadable(error.description)
        } catch {
            throw error as! SnapshotFileReadError
        }
    }
}

/// Why a file in the shared folder could not be read at all.
public enum SnapshotFileReadError: Error, Hashable, Sendable, CustomStringConvertible {
    case notRegular(FileStatus.Kind)
    case tooLarge(size: Int64, limit: Int64)
    /// It grew past the limit while it was read (read no further).
    case grewPastLimit(limit: Int64)
    /// It was removed after the folder was listed, before it could be opened.
    case vanished
    case unreadable(String)

    public var description: String {
        switch self {
        case .notRegular(let kind):
            "\(kind.rawValue), not a regular file: never read\(kind == .symbolicLink ? " (links are not followed)" : "")"
        case .tooLarge(let size, let limit):
            "\(size) bytes, over the limit of \(limit) bytes: not read (raise it with --max-file-size or SYNCD_MAX_FILE_SIZE if the file is genuine)"
        case .grewPastLimit(let limit):
            "grew past the limit of \(limit) bytes while it was read: not read (read again when it changes; raise the limit with --max-file-size or SYNCD_MAX_FILE_SIZE if the file is genuine)"
        case .vanished:
            "removed after the folder was listed: not read (read if it comes back)"
        case .unreadable(let reason):
            "cannot be read (\(reason)); check its permissions"
        }
    }
}
