import SnapshotFormat
import SyncEngine

extension ModelStore {
    /// Saves `value` as a new record of `model`, made by this device, and publishes it.
    ///
    /// The device merges the shared folder first, then stamps the version: `schemaVersion` of
    /// ``SyncedModel/ReadOnly``, `lastModified` by the clock rule, a vector of `{this device: 1}`,
    /// `modifiedBy` this device.
    ///
    /// - Parameter id: the new record's id; a random one when nil. A deleted record's id may be
    ///   taken again: the record comes back.
    /// - Throws: ``ModelError/alreadyExists(id:)`` when `id` is taken (also by a record the
    ///   insert's own merge brought); ``ModelError/otherType(id:expected:actual:)`` when a record
    ///   of another type has it; ``ModelError/changedSinceRead(id:)`` when the insert's own merge
    ///   brought a deletion of it (insert again to revive it).
    @discardableResult
    public func insert<Model: SyncedModel>(
        _ value: Model.ReadOnly, as model: Model.Type, id: RecordID? = nil
    ) throws -> ModelRecord<Model> {
        try check(model)
        let fields = try FieldsCoding.encodeReadably(value, as: model)
        // A deleted record's id may be taken again (as `syncctl put` revives one).
        let held = try id.flatMap { try device.record($0) }
        if let id, let held {
            guard held.version.type.utf8.elementsEqual(Model.typeName.utf8) else {
                throw ModelError.otherType(id: id, expected: Model.typeName, actual: held.version.type)
            }
            guard held.version.deleted else { throw ModelError.alreadyExists(id: id) }
        }
        let id = id ?? RecordID.random()
        do {
            // Checked again after the put's own merge: another device's record with this id, merged
            // only then, is never overwritten.
            try noted(device.put(
                id: id, type: Model.typeName, fields: fields, schemaVersion: Model.schemaVersion,
                expecting: held.map { .current($0.version) } ?? .absent))
        } catch EngineError.changedSinceSeen {
            // The merge that brought the record is kept: observers hear of it.
            signal.bump()
            guard let arrived = try device.record(id) else { throw ModelError.changedSinceRead(id: id) }
            if !arrived.version.type.utf8.elementsEqual(Model.typeName.utf8) {
                throw ModelError.otherType(id: id, expected: Model.typeName, actual: arrived.version.type)
            }
            // A deletion arrived: inserting again revives it.
            throw arrived.version.deleted ? ModelError.changedSinceRead(id: id) : ModelError.alreadyExists(id: id)
        } catch let refusal as EngineError where refusal.isRefusedEdit {
            // Refused once its merge ran, which is kept: observers hear of that merge.
            signal.bump()
            throw refusal
        }
        signal.bump()
        return try readBack(id, as: model)
    }

    /// Saves `value` as a new version of a record this device made, and publishes it.
    ///
    /// Fields the record has that this release does not know are carried over. The record is
    /// stamped with this release's `schemaVersion`: an older record is upgraded only by its edit.
    ///
    /// - Throws: ``ModelError/foreignRecord(id:type:madeBy:)`` when another device made the current
    ///   version (its content is read-only here: see ``updateForeign(_:to:)``);
    ///   ``ModelError/changedSinceRead(id:)`` when a newer version arrived since `record` was read;
    ///   ``ModelError/ownConflict(id:type:)`` when the record holds this device's own concurrent
    ///   edit as a conflict, which the edit would supersede (resolve it instead).
    @discardableResult
    public func update<Model: SyncedModel>(
        _ record: ModelRecord<Model>, to value: Model.ReadOnly
    ) throws -> ModelRecord<Model> {
        try edit(record, to: value, allowingForeign: false)
    }

    /// Saves `value` as a new version of a record whose current version another device made.
    ///
    /// - Important: call this only for an edit a person asked for, on content they saw. Never use
    ///   it for generated or derived content: that is produced only on the device that made the
    ///   record (see ``backfill(_:missing:with:)``).
    /// - Throws: as ``update(_:to:)`` does, but for another device's record.
    @discardableResult
    public func updateForeign<Model: SyncedModel>(
        _ record: ModelRecord<Model>, to value: Model.ReadOnly
    ) throws -> ModelRecord<Model> {
        try edit(record, to: value, allowingForeign: true)
    }

    /// Deletes a record this device made: a tombstone (no fields) stamped like any edit.
    ///
    /// - Throws: ``ModelError/foreignRecord(id:type:madeBy:)`` for another device's record (see
    ///   ``deleteForeign(_:)``); ``ModelError/changedSinceRead(id:)``; ``ModelError/ownConflict(id:type:)``
    ///   when the record holds this device's own concurrent edit as a conflict (resolve it instead).
    public func delete<Model: SyncedModel>(_ record: ModelRecord<Model>) throws {
        try remove(record, allowingForeign: false)
    }

    /// Deletes a record whose current version another device made.
    ///
    /// - Important: call this only when a person asked for the deletion.
    /// - Throws: as ``delete(_:)`` does, but for another device's record.
    public func deleteForeign<Model: SyncedModel>(_ record: ModelRecord<Model>) throws {
        try remove(record, allowingForeign: true)
    }

    private func edit<Model: SyncedModel>(
        _ record: ModelRecord<Model>, to value: Model.ReadOnly, allowingForeign: Bool
    ) throws -> ModelRecord<Model> {
        try check(Model.self)
        var fields = try FieldsCoding.encodeReadably(value, as: Model.self)
        try checkUnchanged(record, allowingForeign: allowingForeign)
        record.leftoverFields.carry(into: &fields)
        try editing(record.id) {
            // Checked again after the put's own merge: a version merged only then is never replaced.
            try noted(device.put(
                id: record.id, type: Model.typeName, fields: fields, schemaVersion: Model.schemaVersion,
                expecting: .current(record.stored)))
        }
        return try readBack(record.id, as: Model.self)
    }

    private func remove<Model: SyncedModel>(_ record: ModelRecord<Model>, allowingForeign: Bool) throws {
        try check(Model.self)
        try checkUnchanged(record, allowingForeign: allowingForeign)
        try editing(record.id) {
            try noted(device.delete(id: record.id, schemaVersion: Model.schemaVersion, expecting: .current(record.stored)))
        }
    }

    /// Runs `edit`, an edit of record `id` that expects the record as it was read, and tells
    /// observers of what its merge changed either way.
    ///
    /// - Throws: ``ModelError/changedSinceRead(id:)`` when that merge brought a change of the record
    ///   (its merge is kept, the edit not made).
    func editing(_ id: RecordID, _ edit: () throws -> Void) throws {
        do {
            try edit()
        } catch EngineError.changedSinceSeen, EngineError.resolvedAlready, EngineError.notAsSeen {
            signal.bump()
            throw ModelError.changedSinceRead(id: id)
        } catch let refusal as EngineError where refusal.isRefusedEdit {
            // Refused once its merge ran, which is kept: observers hear of that merge.
            signal.bump()
            throw refusal
        }
        signal.bump()
    }

    /// Merges the folder, then makes sure the record is still the version `record` was read from
    /// (so an edit never silently replaces a version nobody here has seen) and, unless allowed,
    /// that this device made it.
    func checkUnchanged<Model: SyncedModel>(_ record: ModelRecord<Model>, allowingForeign: Bool) throws {
        try sync()
        guard let held = try device.record(record.id), !held.version.deleted else {
            throw ModelError.noSuchRecord(id: record.id, type: Model.typeName)
        }
        guard held.version == record.stored else { throw ModelError.changedSinceRead(id: record.id) }
        if !allowingForeign && held.version.modifiedBy != thisDevice {
            throw ModelError.foreignRecord(id: record.id, type: Model.typeName, madeBy: held.version.modifiedBy)
        }
        // A new version of this device supersedes its own earlier ones, a conflict among them
        // (the contract's rule for a put: version vectors cannot keep two of one device apart).
        // Made by a person here but not chosen away by one: refused, so that a conflict is settled
        // by resolving it, never by an edit of the version shown.
        if held.conflicts.contains(where: { $0.modifiedBy == thisDevice && !$0.hasSameContent(as: held.version) }) {
            throw ModelError.ownConflict(id: record.id, type: Model.typeName)
        }
    }

    /// The record `id` as now held, read as `model`.
    func readBack<Model: SyncedModel>(_ id: RecordID, as model: Model.Type) throws -> ModelRecord<Model> {
        guard let held = try device.record(id) else { throw ModelError.noSuchRecord(id: id, type: Model.typeName) }
        return try readOrThrow(held, as: model)
    }
}
