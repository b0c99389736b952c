import SnapshotFormat

/// The one place where storage rows and wire values are mapped.
extension StoredVersion {
    /// The row for a wire version at a position of its record.
    public init(_ version: ReadOnly.Version, position: Int) {
        recordID = version.id.rawValue
        self.position = position
        type = version.type
        schemaVersion = version.schemaVersion
        lastModified = version.lastModified?.milliseconds
        modifiedBy = version.modifiedBy?.rawValue
        versionVector = version.versionVector.jsonValue.canonicalString
        deleted = version.deleted
        fields = JSONValue.object(version.fields).canonicalString
        unknownKeys = JSONValue.object(version.unknownKeys).canonicalString
    }

    /// The wire version this row stores.
    ///
    /// - Throws: ``StoreCorruption`` when a column does not hold what this code wrote.
    public func readOnly() throws(StoreCorruption) -> ReadOnly.Version {
        guard let id = RecordID(recordID) else { throw StoreCorruption("record id \(recordID) is not a UUID") }
        var version = ReadOnly.Version(id: id, type: type, schemaVersion: schemaVersion)
        version.lastModified = lastModified.map(Timestamp.init(milliseconds:))
        if let modifiedBy {
            guard let device = DeviceID(modifiedBy) else { throw StoreCorruption("modifiedBy \(modifiedBy) of \(id)") }
            version.modifiedBy = device
        }
        version.deleted = deleted
        version.fields = try Self.object(fields, column: "fields", id: id)
        version.unknownKeys = try Self.object(unknownKeys, column: "unknownKeys", id: id)
        var counts: [DeviceID: Int64] = [:]
        for (device, count) in try Self.object(versionVector, column: "versionVector", id: id) {
            guard let device = DeviceID(device), let count = count.exactInteger else {
                throw StoreCorruption("versionVector of \(id)")
            }
            counts[device] = count
        }
        version.versionVector = VersionVector(counts)
        return version
    }

    private static func object(_ text: String, column: String, id: RecordID) throws(StoreCorruption) -> JSONObject {
        guard case .object(let object)? = try? StrictJSON.parseCanonical(text) else {
            throw StoreCorruption("\(column) of \(id) is not a JSON object")
        }
        return object
    }
}

/// The store holds something this code did not write: the database was changed by hand or damaged.
public struct StoreCorruption: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong, for a person.
    public var detail: String
    /// What to do, when something less than the state directory's restore will do.
    public var advice: String?
    /// A corruption report.
    public init(_ detail: String, advice: String? = nil) {
        self.detail = detail
        self.advice = advice
    }
    public var description: String {
        "the store holds data this version did not write (\(detail)); "
            + (advice ?? "restore the state directory from a backup or remove it and merge again from the shared folder")
    }
}
