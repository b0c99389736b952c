import SnapshotFormat
import SnapshotMerge
import SyncStore

extension SyncDevice {
    /// How many live records `versions` (of one file) would turn into tombstones.
    func deletions(by versions: [ReadOnly.Version], session: StoreSession) throws -> Int {
        guard settings.safety.massDeletionShare < 1 else { return 0 }
        let tombstoned = Set(versions.lazy.filter(\.deleted).map(\.id))
        guard !tombstoned.isEmpty else { return 0 }
        var deletions = 0
        for (id, versions) in Dictionary(grouping: versions.filter { tombstoned.contains($0.id) }, by: \.id) {
            guard let held = try session.record(id), !held.version.deleted else { continue }
            // A record too entangled to merge is refused by the merge, so it deletes nothing.
            let merged = try? RecordMerge.merge(held: held, incoming: versions, limit: settings.recordMergeLimit)
            if merged?.version.deleted == true { deletions += 1 }
        }
        return deletions
    }

    /// Why a file must be held back, nil when it may merge: it would turn more than the set share
    /// of the live records into tombstones at once (and at least the set minimum).
    ///
    /// - Parameter liveRecords: the store's live records before the pass, read when first needed.
    func massDeletionHold(deletions: Int, name: String, session: StoreSession, liveRecords: inout Int?) throws -> String? {
        guard let live = try isMassDeletion(deletions, session: session, liveRecords: &liveRecords) else { return nil }
        return
            "it would delete \(deletions) of the \(live) live records at once, so it is held back and nothing from it is merged\(Self.acceptDeletionsAdvice)'\(name)'"
    }

    /// How the held-back reasons end: what lets the file through.
    static let acceptDeletionsAdvice = "; if the deletions are meant, run: syncctl merge --accept-deletions "

    /// What is said instead of ``acceptDeletionsAdvice`` of a file under this device's own name:
    /// its publication replaces the file, so letting it through later would find nothing.
    static let ownNameHeldBackAdvice =
        "; it is under this device's own name, so this device replaces it with its own file (a copy is kept in the state directory's replaced/): deletions meant by this device are made with syncctl delete"

    /// Why the `files` files of `device` that would delete records in this pass must be held back
    /// together, nil when they may merge: each may be under the valve's limits (a part holds a
    /// sixteenth of a snapshot or less) while together they are over.
    func massDeletionHold(deletions: Int, device: String, files: Int, session: StoreSession, liveRecords: inout Int?)
        throws -> String?
    {
        guard let live = try isMassDeletion(deletions, session: session, liveRecords: &liveRecords) else { return nil }
        return
            "with the other files of device \(device) in this pass (\(files) in all), it would delete \(deletions) of the \(live) live records at once, so they are held back and nothing from them is merged\(Self.acceptDeletionsAdvice)'\(device)'"
    }

    /// The live records, when deleting `deletions` of them at once is over the valve's limits.
    private func isMassDeletion(_ deletions: Int, session: StoreSession, liveRecords: inout Int?) throws -> Int? {
        let safety = settings.safety
        guard safety.massDeletionShare < 1, deletions >= safety.massDeletionMinimum else { return nil }
        if liveRecords == nil { liveRecords = try session.counts().live }
        let live = liveRecords ?? 0
        return Double(deletions) > safety.massDeletionShare * Double(live) ? live : nil
    }

    static func duration(milliseconds: Int64) -> String {
        let minutes = milliseconds / 60_000
        if minutes < 60 { return "\(minutes) min" }
        return "\(minutes / 60) h \(minutes % 60) min"
    }
}

/// What each device's files would delete in one pass, those the valve did not hold back on their own.
struct DeletionsByDevice {
    private(set) var totals: [String: (count: Int, files: [String])] = [:]

    /// A file of `device` (nil: a file whose device is not known, counted on its own only) that
    /// would delete `count` live records.
    mutating func add(_ count: Int, by device: String?, in file: String) {
        guard count > 0, let device else { return }
        totals[device, default: (0, [])].count += count
        totals[device, default: (0, [])].files.append(file)
    }
}

extension Set<String> {
    /// Whether `--accept-deletions` names `file`, or the device that published it.
    func accepts(_ file: String, of device: String?) -> Bool {
        contains(file) || device.map(contains) == true
    }
}

/// The versions of one file dated more than the margin in this device's future, by device,
/// gathered a version at a time (a pass reads a file's records one group at a time): they still
/// merge (the contract's last-writer-wins), but a wrong clock is found instead of silently winning.
struct FutureDates: Sendable {
    let now: Timestamp
    private let limit: Int64
    private var latestByDevice: [String: (count: Int, latest: Timestamp)] = [:]

    init(now: Timestamp, margin: Int64) {
        self.now = now
        limit = now.milliseconds + margin
    }

    mutating func add(_ version: ReadOnly.Version) {
        guard let stamp = version.lastModified, stamp.milliseconds > limit else { return }
        let device = version.modifiedBy?.rawValue ?? "(unnamed device)"
        let seen = latestByDevice[device]
        latestByDevice[device] = ((seen?.count ?? 0) + 1, max(seen?.latest ?? stamp, stamp))
    }

    /// Takes in what another part of the same file gave.
    mutating func add(_ other: FutureDates) {
        for (device, seen) in other.latestByDevice {
            let mine = latestByDevice[device]
            latestByDevice[device] = ((mine?.count ?? 0) + seen.count, max(mine?.latest ?? seen.latest, seen.latest))
        }
    }

    /// One warning per device, in the order of their names, for the first few devices; one for
    /// all the others (a file of versions by 100,000 made-up devices would otherwise give as many
    /// lines at every pass).
    func warnings() -> [String] {
        let devices = latestByDevice.sorted { $0.key < $1.key }
        var lines = devices.prefix(Self.devicesNamed).map { device, seen in
            let ahead = SyncDevice.duration(milliseconds: seen.latest.milliseconds - now.milliseconds)
            return
                "\(seen.count) version(s) by \(device) are dated in this device's future, up to \(seen.latest.written) (\(ahead) ahead of this clock): check the clock of \(device) or of this device (an edit of a version from a clock ahead is dated just after it, so a device with a correct clock can be named here too)"
        }
        let others = devices.dropFirst(Self.devicesNamed)
        if let latest = others.map(\.value.latest).max() {
            let count = others.reduce(0) { $0 + $1.value.count }
            lines.append(
                "\(count) version(s) by \(others.count) other device(s) are dated in this device's future too, up to \(latest.written): check their clocks"
            )
        }
        return lines
    }

    /// How many devices the warnings name one by one.
    static let devicesNamed = 5
}
