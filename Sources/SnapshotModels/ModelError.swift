import SnapshotFormat

/// Why a model operation did nothing, and what to do instead. Nothing of the operation was
/// written; the merge it ran first may have been kept (``changedSinceRead(id:)``).
public enum ModelError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The record's current version was made by another device: its content is read-only here.
    case foreignRecord(id: RecordID, type: String, madeBy: DeviceID?)
    /// The record was written by a newer release than this app: editing it would drop what it knows.
    case newerSchema(id: RecordID, type: String, stored: Int64, known: Int64)
    /// The stored fields cannot be read as this model (a writer that broke the schema).
    case unreadable(id: RecordID, type: String, reason: String)
    /// The record changed (another device's version was merged) since it was read.
    case changedSinceRead(id: RecordID)
    /// The record holds this device's own concurrent edit as a conflict, which an edit would
    /// supersede (a device's new version supersedes every earlier one of its own): resolve instead.
    case ownConflict(id: RecordID, type: String)
    /// No such record, or it is deleted.
    case noSuchRecord(id: RecordID, type: String)
    /// The record exists with another type.
    case otherType(id: RecordID, expected: String, actual: String)
    /// A record with this id exists already.
    case alreadyExists(id: RecordID)
    /// The record has no conflicts to resolve.
    case notInConflict(id: RecordID)
    /// The model's type name is not 1 to 128 characters, as the format requires.
    case invalidTypeName(String)
    /// The model's migration plan is built wrong (a programming mistake).
    case invalidMigrationPlan(type: String, mistake: String)
    /// A value cannot be written as `fields`.
    case notEncodable(type: String, reason: String)

    public var description: String {
        switch self {
        case .foreignRecord(let id, let type, let madeBy):
            "\(type) \(id) was made by \(madeBy.map { "device \($0)" } ?? "an unknown device"): its content is read-only on this device; use updateForeign or deleteForeign only for an edit a person asked for, never for generated or derived content"
        case .newerSchema(let id, let type, let stored, let known):
            "\(type) \(id) was written with schemaVersion \(stored), and this app knows up to \(known): it is kept as it is; update the app to edit it"
        case .unreadable(let id, let type, let reason):
            "\(type) \(id) cannot be read as this app's model (\(reason)); it is kept as it is: fix the writer, or have a person replace its fields (syncctl put --type \(type) --id \(id))"
        case .changedSinceRead(let id):
            "record \(id) changed since it was read (another device's version arrived): read it again and repeat the edit"
        case .ownConflict(let id, let type):
            "\(type) \(id) holds this device's own concurrent edit as a conflict, which an edit would supersede unseen: resolve the conflict instead (conflicts(of:), then resolve(_:with:) for new content or resolve(_:keeping:))"
        case .noSuchRecord(let id, let type):
            "there is no \(type) with id \(id) (or it is deleted, perhaps by another device): read the records again"
        case .otherType(let id, let expected, let actual):
            "record \(id) is a \(actual), not a \(expected): use another id (insert without one picks a random id)"
        case .alreadyExists(let id):
            "a record with id \(id) exists already: use update to change it"
        case .notInConflict(let id):
            "record \(id) has no conflicts to resolve: read it again"
        case .invalidTypeName(let name):
            "the model type name \"\(name)\" must be 1 to 128 characters: choose a stable name once, and never change it"
        case .invalidMigrationPlan(let type, let mistake):
            "the migration plan of \(type) is wrong: \(mistake)"
        case .notEncodable(let type, let reason):
            "a \(type) cannot be written as record fields: \(reason)"
        }
    }
}
