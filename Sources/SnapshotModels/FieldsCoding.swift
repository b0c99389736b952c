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

    /// The members of `fields` that re-encoding `value` does not write: fields this release does
    /// not know, which an edit carries over instead of dropping.
    static func leftovers<Value: Encodable>(of fields: JSONObject, after value: Value) throws -> JSONObject {
        let written = try encode(value)
        return JSONObject(fields.members.filter { written[$0.key] == nil })
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
