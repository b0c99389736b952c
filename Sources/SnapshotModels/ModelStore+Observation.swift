import Dispatch
import SnapshotFormat
import Synchronization

/// Which records of a model changed.
public struct ModelChange: Hashable, Sendable {
    /// The ids of records that were added, changed, deleted or gained or lost conflicts.
    public var ids: Set<RecordID>
}

extension ModelStore {
    /// A stream that yields each time records of `model` change: saves, deletions, resolutions and
    /// syncs through this store at once, and other processes' writes to the store (`syncd`'s merge
    /// passes, `syncctl`) within `interval`.
    ///
    /// Other processes are noticed by polling the store's `PRAGMA data_version`, which changes
    /// exactly when another connection commits and costs one cheap query per `interval`; only then
    /// are the model's records read again, and compared with the last ones seen. The polling runs
    /// in the task that iterates the stream, and stops when that task is cancelled or stops.
    ///
    /// `interval` is taken between 10 ms and one day (a shorter one would poll without pause).
    /// Making the stream reads the type's records once, on the calling thread (its starting
    /// point): call it where a blocking call is allowed.
    ///
    /// - Important: a stream has one consumer. Changes made by calling the ``SyncDevice`` directly
    ///   in this process are not seen: go through the store (``sync()``).
    public func changes<Model: SyncedModel>(
        of model: Model.Type, every interval: Duration = .milliseconds(500)
    ) -> AsyncStream<ModelChange> {
        let watch = ModelWatch(store: self, type: Model.typeName)
        let interval = min(max(interval, .milliseconds(10)), .seconds(86_400))
        return AsyncStream(unfolding: { await watch.next(every: interval) })
    }
}

/// What one observer saw last: the store token, this process's change count and a fingerprint
/// of each record of the type.
final class ModelWatch: Sendable {
    private struct Seen: Sendable {
        var token: Int?
        var generation: Int
        var fingerprints: [RecordID: Int]
    }

    private let store: ModelStore
    private let type: String
    private let seen: Mutex<Seen>

    /// Takes the starting point now, so that any change after the stream was made is reported.
    init(store: ModelStore, type: String) {
        self.store = store
        self.type = type
        let generation = store.signal.generation
        let token = try? store.device.store.externalChangeToken()
        seen = Mutex(Seen(token: token, generation: generation, fingerprints: Self.fingerprints(store, type) ?? [:]))
    }

    /// The next change, or nil when the consuming task is cancelled.
    func next(every interval: Duration) async -> ModelChange? {
        while !Task.isCancelled {
            let generation = store.signal.generation
            let (store, type) = (self.store, self.type)
            let token = await offThePool { try? store.device.store.externalChangeToken() }
            let last = seen.withLock { $0 }
            if generation != last.generation || token != last.token {
                // A store that cannot be read now (busy, or a disk problem) is read again next time.
                if let now = await offThePool({ Self.fingerprints(store, type) }) {
                    seen.withLock { $0 = Seen(token: token, generation: generation, fingerprints: now) }
                    let ids = Set(now.keys).union(last.fingerprints.keys).filter { now[$0] != last.fingerprints[$0] }
                    if !ids.isEmpty { return ModelChange(ids: ids) }
                }
            }
            await store.signal.wait(after: generation, timeout: interval)
        }
        return nil
    }

    /// A hash of every record of the type, tombstones included; nil when the store cannot be read.
    private static func fingerprints(_ store: ModelStore, _ type: String) -> [RecordID: Int]? {
        guard let records = try? store.device.records(type: type, includeDeleted: true) else { return nil }
        return Dictionary(uniqueKeysWithValues: records.map { ($0.id, $0.hashValue) })
    }
}

/// Runs blocking work (SQLite) on a dispatch queue, never on Swift's cooperative pool.
func offThePool<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        DispatchQueue.global(qos: .utility).async { continuation.resume(returning: work()) }
    }
}
