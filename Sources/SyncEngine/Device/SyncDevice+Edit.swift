import SnapshotFormat
import SnapshotMerge
import SyncStore

/// What a local edit did, for the person who asked for it.
public struct EditReport: Codable, Hashable, Sendable {
    /// The record's id.
    public var id: String
    /// The new version's normal form, as JSON text.
    public var version: String
    /// Messages about versions the edit superseded.
    public var notes: [String]
    /// The generation published.
    public var publishedGeneration: Int64?
    /// The merge pass that ran first.
    public var merge: MergeReport
}

extension SyncDevice {
    /// Puts `fields` as a new version of record `id` (a new record when nil or unknown).
    public func put(id: RecordID?, type: String, fields: JSONObject, schemaVersion: Int64?) throws -> EditReport {
        try edit { session, now in
            let id = id ?? RecordID.random()
            let current = try session.record(id)
            if let current, !current.version.type.utf8.elementsEqual(type.utf8) {
                throw EngineError.invalidEdit(
                    "record \(id) is a \"\(current.version.type)\", not a \"\(type)\": a record keeps its type (put it with --type \(current.version.type))"
                )
            }
            return try LocalEdit.put(
                id: id, type: type, fields: fields, schemaVersion: schemaVersion ?? current?.version.schemaVersion ?? 1,
                current: current, device: self.device, now: now)
        }
    }

    /// Deletes record `id`: a tombstone that keeps its unknown keys.
    public func delete(id: RecordID, schemaVersion: Int64?) throws -> EditReport {
        try edit { session, now in
            guard let current = try session.record(id) else { throw EngineError.noSuchRecord(id.rawValue) }
            if current.version.deleted && current.conflicts.isEmpty {
                throw EngineError.invalidEdit("record \(id) is already deleted")
            }
            return try LocalEdit.delete(
                current: current, schemaVersion: schemaVersion ?? current.version.schemaVersion, device: self.device,
                now: now)
        }
    }

    /// Resolves every conflict of record `id` as `resolution` says.
    public func resolve(id: RecordID, with resolution: Resolution) throws -> EditReport {
        try edit { session, now in
            guard let current = try session.record(id) else { throw EngineError.noSuchRecord(id.rawValue) }
            return try LocalEdit.resolve(current: current, with: resolution, device: self.device, now: now)
        }
    }

    /// Runs a merge pass with `make` applied after it in the same transaction, and publishes.
    private func edit(_ make: @escaping (StoreSession, Timestamp) throws -> LocalEditOutcome) throws -> EditReport {
        try locked {
            let (report, outcome) = try pass { session, now -> LocalEditOutcome in
                let outcome: LocalEditOutcome
                do {
                    outcome = try make(session, now)
                } catch let error as LocalEditError {
                    throw EngineError.invalidEdit(error.description)
                }
                if let violation = self.schemas.violation(of: outcome.version) {
                    throw EngineError.invalidEdit("the new version does not fit its schema: \(violation)")
                }
                let merged = RecordMerge.merge(held: try session.record(outcome.record.id), incoming: [outcome.version])
                try session.save(merged ?? outcome.record, at: now)
                return outcome
            }
            guard let outcome else { throw EngineError.invalidEdit("the edit was not applied") }
            var notes: [String] = []
            for version in outcome.supersededOwn {
                notes.append(
                    "superseded this device's own earlier version from \(version.lastModified?.written ?? "an unknown time") (its content is replaced by this edit)"
                )
            }
            for version in outcome.supersededOthers {
                notes.append(
                    "the new version dominates a conflict made by \(version.modifiedBy?.rawValue ?? "an unknown device") at \(version.lastModified?.written ?? "an unknown time"), which is dropped (hand-made vectors cause this)"
                )
            }
            return EditReport(
                id: outcome.record.id.rawValue, version: JSONValue.object(outcome.version.normalForm).interchangeString,
                notes: notes, publishedGeneration: report.publishedGeneration, merge: report)
        }
    }
}
