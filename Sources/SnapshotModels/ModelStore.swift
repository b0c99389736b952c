import Logging
import SnapshotFormat
import SyncEngine
import Synchronization

/// An app's typed view of a device's synced records: read, query, edit, resolve and observe models.
///
/// Every write goes through the device (``SyncDevice``), which merges the shared folder first and
/// stamps the version as the contract says (`schemaVersion`, the clock rule, the vector,
/// `modifiedBy`), then publishes. Reading never writes: older versions are migrated in memory.
///
/// - Important: the methods block on SQLite and files, like ``SyncDevice``'s. Call them from a
///   thread that may block (not in a tight loop on Swift's cooperative pool).
public final class ModelStore: Sendable {
    /// The device the records live on.
    public let device: SyncDevice
    let logger: Logger
    let signal = ChangeSignal()
    private let publication = Mutex<String?>(nil)

    /// Why this device's files could not be published after the last save or sync (a full disk, a
    /// shared folder mounted read-only), nil when they were. The save itself is kept in the store,
    /// and the next save or ``sync()`` publishes it: show the device as not synced meanwhile.
    public var lastPublishFailure: String? { publication.withLock { $0 } }

    /// Notes how an edit's publication went, and returns its report.
    @discardableResult
    func noted(_ report: EditReport) -> EditReport {
        publication.withLock { $0 = report.publishFailure }
        if let failure = report.publishFailure {
            logger.warning("saved, but this device's files could not be published: \(failure)")
        }
        return report
    }

    /// A store on an open device.
    public init(device: SyncDevice, logger: Logger = ModelStore.quietLogger) {
        self.device = device
        self.logger = logger
    }

    /// Opens the device with state in `stateDirectory`, syncing through `sharedFolder`.
    ///
    /// - Parameter device: this device's ID; needed the first time, the store remembers it.
    /// - Throws: the engine's error when the folder is missing, the state directory is unusable,
    ///   or belongs to another device.
    public convenience init(
        sharedFolder: String, stateDirectory: String, device: DeviceID?, logger: Logger = ModelStore.quietLogger
    ) throws {
        let settings = SyncSettings(sharedFolder: sharedFolder, stateDirectory: stateDirectory, device: device)
        self.init(device: try SyncDevice(settings: settings, logger: logger), logger: logger)
    }

    /// A logger that drops everything: the default.
    public static let quietLogger = Logger(label: "SnapshotModels") { _ in SwiftLogNoOpLogHandler() }

    /// This device's ID.
    public var thisDevice: DeviceID { device.device }

    /// Merges every changed file of the shared folder and publishes this device's file if it changed.
    @discardableResult
    public func sync() throws -> SyncSummary {
        defer { signal.bump() }
        do {
            let summary = SyncSummary(try device.merge())
            publication.withLock { $0 = nil }
            return summary
        } catch let error as EngineError {
            if case .publishFailed = error { publication.withLock { $0 = error.description } }
            throw error
        }
    }

    /// Throws when the model's type name or migration plan is wrong (programming mistakes).
    func check<Model: SyncedModel>(_ model: Model.Type) throws {
        guard (1...128).contains(Model.typeName.unicodeScalars.count) else {
            throw ModelError.invalidTypeName(Model.typeName)
        }
        if let mistake = Model.migrationPlan.mistake {
            throw ModelError.invalidMigrationPlan(type: Model.typeName, mistake: mistake)
        }
    }
}
