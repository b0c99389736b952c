import RecordSchemas
import SnapshotFormat
import SnapshotMerge
import SyncStore
import Synchronization

/// What a local edit did, for the person who asked for it.
public struct EditReport: Codable, Hashable, Sendable {
    /// The record's id.
    public var id: String
    /// The new version's normal form, as JSON text (RFC 8785): kept for scripts written before
    /// ``record``, and for hashing or signing it as it is.
    public var version: String
    /// The same version as a JSON object, as `syncctl get --json` prints a version.
    public var record: JSONValue
    /// Messages about versions the edit superseded.
    public var notes: [String]
    /// The generation published.
    public var publishedGeneration: Int64?
    /// The merge pass that ran first (empty when publishing failed: see ``publishFailure``).
    public var merge: MergeReport
    /// Why this device's files could not be published, when they could not: the edit is saved in
    /// the store all the same, and published by the next merge (`syncd` tries again by itself).
    /// It must not be made again.
    public var publishFailure: String? = nil
}

/// What a record must be, once an edit's own merge is done, for the edit to be made: what the
/// caller read. Otherwise the merge is kept, nothing is edited, and the edit throws
/// ``EngineError/changedSinceSeen(id:)``: the edit would replace a version nobody here has seen.
public enum EditExpectation: Sendable {
    /// No record with the id.
    case absent
    /// The record's current version is this one.
    case current(ReadOnly.Version)
    /// The record, all its versions included, has this ``ReadOnly/Record/tag`` (what a person
    /// choosing how to resolve it saw).
    case tagged(String)

    func isMet(by record: ReadOnly.Record?) -> Bool {
        switch self {
        case .absent: record == nil
        case .current(let version): record?.version == version
        case .tagged(let tag): record?.tag == tag.lowercased()
        }
    }
}

extension SyncDevice {
    /// Puts `fields` as a new version of record `id` (a new record when nil or unknown).
    ///
    /// - Parameter expecting: what the record must be after the edit's merge (see ``EditExpectation``).
    public func put(
        id: RecordID?, type: String, fields: JSONObject, schemaVersion: Int64?, expecting: EditExpectation? = nil
    ) throws -> EditReport {
        let id = id ?? RecordID.random()
        return try edit(of: id, expecting: expecting) { session, current, now in
            if let current, !current.version.type.utf8.elementsEqual(type.utf8) {
                throw EngineError.invalidEdit(
                    "record \(id) is a \"\(current.version.type)\", not a \"\(type)\": a record keeps its type (put it with --type \(current.version.type))"
                )
            }
            // A new record of a type the schema files declare is of its newest declared version.
            let newest = self.schemas.declaredVersions(of: type).max() ?? 1
            let schemaVersion = schemaVersion ?? current?.version.schemaVersion ?? newest
            // The same content again (a script run twice, an app saving an unchanged value): no
            // version, which every device would merge and publish for nothing.
            if let current, LocalEdit.putChangesNothing(fields: fields, schemaVersion: schemaVersion, current: current)
            {
                return .unchanged(current)
            }
            return try LocalEdit.put(
                id: id, type: type, fields: fields, schemaVersion: schemaVersion,
                current: current, device: self.device, now: now)
        }
    }

    /// Deletes record `id`: a tombstone that keeps its unknown keys.
    ///
    /// - Parameter expecting: what the record must be after the edit's merge (see ``EditExpectation``).
    public func delete(id: RecordID, schemaVersion: Int64?, expecting: EditExpectation? = nil) throws -> EditReport {
        try edit(of: id, expecting: expecting) { session, current, now in
            guard let current else { throw EngineError.noSuchRecord(id.rawValue) }
            if current.version.deleted && current.conflicts.isEmpty {
                throw EngineError.invalidEdit("record \(id) is already deleted")
            }
            return try LocalEdit.delete(
                current: current, schemaVersion: schemaVersion ?? current.version.schemaVersion, device: self.device,
                now: now)
        }
    }

    /// Resolves every conflict of record `id` as `resolution` says.
    ///
    /// - Parameter expecting: the record as the person choosing saw it (``EditExpectation/tagged(_:)``,
    ///   or ``EditExpectation/absent``): a resolution would otherwise supersede a version nobody saw,
    ///   and a choice by number could keep a version nobody chose. Nil: no check.
    /// - Throws: ``EngineError/resolvedAlready(id:)`` when the record, not as expected, has no
    ///   conflicts left after the merge; ``EngineError/changedSinceSeen(id:)`` when it is not as
    ///   expected otherwise (the merge is kept either way, nothing is resolved).
    public func resolve(id: RecordID, with resolution: Resolution, expecting: EditExpectation? = nil) throws
        -> EditReport
    {
        do {
            return try edit(of: id, expecting: expecting) { session, current, now in
                guard let current else { throw EngineError.noSuchRecord(id.rawValue) }
                return try LocalEdit.resolve(current: current, with: resolution, device: self.device, now: now)
            }
        } catch EngineError.changedSinceSeen(let changed) {
            // Not as seen, and nothing left to resolve: resolved already (the same command run
            // twice, or another device's resolution), which "changed" alone would not tell.
            guard let now = try? record(id), now.conflicts.isEmpty else {
                throw EngineError.changedSinceSeen(id: changed)
            }
            throw EngineError.resolvedAlready(id: changed)
        }
    }

    /// A version as a person recognizes it: who made it, when, and its tag.
    private static func versionName(_ version: ReadOnly.Version) -> String {
        "\(version.modifiedBy?.rawValue ?? "an unknown device")'s version of \(version.lastModified?.written ?? "an unknown time") (tag \(version.tag)\(version.deleted ? ", a deletion" : ""))"
    }

    /// Runs a merge pass with `make` applied after it, in the same transaction, to record `id` as
    /// the merge left it, and publishes. When the record is not as `expecting` says, the merge
    /// alone is kept and published (so the caller can look again at the record as it is now), and
    /// ``EngineError/changedSinceSeen(id:)`` is thrown. An edit refused on the merged record
    /// (nothing left to resolve, deleted already, another type, no such record, a version that fits
    /// no schema) keeps and publishes the merge too before its error is thrown: the same command run
    /// again after a crash between its commit and its publication publishes what it saved.
    private func edit(
        of id: RecordID, expecting: EditExpectation?,
        _ make: @escaping (StoreSession, ReadOnly.Record?, Timestamp) throws -> LocalEditOutcome
    ) throws -> EditReport {
        try locked {
            // What the edit did in the pass's transaction (a pass can run its edit again, on a
            // retry: the last run's is the one committed).
            let lastApplied = Mutex<AppliedEdit?>(nil)
            let merge: MergeReport?
            let applied: AppliedEdit?
            var publishFailure: EngineError? = nil
            do {
                (merge, applied) = try pass { session, now -> AppliedEdit in
                    lastApplied.withLock { $0 = nil }
                    let applied = try Self.apply(
                        make, to: id, expecting: expecting, session: session, now: now, schemas: self.schemas)
                    lastApplied.withLock { $0 = applied }
                    return applied
                }
            } catch let failure as EngineError {
                // Not published, after the transaction committed: an edit made is in the store,
                // and must not be made again; one refused or not made says why, not that it is saved.
                guard case .publishFailed = failure, let committed = lastApplied.withLock({ $0 }) else { throw failure }
                (merge, applied, publishFailure) = (nil, committed, failure)
            }
            switch applied {
            case .made(let outcome)?:
                var report = Self.report(
                    of: outcome, merge: merge ?? MergeReport(), publishedGeneration: merge?.publishedGeneration)
                report.publishFailure = publishFailure?.description
                return report
            case .notAsExpected?:
                noteNotPublished(publishFailure)
                throw EngineError.changedSinceSeen(id: id.rawValue)
            case .refused(let refusal)?:
                noteNotPublished(publishFailure)
                throw refusal
            case nil:
                throw EngineError.invalidEdit("the edit was not applied")
            }
        }
    }

    /// Says, at error level (syncctl shows it, before the refusal it throws), that the merge an
    /// edit not made kept could not be published either. The refusal itself stays the error
    /// thrown: callers tell refusals apart by their kind.
    private func noteNotPublished(_ failure: EngineError?) {
        guard let failure else { return }
        logger.error("besides, this device's files could not be published: \(failure.description)")
    }

    /// What became of an edit applied after its pass's merge.
    private enum AppliedEdit {
        /// Made (or found unchanged), in the pass's transaction.
        case made(LocalEditOutcome)
        /// Not made: the record is not as expected.
        case notAsExpected
        /// Not made: refused on the record as merged, for this reason.
        case refused(EngineError)
    }

    /// The edit `make` of record `id`, applied in `session` once the pass merged; nothing applied
    /// when the record is not as `expecting` says, or the edit is refused.
    private static func apply(
        _ make: (StoreSession, ReadOnly.Record?, Timestamp) throws -> LocalEditOutcome, to id: RecordID,
        expecting: EditExpectation?, session: StoreSession, now: Timestamp, schemas: SchemaSet
    ) throws -> AppliedEdit {
        let current = try session.record(id)
        if let expecting, !expecting.isMet(by: current) { return .notAsExpected }
        let outcome: LocalEditOutcome
        do {
            outcome = try make(session, current, now)
        } catch let error as LocalEditError {
            return .refused(.invalidEdit(error.description))
        } catch let error as EngineError where error.isRefusedEdit {
            return .refused(error)
        }
        if let violation = schemas.violation(of: outcome.version) {
            return .refused(.invalidEdit("the new version does not fit its schema: \(violation)"))
        }
        if outcome.isUnchanged { return .made(outcome) }
        let merged = RecordMerge.merge(held: try session.record(outcome.record.id), incoming: [outcome.version])
        try session.save(merged ?? outcome.record, at: now)
        return .made(outcome)
    }

    /// What an edit did, for the person who asked for it.
    private static func report(of outcome: LocalEditOutcome, merge: MergeReport, publishedGeneration: Int64?)
        -> EditReport
    {
        var notes: [String] = []
        if outcome.isUnchanged {
            notes.append("unchanged: the record already holds exactly this content, so no new version was made")
        }
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
        if let (kept, superseded) = outcome.resolved {
            if let kept {
                notes.append("kept the content of \(Self.versionName(kept))")
            }
            for version in superseded where kept.map({ !version.hasSameContent(as: $0) }) ?? true {
                notes.append("superseded \(Self.versionName(version))")
            }
        }
        let normalForm = JSONValue.object(outcome.version.normalForm)
        return EditReport(
            id: outcome.record.id.rawValue, version: normalForm.interchangeString, record: normalForm,
            notes: notes, publishedGeneration: publishedGeneration, merge: merge)
    }
}
