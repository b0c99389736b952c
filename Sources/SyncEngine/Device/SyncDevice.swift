#if canImport(Glibc)
    import Glibc
#endif
import Logging
import RecordSchemas
import SnapshotFormat
import SyncStore
import Synchronization

/// One device taking part in a shared folder: its settings, its store and its shared folder.
///
/// Every command of `syncctl` (and `syncd`'s merge pass) goes through this value.
public final class SyncDevice: Sendable {
    /// The resolved settings.
    public let settings: SyncSettings
    /// This device's ID.
    public let device: DeviceID
    /// The shared folder.
    public let folder: SharedFolder
    /// Why the shared folder cannot be used, when it was opened for a command that only reads the
    /// store (`needsFolder: false`) and the folder is missing; nil otherwise.
    public let folderProblem: String?
    /// What was wrong with the signing key's file when the device opened it (other users could
    /// read it: it is private now), for the program to say; nil when nothing was.
    public let keyProblem: String?
    /// The local store.
    public let store: SyncStore
    /// Where the store's database file is.
    public let storePath: String
    /// The store's file in the state directory.
    public static let storeFileName = "store.sqlite"
    let logger: Logger
    let clock: @Sendable () -> Timestamp
    /// The schemas incoming versions and local edits of declared types must fit (a pass takes
    /// them as they are when it starts).
    public var schemas: SchemaSet { schemasBox.withLock { $0 } }
    private let schemasBox: Mutex<SchemaSet>
    /// Whether a pass gives the memory it freed back to the system (a long-running process).
    public let returnsMemoryAfterPasses: Bool
    /// This device's signing key (in the state directory; made the first time the device is opened).
    private let keyBox: Mutex<DeviceKey>
    /// Warnings for the next pass's report, of something done before it (a rotation finished):
    /// added once the pass's transaction commits.
    let pendingWarnings = Mutex<[String]>([])
    /// The key this device signs its files with.
    public var key: DeviceKey { keyBox.withLock { $0 } }
    /// How far the pass running now has got (for a person watching a long merge).
    public let progress = PassProgress()
    /// The files the last publication of this process renamed into place, not yet reported by
    /// the watcher (see ``isOwnRename(_:)``).
    let renamedIntoPlace = Mutex<Set<String>>([])
    /// For each file, the schema problems last logged (a file with some is read at every pass:
    /// the same ones are logged at debug level only).
    let loggedSchemaProblems = Mutex<[String: String]>([:])

    /// The wall clock, as the contract's timestamps need it.
    public static let wallClock: @Sendable () -> Timestamp = {
        Timestamp(milliseconds: SystemCalls.wallClockMilliseconds())
    }

    /// Opens the device: checks the shared folder, creates the state directory and opens the store.
    ///
    /// - Throws: ``EngineError`` when the folder is missing, the state directory is unusable or
    ///   inside the shared folder, or the store belongs to another device.
    ///
    /// - Parameter returnsMemoryAfterPasses: give the memory a pass freed back to the system when
    ///   it ends (for `syncd`, which runs for days; a one-shot command exits instead).
    /// - Parameter waitingForStore: says that another process holds the store's opening lock
    ///   (it is opening the store, or filling it in a first merge) and that this one waits; it
    ///   gets the message. By default the message is logged as a warning.
    /// - Parameter needsFolder: false for a command that only reads the store (`status`, `list`
    ///   …): a missing shared folder, or none given (an empty ``SyncSettings/sharedFolder``), is
    ///   then ``folderProblem`` instead of an error, so that
    ///   `status` can still show what the last merge saw. Nothing may merge or publish then.
    public init(
        settings: SyncSettings, logger: Logger, clock: @escaping @Sendable () -> Timestamp = SyncDevice.wallClock,
        returnsMemoryAfterPasses: Bool = false, needsFolder: Bool = true, waitingForStore: ((String) -> Void)? = nil
    ) throws {
        self.settings = settings
        self.returnsMemoryAfterPasses = returnsMemoryAfterPasses
        self.logger = logger
        self.clock = clock
        do {
            if settings.sharedFolder.isEmpty && !needsFolder {
                // No folder to list (opening "" fails): nothing can merge or publish.
                folder = SharedFolder(unchecked: "")
                folderProblem =
                    SettingsError.noSharedFolder(configurationFile: nil).description
                    + ". What is shown is what the store held after the last merge"
            } else {
                folder = try SharedFolder(path: settings.sharedFolder)
                folderProblem = nil
            }
        } catch EngineError.sharedFolderMissing(let path, let reason) where !needsFolder {
            // A pass lists the folder first, and that fails alike: nothing can merge or publish.
            folder = SharedFolder(unchecked: path)
            folderProblem =
                EngineError.folderProblem(path: path, reason: reason)
                + ". What is shown is what the store held after the last merge"
        }
        schemasBox = Mutex(try Self.loadSchemas(settings.schemaFiles))
        let state = settings.stateDirectory
        try Self.checkStateOutsideShared(settings)
        try Self.checkDeviceKnown(settings)
        do {
            try SystemCalls.createDirectories(state)
        } catch {
            throw EngineError.stateDirectoryUnusable(path: state, reason: error.description)
        }
        storePath = state + "/" + Self.storeFileName
        do {
            keyBox = Mutex(try DeviceKey.loadOrCreate(in: state))
        } catch let error as SystemCallError {
            throw EngineError.diskFull(error, stateDirectory: state)
                ?? EngineError.stateDirectoryUnusable(path: state + "/" + DeviceKey.fileName, reason: error.description)
        }
        keyProblem = keyBox.withLock({ $0.permissionsOpenToOthers }).map { mode in
            "\(state)/\(DeviceKey.fileName) was open to other users (mode \(String(mode, radix: 8))); it is readable by this user only now. Anyone who read it can sign files as this device: if that may have happened, make a new key (syncctl key --rotate)"
        }
        do {
            // The store serializes its own opening between processes (see OpeningLock).
            let message =
                "waiting for another process that is opening the store \(storePath) or filling it in a first merge (seconds; minutes for millions of records on a slow disk)"
            store = try SyncStore(path: storePath) {
                if let waitingForStore { waitingForStore(message) } else { logger.warning("\(message)") }
            }
        } catch let error as EngineError {
            throw error
        } catch where SyncStore.failure(error) == .damaged {
            throw EngineError.storeDamaged(path: storePath, reason: String(describing: error))
        } catch {
            throw EngineError.diskFull(error, stateDirectory: state)
                ?? EngineError.stateDirectoryUnusable(path: storePath, reason: String(describing: error))
        }
        let now = clock()
        // Read-only commands must not take the store's write lock: only a new store is claimed.
        if let owner = try store.reading({ try $0.owner() }), settings.device == nil || settings.device == owner {
            device = owner
            return
        }
        let (store, given) = (store, settings.device)
        device = try EngineError.sayingDiskFull(stateDirectory: state) {
            try store.transaction { session -> DeviceID in
                let owner = try session.owner()
                switch (owner, given) {
                case (let owner?, let given?) where owner != given:
                    throw EngineError.deviceMismatch(store: owner.rawValue, given: given.rawValue)
                case (let owner?, _):
                    return owner
                case (nil, let given?):
                    try session.claim(for: given, at: now)
                    return given
                case (nil, nil):
                    throw EngineError.noDevice
                }
            }
        }
    }

    /// Refuses to open a state directory without a store when no device ID is given, before
    /// anything is made there: only a store can say which device it is, and a store and key
    /// made without one would stay behind, half made (a later command would take it for a
    /// store, and a mistyped `--state` would no longer be told apart).
    ///
    /// - Throws: ``EngineError/noDevice``.
    public static func checkDeviceKnown(_ settings: SyncSettings) throws {
        guard settings.device == nil else { return }
        let state = settings.stateDirectory
        // Only a state directory that is one (or is not there at all) and holds no store: one that
        // is a file, or a link to a drive not mounted yet, is a problem opening it says (73, which
        // systemd restarts), not a missing ID (78, which it does not).
        do {
            guard try SystemCalls.status(state).kind == .directory else { return }
        } catch where error.errno == ENOENT {
            guard (try? SystemCalls.statusOfLink(state)) == nil else { return }  // (a dangling link)
            throw EngineError.noDevice
        } catch {
            return
        }
        do {
            _ = try SystemCalls.statusOfLink(state + "/" + storeFileName)
        } catch where error.errno == ENOENT {
            throw EngineError.noDevice
        } catch {
            // (Another problem with the directory: opening it says what.)
        }
    }

    /// Whether the state directory holds a store (false: the directory is not there, or holds
    /// none yet).
    ///
    /// A state directory this user may not look into is an error that says so: asked of
    /// `FileManager`, it would look empty, and a command would say "no store" and advise a first
    /// merge (the store of the system's syncd.service, mode 0700, seen by another user). So is a
    /// link to a directory that is not there (a drive not mounted yet), or a path through a file.
    ///
    /// - Throws: ``EngineError/stateDirectoryUnusable(path:reason:)``.
    public static func storeExists(inStateDirectory state: String) throws -> Bool {
        do {
            guard try SystemCalls.status(state).kind == .directory else {
                throw EngineError.stateDirectoryUnusable(path: state, reason: "it is not a directory")
            }
            _ = try SystemCalls.status(state + "/" + storeFileName)
            return true
        } catch let error as SystemCallError where error.errno == ENOENT {
            if error.subject == state, (try? SystemCalls.statusOfLink(state))?.kind == .symbolicLink {
                throw EngineError.stateDirectoryUnusable(
                    path: state,
                    reason: "it is a symbolic link to a directory that is not there: mount the drive it is on, or make the directory")
            }
            return false
        } catch let error as SystemCallError where error.errno == EACCES {
            throw EngineError.stateDirectoryUnusable(
                path: state,
                reason: "\(error.description): this user may not look into it, or into a directory above it. \(syncdStoreAdvice)")
        } catch let error as SystemCallError {
            throw EngineError.stateDirectoryUnusable(path: state, reason: error.description)
        }
    }

    /// How to run syncctl on the store of the system's syncd.service (as the user it runs as).
    static let syncdStoreAdvice =
        "For syncctl on the store of the system's syncd.service: sudo -u syncd syncctl COMMAND --config /etc/syncd/config.json --state /var/lib/syncd, with --shared /srv/syncd/shared for a command that reads the folder"

    /// Refuses a state directory inside the shared folder (or the folder itself), before anything
    /// is created there: the store and the key must never be synced.
    ///
    /// - Throws: ``EngineError/stateInsideShared(state:shared:)``, or
    ///   ``EngineError/stateDirectoryUnusable(path:reason:)`` when a path cannot be resolved.
    public static func checkStateOutsideShared(_ settings: SyncSettings) throws {
        // A folder that cannot be resolved (missing, or a link to an unmounted drive) holds
        // nothing: the folder's own check says what is wrong with it (exit 66, or the note of a
        // command that only reads the store).
        guard !settings.sharedFolder.isEmpty,
            let realShared = try? SystemCalls.resolvedPathOfPossiblyMissing(settings.sharedFolder)
        else { return }
        do {
            let realState = try SystemCalls.resolvedPathOfPossiblyMissing(settings.stateDirectory)
            if realState == realShared || realState.hasPrefix(realShared + "/") {
                throw EngineError.stateInsideShared(state: realState, shared: realShared)
            }
        } catch let error as SystemCallError {
            throw EngineError.stateDirectoryUnusable(path: settings.stateDirectory, reason: error.description)
        }
    }

    /// Uses `schemas` from the next pass or edit on (`syncd` re-reads its schema files on SIGHUP).
    public func replaceSchemas(_ schemas: SchemaSet) {
        schemasBox.withLock { $0 = schemas }
    }

    /// The schema files at `paths`, read and checked together.
    ///
    /// - Throws: ``SettingsError/unreadableSchema(path:reason:)`` naming the first file that cannot be used.
    public static func loadSchemas(_ paths: [String]) throws -> SchemaSet {
        var schemas = SchemaSet()
        for path in paths {
            do {
                // Followed when a link: a configuration file often is one (/etc/… → /usr/share/…).
                let descriptor = try SystemCalls.openForReading(path)
                defer { SystemCalls.close(descriptor) }
                let bytes = try SystemCalls.readAll(descriptor, expectedSize: 4096, path: path)
                schemas = try schemas.merging(try SchemaSet.load(bytes, source: path))
            } catch let error as SchemaFileError {
                // Its sentence names the file and what to change already.
                throw SettingsError.invalidSchema(error.description)
            } catch {
                throw SettingsError.unreadableSchema(path: path, reason: String(describing: error))
            }
        }
        return schemas
    }

    /// The name of this device's own file in the shared folder.
    public var ownFileName: String { SourceFileName.ownFileName(for: device) }

    /// Replaces this device's signing key with a new one and publishes every part of its snapshot
    /// again, signed with it.
    ///
    /// The new key is recorded as the one the parts are signed with as soon as it is made, so that
    /// files signed with the old key stop counting as this device's own (see
    /// `TrustList.previousOwnKey`).
    public func rotateKey() throws -> (key: DeviceKey, report: MergeReport) {
        try locked {
            // Every part is written again, signed with the new key, which the store records before
            // it replaces the old one: a file under this device's name signed with the old key no
            // longer counts as its own (the old key may be why it rotates).
            let key = try DeviceKey.rotate(in: settings.stateDirectory) { key in
                try store.transaction { session in
                    try session.markPartsUnpublished()
                    try session.setSigningKeyOfParts(key.publicKey.text)
                }
            }
            keyBox.withLock { $0 = key }
            return (key, try pass(edit: Optional<(StoreSession, Timestamp) throws -> Void>.none).report)
        }
    }

    /// Takes the state directory's lock for the duration of `work`, with the signing key as the
    /// state directory holds it now (another process may have rotated it).
    func locked<T>(_ work: () throws -> T) throws -> T {
        // A full disk under the store (a commit that found no room rolled back, a lock or key
        // file that could not be written) is said to be one, with what to do.
        try EngineError.sayingDiskFull(stateDirectory: settings.stateDirectory) {
            let lock = try StateLock(stateDirectory: settings.stateDirectory, timeoutSeconds: 30)
            defer { withExtendedLifetime(lock) {} }
            if let key = try DeviceKey.settleUnfinishedRotation(
                in: settings.stateDirectory, recordedKey: { try store.reading { try $0.signingKeyOfParts() } })
            {
                // Its `key --rotate` never said what to tell the other devices: the next report does.
                let note =
                    "a key rotation cut short is finished: this device signs with key \(key.publicKey.text) (fingerprint \(key.publicKey.fingerprint)) now, and publishes every file again, signed with it; devices that trust the old key reject them until told: syncctl trust \(device) \(key.publicKey.text)"
                logger.warning("\(note)")
                pendingWarnings.withLock { $0.append(note) }
                keyBox.withLock { $0 = key }
            }
            if !key.isCurrent(in: settings.stateDirectory) {
                let key = try DeviceKey.loadOrCreate(in: settings.stateDirectory)
                keyBox.withLock { $0 = key }
                logger.notice("signing with a new key", metadata: ["key": "\(key.publicKey.text)"])
            }
            return try work()
        }
    }
}
