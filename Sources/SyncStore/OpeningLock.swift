#if canImport(Glibc)
    import Glibc
#endif

/// Serializes creating and migrating the store between processes (`syncd` and `syncctl` may open
/// a new store, or an old one after an update, at the same moment; SQLite alone would let two of
/// them run the same migration).
///
/// An exclusive `flock(2)` on `<database>.lock`, held only while the store is opened. The store
/// module's only libc calls: it must be safe to open on its own, whoever opens it.
struct OpeningLock: ~Copyable {
    private let descriptor: Int32

    /// Waits for the lock. Other openers hold it for milliseconds, but a first merge holds it
    /// until it commits (see `SyncStore.fillingEmptyStore`): `waiting` runs once if the lock is
    /// taken, before the wait.
    init(databasePath: String, waiting: (() -> Void)? = nil) throws(StoreOpeningError) {
        let path = databasePath + ".lock"
        descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { throw StoreOpeningError(path: path, errno: errno) }
        if let waiting {
            var taken: Int32
            repeat { taken = flock(descriptor, LOCK_EX | LOCK_NB) } while taken != 0 && errno == EINTR
            if taken == 0 { return }
            if errno == EWOULDBLOCK { waiting() }
        }
        while flock(descriptor, LOCK_EX) != 0 {
            guard errno == EINTR else {
                // deinit closes the descriptor: it runs when an initializer throws after every
                // property is set (closing it here too could close another file's).
                throw StoreOpeningError(path: path, errno: errno)
            }
        }
    }

    deinit {
        close(descriptor)
    }
}

/// The store's opening lock could not be taken.
public struct StoreOpeningError: Error, CustomStringConvertible {
    /// The lock file.
    public var path: String
    /// errno right after the failed call.
    public var errno: Int32

    public var description: String { "cannot lock \(path): \(String(cString: strerror(errno)))" }
}
