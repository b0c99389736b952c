/// Reading a version from JSON exactly as the contract's record rules say.
extension ReadOnly.Version {
    /// The keys the format defines on a record; every other key is kept verbatim.
    public static let knownKeys: Set<String> = [
        "id", "type", "schemaVersion", "lastModified", "modifiedBy", "versionVector", "deleted",
        "fields", "conflicts",
    ]

    /// Reads a version from a record object (its `conflicts` key is checked by the caller).
    ///
    /// - Throws: ``VersionRuleViolation`` naming the first rule the object breaks.
    public init(validating object: JSONObject) throws(VersionRuleViolation) {
        // One pass over the members (this runs for every version of every file).
        var known = [JSONValue?](repeating: nil, count: KnownKey.allCases.count)
        var unknown: [JSONObject.Element] = []
        for member in object.members {
            if let key = KnownKey(member.key) {
                known[key.rawValue] = member.value
            } else if member.value != .null {
                unknown.append(member)
            }
        }
        func value(_ key: KnownKey) -> JSONValue? { known[key.rawValue].nonNull }
        guard case .string(let idText)? = value(.id) else {
            throw VersionRuleViolation(value(.id) == nil ? "id is missing" : "id must be a string")
        }
        guard let id = RecordID(idText) else {
            throw VersionRuleViolation("id \(quoted(idText)) is not a UUID (8-4-4-4-12 hexadecimal digits)")
        }
        self.init(id: id, type: try Self.readType(value(.type)))
        schemaVersion = try Self.readSchemaVersion(value(.schemaVersion))
        lastModified = try Self.readLastModified(value(.lastModified))
        modifiedBy = try Self.readModifiedBy(value(.modifiedBy))
        versionVector = try Self.readVector(value(.versionVector))
        switch value(.deleted) {
        case nil: deleted = false
        case .bool(let flag)?: deleted = flag
        case let other?: throw VersionRuleViolation("deleted must be true or false, not \(other.briefDescription)")
        }
        switch value(.fields) {
        case nil: fields = JSONObject()
        case .object(let value)?: fields = value
        case let other?: throw VersionRuleViolation("fields must be an object, not \(other.briefDescription)")
        }
        unknownKeys = JSONObject(unknown)
    }

    /// The record keys the format defines, matched by their bytes.
    private enum KnownKey: Int, CaseIterable {
        case id, type, schemaVersion, lastModified, modifiedBy, versionVector, deleted, fields, conflicts

        private static let names: [[UInt8]] = allCases.map { Array(String(describing: $0).utf8) }

        init?(_ key: String) {
            var key = key
            let index: Int? = key.withUTF8 { bytes in
                Self.names.firstIndex { $0.count == bytes.count && $0.elementsEqual(bytes) }
            }
            guard let index else { return nil }
            self.init(rawValue: index)
        }
    }

    private static func readType(_ value: JSONValue?) throws(VersionRuleViolation) -> String {
        guard let value else { throw VersionRuleViolation("type is missing") }
        guard case .string(let type) = value else {
            throw VersionRuleViolation("type must be a string, not \(value.briefDescription)")
        }
        let length = type.unicodeScalars.count
        guard (1...128).contains(length) else {
            throw VersionRuleViolation("type must be 1 to 128 characters, not \(length)")
        }
        return type
    }

    private static func readSchemaVersion(_ value: JSONValue?) throws(VersionRuleViolation) -> Int64 {
        guard let value else { return 1 }
        guard let number = value.exactInteger, number >= 1 else {
            throw VersionRuleViolation("schemaVersion must be an integer >= 1, not \(value.briefDescription)")
        }
        return number
    }

    private static func readLastModified(_ value: JSONValue?) throws(VersionRuleViolation) -> Timestamp? {
        guard let value else { return nil }
        guard case .string(let text) = value, let timestamp = Timestamp(parsing: text) else {
            throw VersionRuleViolation(
                "lastModified \(value.briefDescription) is not an RFC 3339 date-time in years 0000-9999")
        }
        return timestamp
    }

    private static func readModifiedBy(_ value: JSONValue?) throws(VersionRuleViolation) -> DeviceID? {
        guard let value else { return nil }
        guard case .string(let text) = value else {
            throw VersionRuleViolation("modifiedBy must be a device ID string, not \(value.briefDescription)")
        }
        if let problem = DeviceID.validationProblem(text) {
            throw VersionRuleViolation("modifiedBy \(quoted(text)) \(problem)")
        }
        return DeviceID(text)
    }

    private static func readVector(_ value: JSONValue?) throws(VersionRuleViolation) -> VersionVector {
        guard let value else { return VersionVector() }
        guard case .object(let object) = value else {
            throw VersionRuleViolation("versionVector must be an object, not \(value.briefDescription)")
        }
        var counts: [DeviceID: Int64] = [:]
        for (key, count) in object {
            if let problem = DeviceID.validationProblem(key) {
                throw VersionRuleViolation("versionVector key \(quoted(key)) \(problem)")
            }
            guard let number = count.exactInteger, (1...VersionVector.maximumCount).contains(number) else {
                throw VersionRuleViolation(
                    "versionVector count for \(quoted(key)) must be an integer from 1 to 2^53-1, not \(count.briefDescription)"
                )
            }
            counts[DeviceID(key)!] = number
        }
        return VersionVector(counts)
    }
}

/// The first record rule a version breaks, for a person.
public struct VersionRuleViolation: Error, Hashable, Sendable, CustomStringConvertible {
    /// The rule, e.g. "schemaVersion must be an integer >= 1, not 0".
    public var rule: String
    /// A violation of the given rule.
    public init(_ rule: String) { self.rule = rule }
    public var description: String { rule }
}

func quoted(_ text: String) -> String {
    let shown = text.unicodeScalars.count > 80 ? String(text.unicodeScalars.prefix(80)) + "…" : text
    return "\"" + shown + "\""
}

extension Optional where Wrapped == JSONValue {
    /// The value, with JSON `null` read as absent (the contract: null means the key is absent).
    var nonNull: JSONValue? {
        if case .null? = self { return nil }
        return self
    }
}

extension JSONValue {
    /// The value as an integer when it is a number with an integral value within ±(2^53−1).
    public var exactInteger: Int64? {
        guard case .number(let number) = self, number.isFinite, number.rounded(.towardZero) == number,
            abs(number) <= Double(VersionVector.maximumCount)
        else { return nil }
        return Int64(number)
    }

    /// A short description of the value for messages: `0`, `"2"`, `an array`, `null`.
    public var briefDescription: String {
        switch self {
        case .null: return "null"
        case .bool(let flag): return flag ? "true" : "false"
        case .number, .string:
            let text = canonicalString
            return text.count > 60 ? String(text.prefix(60)) + "…" : text
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}
