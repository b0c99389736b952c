import SnapshotFormat

/// A record of a model as this device holds it, read in this release's shape.
///
/// Its properties forward to ``value``: `record.name` is `record.value.name`, and key paths such
/// as `\.name` work in predicates and ``SortKey``s.
@dynamicMemberLookup
public struct ModelRecord<Model: SyncedModel>: Hashable, Sendable, Identifiable {
    /// The record's identity across all devices.
    public let id: RecordID
    /// The content, migrated to ``SyncedModel/ReadOnly`` when it was stored in an older version.
    public let value: Model.ReadOnly
    /// The `schemaVersion` the version was stored with (lower than the model's when migrated).
    public let storedSchemaVersion: Int64
    /// When the current version was made.
    public let lastModified: Timestamp?
    /// The device that made the current version.
    public let modifiedBy: DeviceID?
    /// Whether this device made the current version: only then is its content editable with
    /// ``ModelStore/update(_:to:)`` and only then may a backfill fill it in.
    public let isMadeHere: Bool
    /// How many concurrent versions with other content wait to be resolved.
    public let unresolvedConflicts: Int
    /// The version as stored, to notice a change since reading.
    let stored: ReadOnly.Version
    /// Fields this release does not know, carried over when the record is edited here.
    let leftoverFields: Leftovers

    /// Whether the value was migrated from an older stored version.
    public var isMigrated: Bool { storedSchemaVersion != Model.schemaVersion }

    /// A property of ``value``.
    public subscript<Property>(dynamicMember property: KeyPath<Model.ReadOnly, Property>) -> Property {
        value[keyPath: property]
    }
}

/// A record of the model's type that this release cannot read, kept verbatim and reported.
public struct PassedOverRecord: Hashable, Sendable {
    /// Why it cannot be read.
    public enum Reason: Hashable, Sendable {
        /// Written by a newer release (`stored` > the model's schema version).
        case newerSchema(stored: Int64, known: Int64)
        /// A schema version the migration plan does not know (older than its first, or a gap).
        case unknownSchema(stored: Int64, known: [Int64])
        /// The fields do not fit the shape of the version they carry.
        case unreadable(String)
    }

    /// The record's id.
    public let id: RecordID
    /// The current version exactly as stored.
    public let version: ReadOnly.Version
    /// Why it was passed over.
    public let reason: Reason

    /// The reason as a sentence for a person.
    public var explanation: String {
        switch reason {
        case .newerSchema(let stored, let known):
            "written with schemaVersion \(stored) by a newer release (this one knows up to \(known)): kept as it is"
        case .unknownSchema(let stored, let known):
            "written with schemaVersion \(stored), which this release's migration plan does not have (it has \(known.map(String.init).joined(separator: ", "))): kept as it is"
        case .unreadable(let reason):
            "its fields do not fit schemaVersion \(version.schemaVersion): \(reason); kept as it is"
        }
    }
}

/// What a fetch found: the records it can read, and the ones it passed over.
public struct FetchResult<Model: SyncedModel>: Sendable {
    /// The matching records, in the requested order.
    public var records: [ModelRecord<Model>]
    /// Live records of the type that this release cannot read (every one, whatever the predicate).
    public var passedOver: [PassedOverRecord]
}
