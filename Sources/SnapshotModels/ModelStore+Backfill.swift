import SnapshotFormat

/// What a backfill did.
public struct BackfillReport: Hashable, Sendable {
    /// Records of this device that got the field, and were published.
    public var filled: [RecordID] = []
    /// Records missing the field that another device made: left to their maker, never filled here.
    public var leftToTheirMakers: [RecordID] = []
    /// Records of this device for which the closure gave no value.
    public var leftEmpty: [RecordID] = []
    /// Records of this device that hold its own concurrent edit as a conflict: not filled, since
    /// the new version would supersede that edit (``ModelError/ownConflict(id:type:)``); filled by
    /// a backfill after the conflict is resolved.
    public var leftInConflict: [RecordID] = []
}

extension ModelStore {
    /// Fills a missing optional field of this device's own records, computing it with `make`:
    /// generated or derived content, produced only on the device that made the record.
    ///
    /// Only records whose current version this device made are filled; every other record
    /// missing the field is left as its maker wrote it (listed in
    /// ``BackfillReport/leftToTheirMakers``), so a consuming device never re-generates content.
    /// Nothing happens unless this is called: reading never backfills.
    ///
    /// - Important: each filled record is one local edit (a merge pass and a publish).
    @discardableResult
    public func backfill<Model: SyncedModel, Value>(
        _ model: Model.Type, missing field: WritableKeyPath<Model.ReadOnly, Value?>,
        with make: (ModelRecord<Model>) throws -> Value?
    ) throws -> BackfillReport {
        var report = BackfillReport()
        for record in try fetch(model, where: { $0.value[keyPath: field] == nil }).records {
            guard record.isMadeHere else {
                report.leftToTheirMakers.append(record.id)
                continue
            }
            guard let filled = try make(record) else {
                report.leftEmpty.append(record.id)
                continue
            }
            var value = record.value
            value[keyPath: field] = filled
            do {
                try update(record, to: value)
            } catch ModelError.ownConflict {
                report.leftInConflict.append(record.id)
                continue
            }
            report.filled.append(record.id)
        }
        return report
    }
}
