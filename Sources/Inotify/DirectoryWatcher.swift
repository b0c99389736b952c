import CInotifyTools
import Foundation
import Synchronization

/// Watches directories with inotify through libinotifytools and delivers what happens as an `AsyncStream`.
///
/// libinotifytools keeps process-wide state, is not thread-safe and blocks while it waits, so one
/// watcher owns it, on a thread of its own (never Swift's cooperative pool). The thread sleeps
/// until an event arrives: to give it a command (stop, watch again) the watcher writes its wake
/// file, which lies in a watched directory, so an idle daemon does not wake up at all. (The
/// library's timeout is in whole seconds and does not expose its descriptor for poll(2).)
///
/// - Important: create at most one watcher per process.
public final class DirectoryWatcher: Sendable {
    /// What the watched directories report. inotify is a hint: a reader rescans to learn the truth.
    public enum Event: Sendable, Hashable {
        /// An entry was written to, closed after writing, renamed into or out of, or removed
        /// from a watched directory.
        case entryChanged(directory: String, name: String, change: EntryChange)
        /// The kernel's event queue overflowed: events were lost, rescan everything.
        case overflow
        /// A watched directory was deleted, moved or unmounted: its watch is gone.
        case directoryGone(String)
        /// A directory could not be watched again (``rewatch(_:)``) although it is there: its
        /// permissions, or the system's limit on watches (`reason` says which).
        case watchFailed(String, reason: String)
    }

    /// What happened to an entry: whether its writer may still be at it.
    public enum EntryChange: Sendable, Hashable {
        /// Written to in place (`IN_MODIFY`), or created (`IN_CREATE`): more writes may follow.
        case written
        /// Done: closed after writing (`IN_CLOSE_WRITE`), renamed into the directory
        /// (`IN_MOVED_TO`, how atomic writers publish a complete file), renamed out or removed.
        case completed
    }

    /// The events, in order; finishes when the watcher stops.
    public let events: AsyncStream<Event>

    private let continuation: AsyncStream<Event>.Continuation
    private let pending = Mutex(Commands())
    private let wakeFile: String?

    private struct Commands: Sendable {
        var watch: [String] = []
        var stop = false
    }

    /// Starts watching `directories` on a new thread.
    ///
    /// - Throws: ``InotifyError`` when inotify cannot be initialized or a directory not watched
    ///   (for instance `fs.inotify.max_user_watches` reached).
    /// - Parameter wakeFile: a file in one of `directories` the watcher may write to wake its
    ///   thread; without one, the thread checks for commands every second.
    public init(directories: [String], wakeFile: String? = nil) throws(InotifyError) {
        self.wakeFile = wakeFile
        (events, continuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .unbounded)
        guard inotifytools_initialize() != 0 else { throw InotifyError.initialization(errno: inotifytools_error()) }
        for directory in directories {
            try Self.watch(directory)
        }
        // The thread holds the watcher until it stops.
        let owner = Thread { [self] in run() }
        owner.name = "inotify"
        owner.start()
    }

    /// Watches `directory` again (after it was deleted and recreated); done on the owner thread.
    public func rewatch(_ directory: String) {
        pending.withLock { $0.watch.append(directory) }
        wake()
    }

    /// Stops the thread; the event stream finishes soon after.
    public func stop() {
        pending.withLock { $0.stop = true }
        wake()
    }

    /// Writes the wake file, so the owner thread returns from its wait and reads its commands,
    /// and removes it: the write's event is queued already, and the file is not left behind.
    private func wake() {
        guard let wakeFile else { return }
        try? Data("wake\n".utf8).write(to: URL(fileURLWithPath: wakeFile))
        unlink(wakeFile)
    }

    /// The events a shared or state directory is watched for.
    ///
    /// `IN_CREATE` tells of a file that arrives by a hard link (`ln`, `cp -l`: no other event), and
    /// counts as written (a writer that created it may follow); `IN_ATTRIB`, of a permission fixed
    /// by `chmod` on a file that could not be read.
    static let mask =
        IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_MODIFY | IN_CREATE | IN_ATTRIB | IN_DELETE_SELF
        | IN_MOVE_SELF

    private static func watch(_ directory: String) throws(InotifyError) {
        // A stale entry for a dead watch of the same path would make the library refuse it.
        _ = inotifytools_remove_watch_by_filename(directory)
        guard inotifytools_watch_file(directory, Int32(mask)) != 0 else {
            throw InotifyError.watch(directory: directory, errno: inotifytools_error())
        }
    }

    private func run() {
        while true {
            let commands = pending.withLock { state -> Commands in
                defer { state.watch = [] }
                return state
            }
            if commands.stop { break }
            for directory in commands.watch {
                do {
                    try Self.watch(directory)
                } catch {
                    if case .watch(_, let code) = error, code == ENOENT || code == ENOTDIR {
                        continuation.yield(.directoryGone(directory))
                    } else {
                        continuation.yield(.watchFailed(directory, reason: error.description))
                    }
                }
            }
            // Whole seconds; 0 blocks until an event (the wake file's write is one).
            guard let pointer = inotifytools_next_event(wakeFile == nil ? 1 : 0) else { continue }
            guard let event = Self.copy(pointer) else { continue }
            if case .entryChanged(let directory, let name, _) = event, directory + "/" + name == wakeFile { continue }
            continuation.yield(event)
        }
        inotifytools_cleanup()
        continuation.finish()
    }

    /// Copies one event out: the library's pointer is valid only until its next call.
    private static func copy(_ pointer: UnsafeMutablePointer<inotify_event>) -> Event? {
        let mask = pointer.pointee.mask
        if mask & UInt32(IN_Q_OVERFLOW) != 0 { return .overflow }
        let directory = inotifytools_filename_from_wd(pointer.pointee.wd).map { String(cString: $0) } ?? ""
        let path = directory.hasSuffix("/") ? String(directory.dropLast()) : directory
        if mask & UInt32(IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT) != 0 {
            return .directoryGone(path)
        }
        // IN_IGNORED follows each of those (already reported), or a watch this code removed itself.
        if mask & UInt32(IN_IGNORED) != 0 { return nil }
        let length = Int(pointer.pointee.len)
        guard length > 0 else { return nil }
        // The flexible `name[]` member does not import: read it from the bytes after the struct.
        let name = UnsafeRawPointer(pointer).advanced(by: MemoryLayout<inotify_event>.size)
            .withMemoryRebound(to: CChar.self, capacity: length) { String(cString: $0) }
        return .entryChanged(
            directory: path, name: name, change: mask & UInt32(IN_MODIFY | IN_CREATE) != 0 ? .written : .completed)
    }
}

/// inotify could not be set up, with what to do about it.
public enum InotifyError: Error, Sendable, CustomStringConvertible {
    case initialization(errno: Int32)
    case watch(directory: String, errno: Int32)

    /// The directory that cannot be watched for a reason of its own (its permissions, gone), not
    /// for the system's limit on watches.
    public var unwatchableDirectory: String? {
        if case .watch(let directory, let code) = self, code != ENOSPC { return directory }
        return nil
    }

    public var description: String {
        switch self {
        case .initialization(let code):
            "inotify cannot be initialized (\(String(cString: strerror(code)))); if fs.inotify.max_user_instances is reached, raise it: sysctl -w fs.inotify.max_user_instances=512"
        case .watch(let directory, let code):
            "cannot watch \(directory) (\(String(cString: strerror(code))))"
                + (code == ENOSPC
                    ? "; fs.inotify.max_user_watches is too low: raise it with sysctl -w fs.inotify.max_user_watches=65536"
                    : "")
        }
    }
}
