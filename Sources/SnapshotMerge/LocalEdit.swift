import SnapshotFormat

/// What a local edit made: the record as this device now holds it, and what the edit superseded.
public struct LocalEditOutcome: Hashable, Sendable {
    /// The record after the edit: the new version and the conflicts it does not dominate.
    public var record: ReadOnly.Record
    /// Conflicts made by this device that the new version supersedes (other than benign ones).
    public var supersededOwn: [ReadOnly.Version]
    /// Other devices' conflicts that the new vector happens to dominate (only hand-made vectors
    /// cause this); a tool names them.
    public var supersededOthers: [ReadOnly.Version]
    /// For a resolution: the version whose content it kept (nil for new fields), and every
    /// version it supersedes (the current one and each conflict), for a tool to name.
    public var resolved: (kept: ReadOnly.Version?, superseded: [ReadOnly.Version])? = nil
    /// Whether the edit changes nothing: `record` is the current record, and no version is made.
    public var isUnchanged = false

    /// The outcome of an edit that makes no version: `record` stays as it is.
    public static func unchanged(_ record: ReadOnly.Record) -> Self {
        LocalEditOutcome(record: record, supersededOwn: [], supersededOthers: [], isUnchanged: true)
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.record == rhs.record && lhs.supersededOwn == rhs.supersededOwn
            && lhs.supersededOthers == rhs.supersededOthers && lhs.resolved?.kept == rhs.resolved?.kept
            && lhs.resolved?.superseded == rhs.resolved?.superseded && lhs.isUnchanged == rhs.isUnchanged
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(record)
        hasher.combine(supersededOwn)
        hasher.combine(supersededOthers)
    }

    /// The new version.
    public var version: ReadOnly.Version { record.version }
}

/// Making a version locally, exactly as the contract's "Making a version locally" says.
public enum LocalEdit {
    /// Puts `fields` as a new version of a record (a new record when `current` is nil).
    ///
    /// - Important: the record keeps its type; `type` is used only for a new record.
    public static func put(
        id: RecordID, type: String, fields: JSONObject, schemaVersion: Int64,
        current: ReadOnly.Record?, device: DeviceID, now: Timestamp
    ) throws(LocalEditError) -> LocalEditOutcome {
        guard let current else {
            try checkReadable(
                ReadOnly.Version(id: id, type: type, schemaVersion: schemaVersion, fields: fields))
            let version = ReadOnly.Version(
                id: id, type: type, schemaVersion: schemaVersion, lastModified: min(now, Timestamp.latest), modifiedBy: device,
                versionVector: VersionVector([device: 1]), fields: fields)
            return LocalEditOutcome(record: ReadOnly.Record(version: version), supersededOwn: [], supersededOthers: [])
        }
        return try edit(
            current, content: putContent(fields: fields, schemaVersion: schemaVersion, on: current.version), device: device,
            now: now)
    }

    /// The content a put makes of `version`: its type and unknown keys, these fields and schema version.
    private static func putContent(fields: JSONObject, schemaVersion: Int64, on version: ReadOnly.Version)
        -> ReadOnly.Version
    {
        var content = version
        content.schemaVersion = schemaVersion
        content.deleted = false
        content.fields = fields
        return content
    }

    /// Whether putting `fields` with `schemaVersion` on `current` would change nothing a reader
    /// sees: the record has no conflict, its current version has a vector (a legacy version put
    /// again gets one), and it already holds exactly this content. A tool may then make no version
    /// at all (``LocalEditOutcome/unchanged(_:)``).
    public static func putChangesNothing(fields: JSONObject, schemaVersion: Int64, current: ReadOnly.Record) -> Bool {
        current.version.hasVector && current.conflicts.isEmpty
            && putContent(fields: fields, schemaVersion: schemaVersion, on: current.version)
                .hasSameContent(as: current.version)
    }

    /// Deletes a record: a tombstone that carries no fields and keeps unknown keys.
    public static func delete(
        current: ReadOnly.Record, schemaVersion: Int64, device: DeviceID, now: Timestamp
    ) throws(LocalEditError) -> LocalEditOutcome {
        var content = current.version
        content.schemaVersion = schemaVersion
        content.deleted = true
        content.fields = JSONObject()
        return try edit(current, content: content, device: device, now: now)
    }

    private static func edit(
        _ current: ReadOnly.Record, content: ReadOnly.Version, device: DeviceID, now: Timestamp
    ) throws(LocalEditError) -> LocalEditOutcome {
        let winner = current.version
        var highestOwn = winner.versionVector[device]
        var seen = [winner.versionVector]
        for conflict in current.conflicts {
            highestOwn = max(highestOwn, conflict.versionVector[device])
            if conflict.hasSameContent(as: winner) || conflict.modifiedBy == device {
                seen.append(conflict.versionVector)
            }
        }
        // Never write a count the format does not allow: refuse instead of publishing an unreadable version.
        guard highestOwn < VersionVector.maximumCount else { throw .countExhausted(current.id, device) }
        var vector = VersionVector.pointwiseMaximum(of: seen)
        vector[device] = highestOwn + 1
        let kept = current.conflicts.filter { !$0.versionVector.isDominated(by: vector) }
        let dropped = current.conflicts.filter { $0.versionVector.isDominated(by: vector) }
        let superseded = dropped.filter { !$0.hasSameContent(as: winner) }
        let version = try stamped(content, vector: vector, after: [winner] + dropped, device: device, now: now)
        return LocalEditOutcome(
            record: ReadOnly.Record(version: version, conflicts: kept),
            supersededOwn: superseded.filter { $0.modifiedBy == device },
            supersededOthers: superseded.filter { $0.modifiedBy != device })
    }

    /// How deep a local edit's fields may nest (the fields object is level 1): what a reader
    /// accepts (``StrictJSON/maximumDepth``) less the levels around the fields when the version is
    /// published as a conflict entry of a record (file, `records`, record, `conflicts`, entry).
    /// Deeper fields would be refused by every device: the edit is refused instead.
    public static let maximumFieldsDepth = StrictJSON.maximumDepth - 5

    /// Refuses content no reader would accept: a schema version outside 1…2^53−1, fields nested
    /// deeper than ``maximumFieldsDepth``, or other keys (an edit keeps the current version's)
    /// whose values are (they sit at the level of `fields`).
    static func checkReadable(_ content: ReadOnly.Version) throws(LocalEditError) {
        guard (1...VersionVector.maximumCount).contains(content.schemaVersion) else {
            throw .invalidSchemaVersion(content.schemaVersion)
        }
        guard content.encodedFields.nestingDepth <= maximumFieldsDepth,
            content.unknownKeys.count == 0 || EncodedObject(content.unknownKeys).nestingDepth <= maximumFieldsDepth + 1
        else { throw .fieldsTooDeep(content.id) }
    }

    /// `lastModified` = max(now, 1 ms after every version the new one supersedes), so the new
    /// version sorts after them even when another device's clock runs ahead. The content is
    /// checked first (``checkReadable(_:)``): every edit comes through here.
    static func stamped(
        _ content: ReadOnly.Version, vector: VersionVector, after superseded: [ReadOnly.Version],
        device: DeviceID, now: Timestamp
    ) throws(LocalEditError) -> ReadOnly.Version {
        try checkReadable(content)
        var version = content
        let latest = superseded.compactMap(\.lastModified).max()
        var stamp = now
        if let latest, latest.milliseconds + 1 > now.milliseconds {
            stamp = Timestamp(milliseconds: latest.milliseconds + 1)
        }
        // After 9999-12-31T23:59:59.999Z no reader accepts a time: an edit of a version dated
        // there (a clock far wrong, or a hostile writer) is dated there too, not refused, which
        // would leave the record uneditable by anyone, for good. Its vector dominates every version
        // it supersedes, which the merge's first step drops whatever their time (docs/format.md,
        // reading 27).
        version.lastModified = min(stamp, Timestamp.latest)
        version.modifiedBy = device
        version.versionVector = vector
        return version
    }
}
