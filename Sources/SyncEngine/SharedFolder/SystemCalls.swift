import CInotifyTools
import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

// Every raw libc call of the engine goes through this file: errno becomes a typed error read
// right after the call, and C flags get spelled-out names.

/// A failed system call: which call, on what, and errno.
public struct SystemCallError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The call, e.g. "open".
    public var call: String
    /// The path or thing it was called on.
    public var subject: String
    /// errno right after the call.
    public var errno: Int32

    public var description: String {
        "\(call) \(subject): \(String(cString: strerror(errno)))"
    }

    /// Whether the path named nothing (ENOENT).
    var isNotFound: Bool { errno == ENOENT }

    /// What a person can do when writing a file in the shared folder failed this way; nil when
    /// the error says enough (the next try may well succeed).
    public var writingAdvice: String? {
        switch errno {
        case ENOSPC, EDQUOT: "the disk is full: free some space"
        case EROFS: "the shared folder's file system is mounted read-only: mount it read-write"
        case EACCES: "this user may not write in the shared folder: give it write permission there"
        case EPERM:
            "the shared folder does not let this user replace the file (a sticky folder where another user owns it, or an immutable or append-only attribute)"
        case EEXIST:
            // Files are created exclusively under names of this device's own (its temporaries,
            // whose stale ones a pass removes first): what holds one is not a file it wrote.
            "something this device did not write holds the name it writes under (\(subject)), such as a directory: remove it"
        default: nil
        }
    }
}

/// What `lstat`/`fstat` say of a file, with the fields the engine uses.
public struct FileStatus: Hashable, Sendable {
    /// The kind of file system object.
    public enum Kind: String, Sendable {
        case regular = "a regular file"
        case directory = "a directory"
        case symbolicLink = "a symbolic link"
        case fifo = "a FIFO"
        case socket = "a socket"
        case characterDevice = "a character device"
        case blockDevice = "a block device"
        case unknown = "an unknown kind of file"
    }

    public var kind: Kind
    public var fileSystemDevice: Int64
    public var inode: Int64
    public var size: Int64
    public var modifiedNanos: Int64
    public var changedNanos: Int64
    /// The permission bits (`st_mode & 0o7777`).
    public var permissions: UInt32

    init(_ raw: stat) {
        switch raw.st_mode & S_IFMT {
        case S_IFREG: kind = .regular
        case S_IFDIR: kind = .directory
        case S_IFLNK: kind = .symbolicLink
        case S_IFIFO: kind = .fifo
        case S_IFSOCK: kind = .socket
        case S_IFCHR: kind = .characterDevice
        case S_IFBLK: kind = .blockDevice
        default: kind = .unknown
        }
        fileSystemDevice = Int64(bitPattern: UInt64(raw.st_dev))
        inode = Int64(bitPattern: UInt64(raw.st_ino))
        size = Int64(raw.st_size)
        modifiedNanos = Int64(raw.st_mtim.tv_sec) * 1_000_000_000 + Int64(raw.st_mtim.tv_nsec)
        changedNanos = Int64(raw.st_ctim.tv_sec) * 1_000_000_000 + Int64(raw.st_ctim.tv_nsec)
        permissions = UInt32(raw.st_mode & 0o7777)
    }
}

/// Thin, typed wrappers over the libc calls the engine needs.
enum SystemCalls {
    /// `lstat(2)`: never follows a symbolic link.
    static func statusOfLink(_ path: String) throws(SystemCallError) -> FileStatus {
        var raw = stat()
        guard lstat(path, &raw) == 0 else { throw SystemCallError(call: "lstat", subject: path, errno: errno) }
        return FileStatus(raw)
    }

    /// `stat(2)`: follows symbolic links.
    static func status(_ path: String) throws(SystemCallError) -> FileStatus {
        var raw = stat()
        guard stat(path, &raw) == 0 else { throw SystemCallError(call: "stat", subject: path, errno: errno) }
        return FileStatus(raw)
    }

    /// `fchmod(2)`.
    static func changeMode(of descriptor: Int32, to mode: mode_t, path: String) throws(SystemCallError) {
        guard fchmod(descriptor, mode) == 0 else { throw SystemCallError(call: "fchmod", subject: path, errno: errno) }
    }

    /// `fstat(2)`.
    static func status(of descriptor: Int32, path: String) throws(SystemCallError) -> FileStatus {
        var raw = stat()
        guard fstat(descriptor, &raw) == 0 else { throw SystemCallError(call: "fstat", subject: path, errno: errno) }
        return FileStatus(raw)
    }

    /// Opens for reading without following a final symbolic link (`O_NOFOLLOW`), without
    /// blocking on a FIFO (`O_NONBLOCK`), not inherited by children (`O_CLOEXEC`).
    static func openForReadingNoFollow(_ path: String) throws(SystemCallError) -> Int32 {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { throw SystemCallError(call: "open", subject: path, errno: errno) }
        return descriptor
    }

    /// Opens for reading, following links (a configuration file may be one), not blocking on a
    /// FIFO, not inherited by children.
    static func openForReading(_ path: String) throws(SystemCallError) -> Int32 {
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { throw SystemCallError(call: "open", subject: path, errno: errno) }
        return descriptor
    }

    /// Creates a new file exclusively (`O_CREAT|O_EXCL`), write-only, mode 0644 (or `mode`) less
    /// the process's umask.
    ///
    /// - Parameter exactMode: the file gets `mode` whatever the umask (`fchmod(2)`): for files
    ///   meant for others (this device's published files, which sync tools carry to other
    ///   machines with their mode, where another user reads them; the metrics).
    static func createExclusively(_ path: String, mode: mode_t = 0o644, exactMode: Bool = false) throws(SystemCallError)
        -> Int32
    {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode)
        guard descriptor >= 0 else { throw SystemCallError(call: "create", subject: path, errno: errno) }
        // Best effort: a file system without modes (vfat, exFAT) refuses, and its files are
        // readable by whoever mounted it anyway.
        if exactMode { _ = fchmod(descriptor, mode) }
        return descriptor
    }

    /// Opens a directory (for `fsync` of its entries).
    static func openDirectory(_ path: String) throws(SystemCallError) -> Int32 {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw SystemCallError(call: "open directory", subject: path, errno: errno) }
        return descriptor
    }

    /// Reads the whole file behind `descriptor`, expecting about `size` bytes.
    ///
    /// - Parameter pieces: how many stretches of a regular file to read at once (`pread(2)`),
    ///   each on a core of its own, for a few large files that one reader per file would leave a
    ///   core idle for (three files on two cores); the bytes are the same as read in one piece.
    ///   With one (anything else: pipes too), the file is read from where its offset is.
    /// - Parameter maximum: a file that grows while it is read is read no further than one byte
    ///   past this (a writer appending as fast as the read goes would otherwise keep it reading,
    ///   and its memory growing, without end): more bytes than `maximum` tell the caller so.
    static func readAll(
        _ descriptor: Int32, expectedSize: Int, path: String, pieces: Int = 1, maximum: Int = .max
    ) throws(SystemCallError) -> [UInt8] {
        // Read into uninitialized memory: zeroing a large file's worth of bytes first costs as
        // much as the read. One byte more than expected tells a file that grew meanwhile.
        let capacity = max(expectedSize, 0) + 1
        let pieces = max(1, min(pieces, capacity / (1 << 20)))
        var failure: SystemCallError?
        var bytes = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, initialized in
            guard pieces > 1 else {
                var filled = 0
                while filled < buffer.count {
                    let count = read(descriptor, buffer.baseAddress! + filled, buffer.count - filled)
                    if count < 0 {
                        if errno == EINTR { continue }
                        failure = SystemCallError(call: "read", subject: path, errno: errno)
                        break
                    }
                    if count == 0 { break }
                    filled += count
                }
                initialized = filled
                return
            }
            let base = ReadTarget(start: buffer.baseAddress!)
            let stretch = capacity / pieces
            // Bytes read into each piece (every piece but the last ends where the next begins).
            let filled = Mutex([Int](repeating: 0, count: pieces))
            let failed = Mutex<SystemCallError?>(nil)
            DispatchQueue.concurrentPerform(iterations: pieces) { piece in
                let start = piece * stretch
                let end = piece == pieces - 1 ? capacity : start + stretch
                do throws(SystemCallError) {
                    let count = try readAt(
                        descriptor, into: UnsafeMutableRawBufferPointer(start: base.start + start, count: end - start),
                        at: start, path: path)
                    filled.withLock { $0[piece] = count }
                } catch {
                    failed.withLock { $0 = error }
                }
            }
            failure = failed.withLock { $0 }
            // Contiguous from the start up to the first piece that came up short (a file that
            // shrank meanwhile ends there; what lies beyond it is not the file's).
            var contiguous = 0
            for (piece, count) in filled.withLock({ $0 }).enumerated() {
                contiguous = piece * stretch + count
                if piece < pieces - 1, count < stretch { break }
            }
            initialized = failure == nil ? contiguous : 0
            // Where a reader in one piece would be, for the rest of a file that grew.
            if failure == nil, lseek(descriptor, off_t(contiguous), SEEK_SET) < 0 {
                failure = SystemCallError(call: "lseek", subject: path, errno: errno)
            }
        }
        if let failure { throw failure }
        guard bytes.count == capacity else { return bytes }
        // The file grew while it was read: read the rest, up to one byte past `maximum`.
        var filled = bytes.count
        while filled <= maximum {
            if filled == bytes.count {
                bytes.append(contentsOf: repeatElement(0, count: min(max(bytes.count, 4096), maximum - filled) + 1))
            }
            let count = bytes.withUnsafeMutableBytes { buffer in
                read(descriptor, buffer.baseAddress! + filled, buffer.count - filled)
            }
            if count < 0 {
                if errno == EINTR { continue }
                throw SystemCallError(call: "read", subject: path, errno: errno)
            }
            if count == 0 { break }
            filled += count
        }
        bytes.removeLast(bytes.count - filled)
        return bytes
    }

    /// Where the pieces of a read go: each piece writes its own stretch of it, and the reading
    /// waits for all of them.
    private struct ReadTarget: @unchecked Sendable {
        let start: UnsafeMutablePointer<UInt8>
    }

    /// Writes all of `bytes` at file offset `offset` (`pwrite(2)`), retrying short writes.
    static func writeAt(
        _ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int, path: String
    ) throws(SystemCallError) {
        var written = 0
        while written < bytes.count {
            let count = pwrite(descriptor, bytes.baseAddress! + written, bytes.count - written, off_t(offset + written))
            if count < 0 {
                if errno == EINTR { continue }
                throw SystemCallError(call: "write", subject: path, errno: errno)
            }
            written += count
        }
    }

    /// Reads up to `count` bytes at file offset `offset` into `buffer` (fewer only at the end of
    /// the file), retrying short reads; how many were read.
    static func readAt(
        _ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int, path: String
    ) throws(SystemCallError) -> Int {
        var filled = 0
        while filled < buffer.count {
            let count = pread(descriptor, buffer.baseAddress! + filled, buffer.count - filled, off_t(offset + filled))
            if count < 0 {
                if errno == EINTR { continue }
                throw SystemCallError(call: "read", subject: path, errno: errno)
            }
            if count == 0 { break }
            filled += count
        }
        return filled
    }

    /// Exactly `count` bytes at file offset `offset`; a file that ends before is an error.
    static func readAt(_ descriptor: Int32, count: Int, at offset: Int, path: String) throws(SystemCallError) -> [UInt8]
    {
        var failure: SystemCallError?
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            do throws(SystemCallError) {
                initialized = try readAt(
                    descriptor, into: UnsafeMutableRawBufferPointer(buffer), at: offset, path: path)
            } catch {
                failure = error
                initialized = 0
            }
        }
        if let failure { throw failure }
        // The file shrank since it was indexed.
        guard bytes.count == count else { throw SystemCallError(call: "read", subject: path, errno: EIO) }
        return bytes
    }

    /// Writes all of `bytes`, retrying short writes.
    static func writeAll(_ descriptor: Int32, _ bytes: [UInt8], path: String) throws(SystemCallError) {
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { buffer in
                write(descriptor, buffer.baseAddress! + written, buffer.count - written)
            }
            if count < 0 {
                if errno == EINTR { continue }
                throw SystemCallError(call: "write", subject: path, errno: errno)
            }
            written += count
        }
    }

    /// Creates the file `path` (it must not exist), writes `bytes` and syncs them to disk
    /// (`fdatasync(2)`): the first half of publishing a file atomically.
    static func writeNewFile(_ path: String, _ bytes: [UInt8], mode: mode_t = 0o644, exactMode: Bool = false)
        throws(SystemCallError)
    {
        let descriptor = try createExclusively(path, mode: mode, exactMode: exactMode)
        defer { close(descriptor) }
        do throws(SystemCallError) {
            try writeAll(descriptor, bytes, path: path)
            guard fdatasync(descriptor) == 0 else {
                throw SystemCallError(call: "fdatasync", subject: path, errno: errno)
            }
        } catch {
            try? remove(path)
            throw error
        }
    }

    /// Starts writing back to disk the pages of the file behind `descriptor` already written, without
    /// waiting (`sync_file_range(2)`, `SYNC_FILE_RANGE_WRITE`). Advice only: when it fails, the
    /// fsync that ends the write has more to do.
    static func startWriteback(_ descriptor: Int32) {
        _ = snapshotsync_start_writeback(descriptor)
    }

    /// A descriptor this process already holds on the file at `path` (the same device and inode),
    /// found among `/proc/self/fd`; nil when there is none or `/proc` is not mounted.
    ///
    /// For advice such as ``startWriteback(_:)`` on a file another library opened (SQLite's
    /// store): the descriptor stays its owner's, and must never be closed here. Opening and
    /// closing a descriptor of our own instead would release every POSIX lock this process holds
    /// on the file, SQLite's included (fcntl(2): closing any descriptor of a file does).
    static func heldDescriptor(of path: String) -> Int32? {
        guard let target = try? status(path), let listing = opendir("/proc/self/fd") else { return nil }
        defer { closedir(listing) }
        let own = dirfd(listing)
        while let entry = readdir(listing) {
            let name = UnsafeRawPointer(entry).advanced(by: Self.nameOffset).assumingMemoryBound(to: CChar.self)
            guard let number = Int32(String(cString: name)), number != own,
                let found = try? status(of: number, path: path)
            else { continue }
            if found.fileSystemDevice == target.fileSystemDevice, found.inode == target.inode { return number }
        }
        return nil
    }

    /// `fsync(2)`: the bytes are on disk when it returns.
    static func synchronize(_ descriptor: Int32, path: String) throws(SystemCallError) {
        guard fsync(descriptor) == 0 else { throw SystemCallError(call: "fsync", subject: path, errno: errno) }
    }

    /// `close(2)`.
    static func close(_ descriptor: Int32) {
        _ = Glibc.close(descriptor)
    }

    /// `rename(2)`: atomically replaces `destination`.
    static func rename(_ source: String, to destination: String) throws(SystemCallError) {
        guard Glibc.rename(source, destination) == 0 else {
            throw SystemCallError(call: "rename", subject: "\(source) to \(destination)", errno: errno)
        }
    }

    /// `link(2)`: a second name for a file.
    static func link(_ source: String, to destination: String) throws(SystemCallError) {
        guard Glibc.link(source, destination) == 0 else {
            throw SystemCallError(call: "link", subject: "\(source) to \(destination)", errno: errno)
        }
    }

    /// `unlink(2)`; a missing file is not an error.
    static func remove(_ path: String) throws(SystemCallError) {
        guard unlink(path) == 0 || errno == ENOENT else {
            throw SystemCallError(call: "unlink", subject: path, errno: errno)
        }
    }

    /// Creates a directory and its parents with the given mode (like `mkdir -p`).
    static func createDirectories(_ path: String, mode: mode_t = 0o700) throws(SystemCallError) {
        var current = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            current += "/" + component
            if mkdir(current, mode) != 0 && errno != EEXIST {
                throw SystemCallError(call: "mkdir", subject: current, errno: errno)
            }
        }
    }

    /// Where `d_name` is in a `dirent`.
    private static let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!

    /// Every entry of a directory but `.` and `..`, each with its status (`fstatat(2)` with
    /// `AT_SYMLINK_NOFOLLOW`, relative to the open directory: no path is looked up again) when
    /// `wantsStatus` says so; nil for an entry that vanished meanwhile.
    ///
    /// A name that is not valid UTF-8 is listed with each byte of an invalid sequence written
    /// `\xHH` (``displayedName(_:)``) and `isValidUTF8` false; its status, when wanted, is taken by
    /// its own bytes. By that name it cannot be opened.
    static func directoryListing(_ path: String, wantsStatus: (String) -> Bool) throws(SystemCallError)
        -> [(name: String, status: FileStatus?, isValidUTF8: Bool)]
    {
        guard let directory = opendir(path) else { throw SystemCallError(call: "opendir", subject: path, errno: errno) }
        defer { closedir(directory) }
        let descriptor = dirfd(directory)
        var listed: [String] = []
        // The names that are not valid UTF-8, by index, with their status.
        var invalidStatus: [Int: FileStatus?] = [:]
        while true {
            errno = 0
            guard let entry = readdir(directory) else {
                if errno != 0 { throw SystemCallError(call: "readdir", subject: path, errno: errno) }
                break
            }
            // The name is read where readdir(3) put it: an entry is only d_reclen bytes long, so
            // copying a whole `dirent` (its 256-byte d_name) can read past the end of the buffer.
            let namePointer = UnsafeRawPointer(entry).advanced(by: Self.nameOffset).assumingMemoryBound(to: CChar.self)
            var name = String(cString: namePointer)
            guard name != "." && name != ".." else { continue }
            // A name that is not valid UTF-8 was repaired on its way into a String: shown with
            // its bad bytes instead, and looked at now, by its own bytes (rare).
            let length = strlen(namePointer)
            let bytes = UnsafeRawBufferPointer(start: namePointer, count: length)
            if !name.utf8.elementsEqual(bytes) {
                name = Self.displayedName(bytes)
                var raw = stat()
                invalidStatus[listed.count] =
                    wantsStatus(name) && fstatat(descriptor, namePointer, &raw, AT_SYMLINK_NOFOLLOW) == 0
                    ? FileStatus(raw) : nil
            }
            listed.append(name)
        }
        let names = listed
        let wanted = names.indices.filter { invalidStatus[$0] == nil && wantsStatus(names[$0]) }
        // The statuses, in a stretch of the wanted names per core when there are many: the
        // stat(2)s of 196,608 parts took a third of a second on one core.
        let stretches = wanted.count >= 512 ? min(processorsOnline, 8) : 1
        let found = Mutex([[FileStatus?]](repeating: [], count: stretches))
        let statusOfStretch = { @Sendable (stretch: Int) in
            let range = (wanted.count * stretch / stretches)..<(wanted.count * (stretch + 1) / stretches)
            var statuses: [FileStatus?] = []
            statuses.reserveCapacity(range.count)
            for index in range {
                var raw = stat()
                let ok = names[wanted[index]].withCString { fstatat(descriptor, $0, &raw, AT_SYMLINK_NOFOLLOW) == 0 }
                statuses.append(ok ? FileStatus(raw) : nil)
            }
            found.withLock { $0[stretch] = statuses }
        }
        if stretches > 1 {
            DispatchQueue.concurrentPerform(iterations: stretches, execute: statusOfStretch)
        } else {
            statusOfStretch(0)
        }
        let statuses = found.withLock { $0 }.joined()
        var entries = names.indices.map {
            (name: names[$0], status: invalidStatus[$0] ?? nil, isValidUTF8: invalidStatus[$0] == nil)
        }
        for (index, status) in zip(wanted, statuses) { entries[index].status = status }
        return entries
    }

    /// A name that is not valid UTF-8 as text: its valid stretches as they are, each byte of an
    /// invalid sequence as `\xHH` (two names that differ in those bytes are told apart).
    static func displayedName(_ bytes: UnsafeRawBufferPointer) -> String {
        var text = ""
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var consumed = 0
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded):
                text.unicodeScalars.append(Unicode.UTF8.decode(encoded))
                consumed += encoded.count
            case .error(let length):
                for byte in bytes[consumed..<(consumed + length)] {
                    let hex = String(byte, radix: 16, uppercase: true)
                    text += "\\x" + (hex.count == 1 ? "0" : "") + hex
                }
                consumed += length
            case .emptyInput:
                return text
            }
        }
    }

    /// `realpath(3)`: the absolute path with every link resolved.
    static func resolvedPath(_ path: String) throws(SystemCallError) -> String {
        guard let resolved = realpath(path, nil) else {
            throw SystemCallError(call: "realpath", subject: path, errno: errno)
        }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// The absolute path `path` names once every link in its existing part is resolved: the
    /// existing ancestor through `realpath(3)`, then the missing components as written.
    static func resolvedPathOfPossiblyMissing(_ path: String) throws(SystemCallError) -> String {
        var existing = path.hasPrefix("/") ? path : (currentDirectory() + "/" + path)
        var missing: [Substring] = []
        while (try? statusOfLink(existing)) == nil {
            let parts = existing.split(separator: "/", omittingEmptySubsequences: true)
            guard let last = parts.last else { break }
            missing.insert(last, at: 0)
            existing = "/" + parts.dropLast().joined(separator: "/")
        }
        var resolved = try resolvedPath(existing)
        for component in missing where component != "." {
            if component == ".." {
                resolved = String(resolved[..<(resolved.lastIndex(of: "/") ?? resolved.startIndex)])
            } else {
                resolved += (resolved.hasSuffix("/") ? "" : "/") + component
            }
        }
        return resolved.isEmpty ? "/" : resolved
    }

    /// The processors online (`sysconf(_SC_NPROCESSORS_ONLN)`), one at least.
    static var processorsOnline: Int { max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN))) }

    /// The current working directory (`getcwd(3)`).
    static func currentDirectory() -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return "/" }
        let length = buffer.firstIndex(of: 0) ?? buffer.count
        return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Takes an exclusive `flock(2)` on an open file without waiting; false when another holds it.
    static func tryLockExclusively(_ descriptor: Int32, path: String) throws(SystemCallError) -> Bool {
        if flock(descriptor, LOCK_EX | LOCK_NB) == 0 { return true }
        if errno == EWOULDBLOCK { return false }
        throw SystemCallError(call: "flock", subject: path, errno: errno)
    }

    /// Opens (creating) a file for reading and writing, mode 0600.
    static func openOrCreate(_ path: String) throws(SystemCallError) -> Int32 {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { throw SystemCallError(call: "open", subject: path, errno: errno) }
        return descriptor
    }

    /// Replaces the content of an open file with `text`.
    static func overwrite(_ descriptor: Int32, with text: String, path: String) throws(SystemCallError) {
        guard ftruncate(descriptor, 0) == 0 else {
            throw SystemCallError(call: "ftruncate", subject: path, errno: errno)
        }
        guard lseek(descriptor, 0, SEEK_SET) == 0 else {
            throw SystemCallError(call: "lseek", subject: path, errno: errno)
        }
        try writeAll(descriptor, Array(text.utf8), path: path)
    }

    /// Whether the mount holding `path` is read-only (`ST_RDONLY`); false when unknown.
    static func isOnReadOnlyMount(_ path: String) -> Bool {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return false }
        return info.f_flag & UInt(ST_RDONLY) != 0
    }

    /// The bytes this user may still write on the file system holding `path`; nil when unknown.
    static func availableBytes(at path: String) -> Int64? {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return nil }
        // Root may also use the blocks reserved for it.
        let blocks = geteuid() == 0 ? info.f_bfree : info.f_bavail
        return Int64(clamping: UInt64(blocks).multipliedReportingOverflow(by: UInt64(info.f_frsize)).partialValue)
    }

    /// The wall clock: milliseconds since the epoch (`CLOCK_REALTIME`).
    static func wallClockMilliseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }

    /// The monotonic clock in microseconds (`CLOCK_MONOTONIC`), as sd_notify's MONOTONIC_USEC wants.
    static func monotonicMicroseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1000
    }

    /// This process's ID.
    static var processID: Int32 { getpid() }
}

/// Sleeps about 50 ms (used while waiting for a lock).
func sleepBriefly() {
    usleep(50_000)
}

extension SystemCalls {
    /// Sends one datagram to the `AF_UNIX` socket at `path` (`@name` for an abstract address),
    /// as the sd_notify protocol wants: one socket, one `sendto` per message. Never blocks
    /// (`MSG_DONTWAIT`): a receiver that stopped reading must not stall the daemon.
    static func sendDatagram(_ message: String, toUnixSocket path: String) throws(SystemCallError) {
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw SystemCallError(call: "socket", subject: path, errno: errno) }
        defer { Glibc.close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var pathBytes = Array(path.utf8)
        let isAbstract = pathBytes.first == UInt8(ascii: "@")
        if isAbstract { pathBytes[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard pathBytes.count < capacity else {
            throw SystemCallError(call: "sendto", subject: path, errno: ENAMETOOLONG)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            buffer.copyBytes(from: pathBytes)
        }
        // An abstract address's length excludes a trailing NUL; a path's includes it.
        let length = MemoryLayout<sa_family_t>.size + pathBytes.count + (isAbstract ? 0 : 1)
        let bytes = Array(message.utf8)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bytes.withUnsafeBytes { buffer in
                    sendto(
                        descriptor, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT), socketAddress,
                        socklen_t(length))
                }
            }
        }
        guard sent >= 0 else { throw SystemCallError(call: "sendto", subject: path, errno: errno) }
    }

    /// Whether the directory at `path` exists (following links).
    static func isDirectory(_ path: String) -> Bool {
        (try? status(path))?.kind == .directory
    }
}

/// How the process's memory allocator behaves.
public enum MemoryAllocator {
    /// Lets glibc's malloc grow a heap 32 MiB at a time (address space, not resident memory), and
    /// serve blocks of up to 32 MiB from its heaps instead of mapping each one on its own.
    ///
    /// A merge allocates from several threads, so most of its memory comes from glibc's per-thread
    /// heaps, which otherwise grow by exactly what each allocation needs: a cold merge of
    /// 300,000 versions made some 48,000 `mprotect` calls, a quarter of its system time.
    ///
    /// Setting any of these turns off glibc's own adjustment of the mapping threshold, which would
    /// otherwise rise to 32 MiB by itself; left at its 128 KiB start, every larger block (a
    /// round's arrays, a read window, a chunk of lines) was mapped, zero-filled page by page, and
    /// unmapped again: a cold merge of 3 × 1,000,000 records took 610,000 page faults (2.4 GB of
    /// zeroed pages), 155,000 with this. The memory freed after a pass goes back to the system
    /// through ``returnFreedMemory()``.
    /// Call once, first thing in `main`.
    public static func tune() {
        _ = CInotifyTools.mallopt(M_TOP_PAD, 32 << 20)
        _ = CInotifyTools.mallopt(M_MMAP_THRESHOLD, 32 << 20)
    }

    /// Gives the memory freed so far back to the system (`malloc_trim(3)`, every heap): glibc
    /// otherwise keeps it for later allocations, so a daemon would stay at the peak of its
    /// largest pass (350 MB after a first merge of 3 × 100,000 records, 40 MB after this).
    public static func returnFreedMemory() {
        _ = CInotifyTools.malloc_trim(0)
    }
}
