import SyncStore

#if canImport(Glibc)
    import Glibc
#endif

/// What stops a command, with what to do about it.
public enum EngineError: Error, Sendable, CustomStringConvertible {
    /// The shared folder is missing or not a directory.
    case sharedFolderMissing(path: String, reason: String)
    /// The state directory cannot be created or used.
    case stateDirectoryUnusable(path: String, reason: String)
    /// The disk holding the state directory is full: the store (or the key) could not be written.
    case stateDiskFull(path: String, reason: String)
    /// The store's file is not a database, or a damaged one.
    case storeDamaged(path: String, reason: String)
    /// The state directory is inside the shared folder.
    case stateInsideShared(state: String, shared: String)
    /// Another process holds the state directory's lock.
    case stateLocked(path: String, holder: String)
    /// No device ID: the store is new and none was given.
    case noDevice
    /// The store belongs to another device.
    case deviceMismatch(store: String, given: String)
    /// Publishing this device's file failed; the store is intact.
    case publishFailed(path: String, reason: String, advice: String?)
    /// The record does not exist.
    case noSuchRecord(String)
    /// A local edit that cannot be made as asked.
    case invalidEdit(String)
    /// Another syncd already runs on this state directory.
    case daemonRunning(pid: String, stateDirectory: String)
    /// An edit's or resolution's record changed since the caller saw it; only the merge was kept.
    case changedSinceSeen(id: String)
    /// A resolution of a record that, once merged, has no conflicts left (resolved or superseded
    /// meanwhile, or never in conflict).
    case resolvedAlready(id: String)
    /// A resolution of a record whose tag, once merged, is not the one the person gave as seen.
    case notAsSeen(id: String, seen: String, now: String)

    /// `error` as the full disk under the state directory `directory` it is when it is one: SQLite's
    /// "database or disk is full"; ENOSPC or EDQUOT writing a file in `directory` (the key, the
    /// lock; not one in the shared folder); or SQLite's I/O error while the file system has less
    /// than 1 MiB left (SQLite could not extend a file). Nil when it is another error.
    static func diskFull(_ error: any Error, stateDirectory directory: String) -> EngineError? {
        if let failure = error as? SystemCallError {
            let inState = failure.subject == directory || failure.subject.hasPrefix(directory + "/")
            guard inState, failure.errno == ENOSPC || failure.errno == EDQUOT else { return nil }
            return .stateDiskFull(path: directory, reason: failure.description)
        }
        switch SyncStore.failure(error) {
        case .diskFull?: return .stateDiskFull(path: directory, reason: String(describing: error))
        case .inputOutput? where (SystemCalls.availableBytes(at: directory) ?? .max) < 1 << 20:
            return .stateDiskFull(path: directory, reason: String(describing: error))
        default: return nil
        }
    }

    /// Runs `body`, throwing what it throws as ``diskFull(_:stateDirectory:)`` says.
    static func sayingDiskFull<T>(stateDirectory directory: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch {
            throw diskFull(error, stateDirectory: directory) ?? error
        }
    }

    /// What is wrong with the shared folder at `path`, and what to check.
    static func folderProblem(path: String, reason: String) -> String {
        "the shared folder \(path) cannot be used (\(reason)); check --shared, that the drive is mounted, and that this user may read and write the folder"
    }

    /// Whether this is an edit refused on the record as its merge left it (nothing left to
    /// resolve, deleted already, another type, no such record, no schema fits): that merge is
    /// kept and published all the same.
    public var isRefusedEdit: Bool {
        switch self {
        case .invalidEdit, .noSuchRecord: true
        default: false
        }
    }

    public var description: String {
        switch self {
        case .sharedFolderMissing(let path, let reason):
            Self.folderProblem(path: path, reason: reason) + ". Nothing was changed"
        case .stateDirectoryUnusable(let path, let reason) where path.hasSuffix("/signing.key"):
            "this device's signing key \(path) cannot be used: \(reason)"
        case .stateDirectoryUnusable(let path, let reason):
            "the state directory \(path) cannot be used (\(reason)); check --state and its permissions"
        case .stateDiskFull(let path, let reason):
            "the disk holding the state directory \(path) is full (\(reason)): free some space there and try again. Nothing was saved: the store is as it was before (an edit asked for was not made; syncd tries its merge again by itself)"
        case .storeDamaged(let path, let reason):
            "the store \(path) is damaged (\(reason)); nothing was changed. Put back the store of a backup, all of its files (store.sqlite, store.sqlite-wal); or move them aside and make a new store from the shared folder: if this device trusted other devices' keys, trust them again first (syncctl trust DEVICE KEY --device ID: a new store trusts no one, and its first merge would take in every file), then run syncctl merge --device ID. This device's records are in the files it published; only edits it had not published yet are lost"
        case .stateInsideShared(let state, let shared):
            "the state directory \(state) is inside the shared folder \(shared); the store must never be synced: choose another --state"
        case .stateLocked(let path, let holder):
            "another syncd or syncctl (PID \(holder.isEmpty ? "unknown" : holder)) holds \(path); try again when it is done"
        case .noDevice:
            "this state directory has no device yet: give this device's ID the first time (--device ID, SYNCD_DEVICE, or \"device\" in the configuration file: the one --config names, else $XDG_CONFIG_HOME/syncd/config.json). (\(SyncDevice.syncdStoreAdvice))"
        case .deviceMismatch(let store, let given):
            "this state directory belongs to device \"\(store)\", not \"\(given)\"; use another --state for \"\(given)\""
        case .publishFailed(let path, let reason, let advice):
            "could not publish \(path): \(reason)\(advice.map { " (\($0))" } ?? ""); the merged state is safe in the store and is published at the next merge (syncd tries again by itself)"
        case .changedSinceSeen(let id):
            "record \(id) changed as this command merged the folder (another device's version or resolution arrived): nothing was edited or resolved, so as not to supersede what nobody saw. Look again (syncctl conflicts and get show the record as merged now); to resolve, choose by the version's tag"
        case .resolvedAlready(let id):
            "record \(id) has no conflicts now (resolved already, here or on another device, or superseded by another device's edit): nothing was resolved. syncctl get \(id) shows it as it is"
        case .notAsSeen(let id, let seen, let now):
            "record \(id) is not as seen: its tag is \(now) now, not \(seen) (another device's version or resolution arrived since, or the tag is mistyped): nothing was resolved, so as not to supersede what nobody saw. Look again with syncctl conflicts, which shows the record as it is and the --seen tag to give"
        case .noSuchRecord(let id):
            "no record with id \(id); see syncctl list --deleted"
        case .invalidEdit(let reason):
            reason
        case .daemonRunning(let pid, let state):
            "another syncd (PID \(pid.isEmpty ? "unknown" : pid)) is already running on the state directory \(state); stop it first, or give this one its own --state"
        }
    }
}
