import SnapshotFormat

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Converts model versions to and from a record's `fields`, through Foundation's JSON coders.
enum FieldsCoding {
    /// `value` as a `fields` object.
    static func encode<Value: Encodable>(_ value: Value) throws -> JSONObject {
        let bytes: [UInt8]
        do {
            bytes = [UInt8](try JSONEncoder().encode(value))
        } catch {
            throw ModelError.notEncodable(type: "\(Value.self)", reason: "\(error)")
        }
        let parsed: JSONValue
        do {
            parsed = try StrictJSON.parse(bytes)
        } catch {
            throw ModelError.notEncodable(
                type: "\(Value.self)",
                reason: "it is not I-JSON (\(error.reason)); integers must stay within ±(2^53−1)")
        }
        guard case .object(let object) = parsed else {
            throw ModelError.notEncodable(
                type: "\(Value.self)", reason: "it encodes as \(parsed.briefDescription), not an object of fields")
        }
        return object
    }

    /// A value read from a `fields` object.
    static func decode<Value: Decodable>(_ type: Value.Type, from fields: JSONObject) throws -> Value {
        try JSONDecoder().decode(type, from: Data(JSONValue.object(fields).canonicalBytes))
    }

    /// `value` as a `fields` object that reads back as a value of the model: what the format
    /// keeps of a number (a double) may not decode as the type that wrote it (a `Decimal` beyond
    /// a double's range or precision), and a record its own writer cannot read must not be written.
    static func encodeReadably<Model: SyncedModel>(_ value: Model.ReadOnly, as model: Model.Type) throws -> JSONObject {
        let fields = try encode(value)
        // As a reader does: decode, and encode again to find the fields it does not know.
        let readBack: Model.ReadOnly
        do {
            readBack = try decode(Model.ReadOnly.self, from: fields)
        } catch {
            throw ModelError.notEncodable(
                type: "\(Model.ReadOnly.self)",
                reason: "written as fields, it does not read back (\(explain(error))): a number the format keeps as a double cannot hold it, or its Codable does not read what it writes")
        }
        do {
            _ = try encode(readBack)
        } catch let error as ModelError {
            throw ModelError.notEncodable(
                type: "\(Model.ReadOnly.self)",
                reason: "written as fields and read back, it cannot be written again (\(error)): a number the format keeps as a double cannot hold it, or its Codable does not read what it writes")
        }
        return fields
    }

    /// What of `stored` re-encoding `value` does not write: fields this release does not know,
    /// which an edit (or a custom migration step) carries over instead of dropping, at the top
    /// level and inside the objects both have.
    static func leftovers<Value: Encodable>(of stored: JSONObject, after value: Value) throws -> Leftovers {
        var leftovers = Leftovers()
        leftovers.add(stored, notIn: try encode(value))
        return leftovers
    }

    /// A short account of a decoding error: which field and what was wrong.
    static func explain(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "\(error)" }
        func path(_ context: DecodingError.Context) -> String {
            let keys = context.codingPath.map(\.stringValue).joined(separator: ".")
            return keys.isEmpty ? "the fields" : "field \"\(keys)\""
        }
        switch error {
        case .keyNotFound(let key, let context):
            let parent = context.codingPath.map(\.stringValue).joined(separator: ".")
            return "field \"\(parent.isEmpty ? key.stringValue : parent + "." + key.stringValue)\" is missing"
        case .typeMismatch(let type, let context): return "\(path(context)) is not \(type)"
        case .valueNotFound(let type, let context): return "\(path(context)) is null, not \(type)"
        case .dataCorrupted(let context): return "\(path(context)): \(context.debugDescription)"
        @unknown default: return "\(error)"
        }
    }
}

/// Fields an edit carries over: members the stored version had that this release does not write,
/// at the top level and inside objects present in both (an address's `zip` this release does not
/// know), not inside arrays (their elements have no identity to match them by). A known optional
/// the app sets to nil is not among them, so it is removed as expected. An object the app
/// replaces keeps the unknown keys of the one it replaces: they are not lost, though they may
/// belong with the old content.
struct Leftovers: Hashable, Sendable {
    /// Members to carry over whole.
    var members = JSONObject()
    /// Leftovers inside the object under each key.
    var inside: [String: Leftovers] = [:]

    var isEmpty: Bool { members.count == 0 && inside.isEmpty }

    /// Adds the members of `stored` that `written` does not have. Keys compare as Swift compares
    /// them, canonically (a key stored decomposed is the key the app writes composed): a String
    /// dictionary hashes and compares them so.
    mutating func add(_ stored: JSONObject, notIn written: JSONObject) {
        var writtenByKey: [String: (key: String, value: JSONValue)] = [:]
        for member in written where writtenByKey[member.key] == nil { writtenByKey[member.key] = member }
        for (key, value) in stored {
            guard let match = writtenByKey[key] else {
                if members[key] == nil { members[key] = value }
                continue
            }
            if case .object(let storedInner) = value, case .object(let writtenInner) = match.value {
                var nested = inside[match.key] ?? Leftovers()
                nested.add(storedInner, notIn: writtenInner)
                if !nested.isEmpty { inside[match.key] = nested }
            }
        }
    }

    /// Puts the leftovers into `fields` where the app's new value has nothing under their key.
    func carry(into fields: inout JSONObject) {
        let present = Set(fields.keys)
        for (key, value) in members where !present.contains(key) { fields[key] = value }
        for (key, nested) in inside {
            guard case .object(var inner)? = fields[key] else { continue }
            nested.carry(into: &inner)
            fields[key] = .object(inner)
        }
    }
}
