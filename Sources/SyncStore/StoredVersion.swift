import GRDB

/// One stored version of a record: the storage contract's row for the `version` table.
///
/// Position 0 is the record's current version; 1, 2, … are its conflicts, greatest first.
/// Kept apart from the wire type (`ReadOnly.Version`): ``StoredVersion+Wire.swift`` maps them.
public struct StoredVersion: Codable, Hashable, Sendable, FetchableRecord, PersistableRecord {
    public static let databaseTableName = "version"

    /// The record's upper-case UUID.
    public var recordID: String
    /// 0 for the current version, 1… for conflicts greatest first.
    public var position: Int
    /// The model's name.
    public var type: String
    /// The schema version stamped on the version.
    public var schemaVersion: Int64
    /// Milliseconds since the epoch, nil for a version without `lastModified`.
    public var lastModified: Int64?
    /// The device that made the version.
    public var modifiedBy: String?
    /// The version vector as canonical JSON (`{}` when empty).
    public var versionVector: String
    /// Whether the version is a tombstone.
    public var deleted: Bool
    /// `fields` as canonical JSON, kept verbatim in meaning.
    public var fields: String
    /// Keys the format does not know, as a canonical JSON object (`{}` when none).
    public var unknownKeys: String
}

/// One record's summary: the `record` table, what `list`, `status` and `conflicts` query.
public struct StoredRecord: Codable, Hashable, Sendable, FetchableRecord, PersistableRecord {
    public static let databaseTableName = "record"

    /// The record's upper-case UUID.
    public var id: String
    /// The current version's type.
    public var type: String
    /// Whether the current version is a tombstone.
    public var deleted: Bool
    /// How many conflicts differ in content from the current version (need a person).
    public var unresolvedConflicts: Int
    /// How many conflicts the record holds in all (benign ones included).
    public var conflicts: Int
    /// When this device last changed its copy of the record (ms since the epoch).
    public var changedAt: Int64
}
