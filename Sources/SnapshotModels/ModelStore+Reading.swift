import SnapshotFormat

extension ModelStore {
    /// The live records of `model` that match `predicate`, in `order` (then by id).
    ///
    /// Records stored in an older version are migrated in memory; records this release cannot
    /// read (a newer `schemaVersion`, fields that do not fit) are never dropped or rewritten: they
    /// are listed in ``FetchResult/passedOver``.
    public func fetch<Model: SyncedModel>(
        _ model: Model.Type, where predicate: (ModelRecord<Model>) throws -> Bool = { _ in true },
        sortedBy order: [SortKey<Model>] = []
    ) throws -> FetchResult<Model> {
        try check(model)
        var records: [ModelRecord<Model>] = []
        var passedOver: [PassedOverRecord] = []
        for stored in try device.records(type: Model.typeName) {
            switch read(stored, as: model) {
            case .success(let record): if try predicate(record) { records.append(record) }
            case .failure(let skipped): passedOver.append(skipped)
            }
        }
        for skipped in passedOver {
            logger.notice(
                "passed over a record this release cannot read: \(skipped.explanation)",
                metadata: ["record.id": "\(skipped.id)", "record.type": "\(Model.typeName)"])
        }
        records.sort { SortKey.inOrder($0, $1, by: order) }
        return FetchResult(records: records, passedOver: passedOver)
    }

    /// The live record `id` as `model`; nil when there is none or it is deleted.
    ///
    /// - Throws: ``ModelError`` when the record has another type, or this release cannot read it.
    public func record<Model: SyncedModel>(_ id: RecordID, as model: Model.Type) throws -> ModelRecord<Model>? {
        try check(model)
        guard let stored = try device.record(id), !stored.version.deleted else { return nil }
        return try readOrThrow(stored, as: model)
    }

    /// Reads a held record as `model`, throwing when it has another type or cannot be read.
    func readOrThrow<Model: SyncedModel>(_ stored: ReadOnly.Record, as model: Model.Type) throws -> ModelRecord<Model> {
        guard stored.version.type.utf8.elementsEqual(Model.typeName.utf8) else {
            throw ModelError.otherType(id: stored.id, expected: Model.typeName, actual: stored.version.type)
        }
        switch read(stored, as: model) {
        case .success(let record): return record
        case .failure(let skipped):
            if case .newerSchema(let stored, let known) = skipped.reason {
                throw ModelError.newerSchema(id: skipped.id, type: Model.typeName, stored: stored, known: known)
            }
            throw ModelError.unreadable(id: skipped.id, type: Model.typeName, reason: skipped.explanation)
        }
    }

    /// Reads a held record's current version as `model`, migrating it when it is older.
    func read<Model: SyncedModel>(
        _ stored: ReadOnly.Record, as model: Model.Type
    ) -> Outcome<ModelRecord<Model>, PassedOverRecord> {
        let version = stored.version
        switch decode(version, as: model) {
        case .failure(let reason):
            return .failure(PassedOverRecord(id: stored.id, version: version, reason: reason))
        case .success(let (value, leftovers)):
            return .success(
                ModelRecord(
                    id: stored.id, value: value, storedSchemaVersion: version.schemaVersion,
                    lastModified: version.lastModified, modifiedBy: version.modifiedBy,
                    isMadeHere: version.modifiedBy == thisDevice, unresolvedConflicts: stored.unresolvedConflicts.count,
                    stored: version, leftoverFields: leftovers))
        }
    }

    /// One version's fields as the model's current shape, and the fields it does not know.
    func decode<Model: SyncedModel>(
        _ version: ReadOnly.Version, as model: Model.Type
    ) -> Outcome<(Model.ReadOnly, Leftovers), PassedOverRecord.Reason> {
        let plan = Model.migrationPlan
        if version.schemaVersion > Model.schemaVersion {
            return .failure(.newerSchema(stored: version.schemaVersion, known: Model.schemaVersion))
        }
        do {
            guard let fields = try plan.upgrade(version.fields, from: version.schemaVersion) else {
                return .failure(.unknownSchema(stored: version.schemaVersion, known: plan.schemaVersions))
            }
            let value = try FieldsCoding.decode(Model.ReadOnly.self, from: fields)
            return .success((value, try FieldsCoding.leftovers(of: fields, after: value)))
        } catch {
            return .failure(.unreadable(FieldsCoding.explain(error)))
        }
    }
}

/// A read that either succeeded or says why not (a `Result` whose failure is not an `Error`).
enum Outcome<Value, Failure> {
    case success(Value)
    case failure(Failure)
}
