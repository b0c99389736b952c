import SnapshotFormat
import SyncEngine

/// A record of a model in conflict: devices changed it without seeing each other's change.
public struct ModelConflict<Model: SyncedModel>: Hashable, Sendable, Identifiable {
    /// One version a person can choose.
    public struct Candidate: Hashable, Sendable {
        /// What to pass to ``ModelStore/resolve(_:keeping:)``: 0 is the current version, 1… the
        /// concurrent ones, greatest first.
        public let index: Int
        /// The content in this release's shape; nil for a deletion or a version it cannot read.
        public let value: Model.ReadOnly?
        /// Whether this version deletes the record.
        public let isDeletion: Bool
        /// The device that made it.
        public let modifiedBy: DeviceID?
        /// When it was made.
        public let lastModified: Timestamp?
        /// The `schemaVersion` it was stored with.
        public let storedSchemaVersion: Int64
        /// Why ``value`` is nil although it is not a deletion (a newer release wrote it, …).
        public let problem: String?
    }

    /// The record's id.
    public let id: RecordID
    /// The current version first, then every concurrent version with other content.
    public let candidates: [Candidate]
    /// The record as held when read, to notice a change before resolving.
    let stored: ReadOnly.Record
    /// Fields of the candidates this release does not know (the current version's first), kept by
    /// a resolution with new content.
    let leftoverFields: Leftovers
}

extension ModelStore {
    /// Every record of `model` with conflicts that need a person.
    public func conflicts<Model: SyncedModel>(of model: Model.Type) throws -> [ModelConflict<Model>] {
        try check(model)
        return try device.conflictedRecords().filter { $0.version.type.utf8.elementsEqual(Model.typeName.utf8) }.map {
            conflict(from: $0, as: model)
        }
    }

    /// Resolves every conflict of the record by keeping `candidate`'s content as it is, as the
    /// method below does with its index.
    ///
    /// - Precondition: `candidate` is one of `conflict.candidates` (one of another conflict's
    ///   would name a version of this record by an index that means another one here).
    public func resolve<Model: SyncedModel>(
        _ conflict: ModelConflict<Model>, keeping candidate: ModelConflict<Model>.Candidate
    ) throws {
        precondition(
            conflict.candidates.contains(candidate),
            "resolve(_:keeping:) was given a candidate that is not one of this conflict's candidates (record \(conflict.id))")
        try resolve(conflict, keeping: candidate.index)
    }

    /// Resolves every conflict of the record by keeping one candidate's content as it is (it keeps
    /// its `schemaVersion`); any device's record may be resolved: choosing is a person's act.
    ///
    /// - Parameter index: the candidate's ``ModelConflict/Candidate/index`` (0 is the current
    ///   version), not its position in `candidates`, which leaves out versions whose content is
    ///   the current one's: passing the candidate itself avoids the mix-up.
    /// - Throws: ``ModelError/changedSinceRead(id:)`` when the record changed since it was read.
    public func resolve<Model: SyncedModel>(_ conflict: ModelConflict<Model>, keeping index: Int) throws {
        try checkUnchanged(conflict)
        try editing(conflict.id) {
            try noted(device.resolve(id: conflict.id, with: .take(index: index), expecting: .tagged(conflict.stored.tag)))
        }
    }

    /// Resolves every conflict of the record with new content in this release's shape.
    ///
    /// - Throws: ``ModelError/newerSchema(id:type:stored:known:)`` when a newer release wrote the
    ///   current version or any other candidate: new content in this release's shape would drop
    ///   what that one knows (keep a candidate whole with ``resolve(_:keeping:)`` instead).
    public func resolve<Model: SyncedModel>(_ conflict: ModelConflict<Model>, with value: Model.ReadOnly) throws {
        var fields = try FieldsCoding.encodeReadably(value, as: Model.self)
        let versions = [conflict.stored.version] + conflict.stored.conflicts
        if let newest = versions.filter({ !$0.deleted }).map(\.schemaVersion).max(), newest > Model.schemaVersion {
            throw ModelError.newerSchema(id: conflict.id, type: Model.typeName, stored: newest, known: Model.schemaVersion)
        }
        try checkUnchanged(conflict)
        conflict.leftoverFields.carry(into: &fields)
        try editing(conflict.id) {
            try noted(device.resolve(
                id: conflict.id, with: .content(fields: fields, schemaVersion: Model.schemaVersion),
                expecting: .tagged(conflict.stored.tag)))
        }
    }

    private func checkUnchanged<Model: SyncedModel>(_ conflict: ModelConflict<Model>) throws {
        try check(Model.self)
        try sync()
        guard let held = try device.record(conflict.id) else {
            throw ModelError.noSuchRecord(id: conflict.id, type: Model.typeName)
        }
        guard held == conflict.stored else { throw ModelError.changedSinceRead(id: conflict.id) }
        guard !held.conflicts.isEmpty else { throw ModelError.notInConflict(id: conflict.id) }
    }

    private func conflict<Model: SyncedModel>(from record: ReadOnly.Record, as model: Model.Type) -> ModelConflict<
        Model
    > {
        var candidates: [ModelConflict<Model>.Candidate] = []
        var leftovers = Leftovers()
        for (index, version) in ([record.version] + record.conflicts).enumerated() {
            if index > 0 && version.hasSameContent(as: record.version) { continue }
            var value: Model.ReadOnly?
            var problem: String?
            if !version.deleted {
                switch decode(version, as: model) {
                case .success(let (decoded, unknown)):
                    value = decoded
                    // New content resolves every version: it carries what any of them held that this
                    // release does not know, the current version's first.
                    leftovers.adopt(unknown)
                case .failure(let reason):
                    problem = PassedOverRecord(id: record.id, version: version, reason: reason).explanation
                }
            }
            candidates.append(
                .init(
                    index: index, value: value, isDeletion: version.deleted, modifiedBy: version.modifiedBy,
                    lastModified: version.lastModified, storedSchemaVersion: version.schemaVersion, problem: problem))
        }
        return ModelConflict(id: record.id, candidates: candidates, stored: record, leftoverFields: leftovers)
    }
}
