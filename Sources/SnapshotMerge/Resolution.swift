import SnapshotFormat

/// How a person resolves a record in conflict.
public enum Resolution: Hashable, Sendable {
    /// Keep one version's content as it is: 0 is the current version, 1… the conflicts greatest first.
    case take(index: Int)
    /// Keep the content of the version whose ``ReadOnly/Version/tag`` this is.
    case takeTagged(String)
    /// Keep the content of the version `device` made (its greatest, when it made several).
    case takeFrom(DeviceID)
    /// New content: the current version's type and unknown keys, these fields, this schema version.
    case content(fields: JSONObject, schemaVersion: Int64)
}

/// Why a local edit or resolution cannot be made; nothing is written.
public enum LocalEditError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The record has no conflicts.
    case nothingToResolve(RecordID)
    /// `take` named a version that does not exist.
    case noSuchVersion(index: Int, count: Int)
    /// This device's count in the record's vector is already 2^53−1, the largest the format allows.
    case countExhausted(RecordID, DeviceID)
    /// No version of the record has this tag (it was superseded, or never was one of them).
    case noVersionTagged(RecordID, String)
    /// No version of the record was made by this device.
    case noVersionFrom(RecordID, DeviceID)
    /// A schema version outside 1…2^53−1, which every reader refuses.
    case invalidSchemaVersion(Int64)
    /// Fields nested deeper than a published record may hold them (``LocalEdit/maximumFieldsDepth``).
    case fieldsTooDeep(RecordID)

    public var description: String {
        switch self {
        case .nothingToResolve(let id):
            "record \(id) has no conflicts to resolve (resolved already, here or on another device, or never in conflict): nothing was resolved"
        case .noSuchVersion(let index, let count):
            "there is no version \(index): choose 0 (the current version) to \(count - 1)"
        case .countExhausted(let id, let device):
            "record \(id) cannot be edited by \(device): its edit count there is already 2^53-1, the largest the format allows (a version that high was written by hand); create a new record instead"
        case .noVersionTagged(let id, let tag):
            "record \(id) has no version tagged \(tag) (another device's edit or resolution may have superseded it): see syncctl conflicts"
        case .noVersionFrom(let id, let device):
            "no version of \(id) was made by \(device); see syncctl conflicts"
        case .invalidSchemaVersion(let number):
            "the schema version \(number) is out of range: it must be from 1 to 9007199254740991 (2^53-1), or no device could read the version"
        case .fieldsTooDeep:
            // (Without the id: a new record's is one nobody has seen yet.)
            "the new version's fields, or its other keys, are nested deeper than \(LocalEdit.maximumFieldsDepth) levels of arrays and objects (counting the fields object): published as a conflict entry of a record, the new version would pass the \(StrictJSON.maximumDepth) levels readers accept, and devices holding it so could not share it"
        }
    }
}

extension LocalEdit {
    /// Writes the version that resolves every conflict of `current`, as the contract describes.
    ///
    /// Its vector is the pointwise maximum of the current version's and every conflict's, with
    /// this device's count raised by 1, so every device drops the conflicts when it merges it.
    public static func resolve(
        current: ReadOnly.Record, with resolution: Resolution, device: DeviceID, now: Timestamp
    ) throws(LocalEditError) -> LocalEditOutcome {
        guard !current.conflicts.isEmpty else { throw .nothingToResolve(current.id) }
        let all = [current.version] + current.conflicts
        var content: ReadOnly.Version
        switch resolution {
        case .take(let index):
            guard all.indices.contains(index) else { throw .noSuchVersion(index: index, count: all.count) }
            content = all[index]
        case .takeTagged(let tag):
            guard let tagged = all.first(where: { $0.tag == tag.lowercased() }) else {
                throw .noVersionTagged(current.id, tag)
            }
            content = tagged
        case .takeFrom(let maker):
            // The current version first, then the conflicts greatest first: its greatest.
            guard let made = all.first(where: { $0.modifiedBy == maker }) else {
                throw .noVersionFrom(current.id, maker)
            }
            content = made
        case .content(let fields, let schemaVersion):
            content = current.version
            content.deleted = false
            content.fields = fields
            content.schemaVersion = schemaVersion
        }
        var vector = VersionVector.pointwiseMaximum(of: all.map(\.versionVector))
        guard vector[device] < VersionVector.maximumCount else { throw .countExhausted(current.id, device) }
        vector[device] = vector[device] + 1
        let version = try stamped(content, vector: vector, after: all, device: device, now: now)
        let kept: ReadOnly.Version? = if case .content = resolution { nil } else { content }
        var outcome = LocalEditOutcome(record: ReadOnly.Record(version: version), supersededOwn: [], supersededOthers: [])
        outcome.resolved = (kept, all)
        return outcome
    }
}
