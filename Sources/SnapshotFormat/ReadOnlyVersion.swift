/// One version of a record, as the contract defines it.
extension ReadOnly {
    /// A version of a record: the record's top-level version or one of its `conflicts`.
    ///
    /// Defaults are materialized (`schemaVersion` 1, empty vector, `deleted` false, empty
    /// `fields`), so two versions are equal exactly when their normal forms are equal.
    /// Strings compare by their bytes, never by Unicode canonical equivalence.
    public struct Version: Sendable {
        // The parts live in one shared box, copied on write: a merge copies every version it
        // reads several times (into groups, into records), and a copy is then one reference
        // count instead of one per part. Two copies of one reading are also equal at a glance.
        final class Parts: @unchecked Sendable {
            var id: RecordID
            var type: String
            var schemaVersion: Int64
            var lastModified: Timestamp?
            var modifiedBy: DeviceID?
            var versionVector: VersionVector
            var deleted: Bool
            var encodedFields: EncodedObject
            var unknownKeys: JSONObject

            init(
                id: RecordID, type: String, schemaVersion: Int64, lastModified: Timestamp?, modifiedBy: DeviceID?,
                versionVector: VersionVector, deleted: Bool, encodedFields: EncodedObject, unknownKeys: JSONObject
            ) {
                self.id = id
                self.type = type
                self.schemaVersion = schemaVersion
                self.lastModified = lastModified
                self.modifiedBy = modifiedBy
                self.versionVector = versionVector
                self.deleted = deleted
                self.encodedFields = encodedFields
                self.unknownKeys = unknownKeys
            }

            func copy() -> Parts {
                Parts(
                    id: id, type: type, schemaVersion: schemaVersion, lastModified: lastModified, modifiedBy: modifiedBy,
                    versionVector: versionVector, deleted: deleted, encodedFields: encodedFields,
                    unknownKeys: unknownKeys)
            }
        }

        private(set) var parts: Parts

        private mutating func makeUnique() {
            if !isKnownUniquelyReferenced(&parts) { parts = parts.copy() }
        }

        /// The record's identity.
        public var id: RecordID {
            get { parts.id }
            set {
                makeUnique()
                parts.id = newValue
            }
        }
        /// The model's name: 1 to 128 Unicode scalars.
        public var type: String {
            get { parts.type }
            set {
                makeUnique()
                parts.type = newValue
            }
        }
        /// The schema version of the shape that produced `fields`; at least 1.
        public var schemaVersion: Int64 {
            get { parts.schemaVersion }
            set {
                makeUnique()
                parts.schemaVersion = newValue
            }
        }
        /// When this version was made; nil sorts before every timestamp.
        public var lastModified: Timestamp? {
            get { parts.lastModified }
            set {
                makeUnique()
                parts.lastModified = newValue
            }
        }
        /// The device that made this version.
        public var modifiedBy: DeviceID? {
            get { parts.modifiedBy }
            set {
                makeUnique()
                parts.modifiedBy = newValue
            }
        }
        /// The edits in this version's history.
        public var versionVector: VersionVector {
            get { parts.versionVector }
            set {
                makeUnique()
                parts.versionVector = newValue
            }
        }
        /// Whether this version is a tombstone.
        public var deleted: Bool {
            get { parts.deleted }
            set {
                makeUnique()
                parts.deleted = newValue
            }
        }
        /// The model's data, opaque to the merge, held as its interchange bytes: the merge
        /// compares and publishes them without building a tree (see ``fields``).
        public var encodedFields: EncodedObject {
            get { parts.encodedFields }
            set {
                makeUnique()
                parts.encodedFields = newValue
            }
        }
        /// Keys this format does not know, kept verbatim (never with a null value).
        public var unknownKeys: JSONObject {
            get { parts.unknownKeys }
            set {
                makeUnique()
                parts.unknownKeys = newValue
            }
        }

        /// A version from its parts.
        public init(
            id: RecordID, type: String, schemaVersion: Int64 = 1, lastModified: Timestamp? = nil,
            modifiedBy: DeviceID? = nil, versionVector: VersionVector = VersionVector(),
            deleted: Bool = false, fields: JSONObject = JSONObject(),
            unknownKeys: JSONObject = JSONObject()
        ) {
            self.init(
                id: id, type: type, schemaVersion: schemaVersion, lastModified: lastModified, modifiedBy: modifiedBy,
                versionVector: versionVector, deleted: deleted, encodedFields: EncodedObject(fields),
                unknownKeys: unknownKeys)
        }

        /// A version whose `fields` are already in interchange bytes.
        public init(
            id: RecordID, type: String, schemaVersion: Int64 = 1, lastModified: Timestamp? = nil,
            modifiedBy: DeviceID? = nil, versionVector: VersionVector = VersionVector(),
            deleted: Bool = false, encodedFields: EncodedObject, unknownKeys: JSONObject = JSONObject()
        ) {
            parts = Parts(
                id: id, type: type, schemaVersion: schemaVersion, lastModified: lastModified, modifiedBy: modifiedBy,
                versionVector: versionVector, deleted: deleted, encodedFields: encodedFields, unknownKeys: unknownKeys)
        }

        /// The model's data as a tree, parsed on each read from ``encodedFields``; setting it
        /// stores its interchange bytes.
        public var fields: JSONObject {
            get { encodedFields.object }
            set { encodedFields = EncodedObject(newValue) }
        }

        /// Whether the version carries a version vector.
        public var hasVector: Bool { !versionVector.isEmpty }
    }
}

extension ReadOnly.Version: Hashable {
    public static func == (lhs: Self, rhs: Self) -> Bool {
        if lhs.parts === rhs.parts { return true }
        return lhs.id == rhs.id && lhs.type.utf8.elementsEqual(rhs.type.utf8)
            && lhs.schemaVersion == rhs.schemaVersion && lhs.lastModified == rhs.lastModified
            && lhs.modifiedBy == rhs.modifiedBy && lhs.versionVector == rhs.versionVector
            && lhs.deleted == rhs.deleted && lhs.encodedFields == rhs.encodedFields
            && lhs.unknownKeys == rhs.unknownKeys
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        for byte in type.utf8 { hasher.combine(byte) }
        hasher.combine(schemaVersion)
        hasher.combine(lastModified)
        hasher.combine(modifiedBy)
        hasher.combine(versionVector)
        hasher.combine(deleted)
        hasher.combine(encodedFields)
        hasher.combine(unknownKeys)
    }
}

extension ReadOnly.Version {
    /// The normal form: upper-case id, written `lastModified`, no defaults, no nulls, no conflicts.
    public var normalForm: JSONObject {
        var object = JSONObject()
        object["id"] = .string(id.rawValue)
        object["type"] = .string(type)
        if schemaVersion != 1 { object["schemaVersion"] = .number(Double(schemaVersion)) }
        if let lastModified { object["lastModified"] = .string(lastModified.written) }
        if let modifiedBy { object["modifiedBy"] = .string(modifiedBy.rawValue) }
        if !versionVector.isEmpty { object["versionVector"] = versionVector.jsonValue }
        if deleted { object["deleted"] = .bool(true) }
        if !encodedFields.isEmpty { object["fields"] = .object(fields) }
        for (key, value) in unknownKeys { object[key] = value }
        return object
    }

    /// The RFC 8785 serialization of the normal form: the last tie-break of the last-writer order.
    ///
    /// Written as the interchange bytes are, without a tree (versions tied on their stamps, such
    /// as records without `lastModified`, meet this for each version: parsing their `fields` into
    /// a tree took a quarter of a first merge of a folder of such records). The interchange form
    /// differs from RFC 8785's in one thing only, an integral number beyond ±(2^53−1) and below
    /// 10^21 written with an exponent (`1e+20`, not `100000000000000000000`): bytes without `e+`
    /// hold none, and are RFC 8785's; a version with one goes through the tree.
    public var canonicalBytes: [UInt8] {
        var bytes: [UInt8] = []
        appendNormalForm(to: &bytes, conflicts: [])
        guard Self.containsExponentSign(bytes) else { return bytes }
        return JSONValue.object(normalForm).canonicalBytes
    }

    /// Whether `bytes` hold `e+` anywhere (in a number's exponent, or in a string).
    private static func containsExponentSign(_ bytes: [UInt8]) -> Bool {
        var from = 1
        while from < bytes.count, let plus = bytes[from...].firstIndex(of: UInt8(ascii: "+")) {
            if bytes[plus - 1] == UInt8(ascii: "e") { return true }
            from = plus + 1
        }
        return false
    }

    /// What the version says, apart from who made it and when: the normal form without `id`,
    /// `lastModified`, `modifiedBy`, `versionVector` and `conflicts`.
    public func hasSameContent(as other: Self) -> Bool {
        type.utf8.elementsEqual(other.type.utf8) && schemaVersion == other.schemaVersion
            && deleted == other.deleted && encodedFields == other.encodedFields
            && unknownKeys == other.unknownKeys
    }
}
