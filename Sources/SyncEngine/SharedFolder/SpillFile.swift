import CInotifyTools
import Glibc

/// A temporary file in the state directory, gone when closed: where a pass keeps the record
/// elements of large files it read first until their groups come (see ``SpanningSources``).
///
/// Created with `O_TMPFILE` (no name: nothing to clean up after a crash), or else created and
/// unlinked at once. Written once, in order, then read from any thread (`pread`).
final class SpillFile: Sendable {
    private let descriptor: Int32
    private let path: String

    /// A new, empty spill file in `directory`.
    init(in directory: String) throws(SystemCallError) {
        path = directory + "/.pass-spill"
        var descriptor = snapshotsync_open_unnamed(directory)
        if descriptor < 0 {
            // A file system without O_TMPFILE: a named file, unlinked at once.
            let named = path + ".\(SystemCalls.processID)"
            descriptor = open(named, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
            guard descriptor >= 0 else { throw SystemCallError(call: "create", subject: named, errno: errno) }
            unlink(named)
        }
        self.descriptor = descriptor
    }

    deinit { SystemCalls.close(descriptor) }

    /// Appends `bytes` at `offset` (the file's length so far: the caller keeps it).
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws(SystemCallError) {
        try SystemCalls.writeAt(descriptor, bytes, at: offset, path: path)
    }

    /// The `count` bytes at `offset`.
    func read(count: Int, at offset: Int) throws(SystemCallError) -> [UInt8] {
        try SystemCalls.readAt(descriptor, count: count, at: offset, path: path)
    }
}
