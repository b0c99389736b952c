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
/// at the top level, inside objects present in both (an address's `zip` this release does not
/// know), and inside the objects of arrays present in both (a step's `timer` in a recipe's
/// `steps`). A known optional the app sets to nil is not among them, so it is removed as expected.
/// An object the app replaces keeps the unknown keys of the one it replaces: they are not lost,
/// though they may belong with the old content.
///
/// An array's elements have no key to find them by, so an element's leftovers go to the element
/// the app writes that is (``ElementLeftovers/place(in:claimed:)``): the one still written as it
/// was read, wherever the app moved it; else the one with the same `id` member; else, when the
/// array kept its length, the one at the same position. An element the app removed takes its
/// leftovers with it, unless the array kept its length (then the element now in its place gets
/// them, as a replaced object does).
struct Leftovers: Hashable, Sendable {
    /// Members to carry over whole.
    var members = JSONObject()
    /// Leftovers inside the object under each key.
    var inside: [String: Leftovers] = [:]
    /// Leftovers inside the objects of the array under each key.
    var inArrays: [String: [ElementLeftovers]] = [:]

    var isEmpty: Bool { members.count == 0 && inside.isEmpty && inArrays.isEmpty }

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
            switch (value, match.value) {
            case (.object(let storedInner), .object(let writtenInner)):
                var nested = inside[match.key] ?? Leftovers()
                nested.add(storedInner, notIn: writtenInner)
                if !nested.isEmpty { inside[match.key] = nested }
            case (.array(let storedItems), .array(let writtenItems)) where storedItems.count == writtenItems.count:
                // Element by element: the read value writes one element for each it read (a model
                // that drops some while reading leaves nothing to line them up by).
                var elements: [ElementLeftovers] = []
                for (position, (storedItem, writtenItem)) in zip(storedItems, writtenItems).enumerated() {
                    guard case .object(let storedInner) = storedItem, case .object(let writtenInner) = writtenItem
                    else { continue }
                    var nested = Leftovers()
                    nested.add(storedInner, notIn: writtenInner)
                    if !nested.isEmpty {
                        elements.append(
                            ElementLeftovers(
                                position: position, count: storedItems.count, written: writtenItem, leftovers: nested))
                    }
                }
                if !elements.isEmpty { inArrays[match.key, default: []].append(contentsOf: elements) }
            default:
                break
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
        for (key, elements) in inArrays {
            guard case .array(var items)? = fields[key] else { continue }
            for (element, target) in ElementLeftovers.place(elements, in: items) {
                guard case .object(var inner) = items[target] else { continue }
                element.leftovers.carry(into: &inner)
                items[target] = .object(inner)
            }
            fields[key] = .array(items)
        }
    }
}

/// The leftovers of one object in an array, and what finds it again in the array the app writes.
struct ElementLeftovers: Hashable, Sendable {
    /// Where it was in the array as read, and how long that array was.
    var position: Int
    var count: Int
    /// The element as this release wrote it when it was read.
    var written: JSONValue
    var leftovers: Leftovers

    /// The element of `items` each of `elements` goes to, each element of `items` taken once: first
    /// every element still written as it was read (wherever it moved; an edit elsewhere in the
    /// record leaves them all so), then by the same `id` member (a string or a number), then, when
    /// `items` kept the length the array had, by position. Elements matched by none are left out.
    static func place(_ elements: [ElementLeftovers], in items: [JSONValue]) -> [(ElementLeftovers, Int)] {
        var placed: [(ElementLeftovers, Int)] = []
        var taken = Set<Int>()
        var left = elements
        func match(_ keyOf: (JSONValue) -> JSONValue?) {
            var candidates: [JSONValue: [Int]] = [:]
            for index in items.indices.reversed() where !taken.contains(index) {
                if let key = keyOf(items[index]) { candidates[key, default: []].append(index) }
            }
            left.removeAll { element in
                guard let key = keyOf(element.written), let index = candidates[key]?.popLast() else { return false }
                taken.insert(index)
                placed.append((element, index))
                return true
            }
        }
        match { $0 }
        match { value in
            guard case .object(let object) = value, let id = object["id"] else { return nil }
            switch id {
            case .string, .number: return id
            default: return nil
            }
        }
        for element in left where items.count == element.count && !taken.contains(element.position) {
            taken.insert(element.position)
            placed.append((element, element.position))
        }
        return placed
    }
}
