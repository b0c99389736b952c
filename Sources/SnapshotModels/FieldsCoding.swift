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
/// know), and inside the objects that are elements of arrays present in both (a step's `timer` in
/// a recipe's `steps`; not inside arrays of arrays). A known optional the app sets to nil is not
/// among them, so it is removed as expected. An object the app replaces keeps the unknown keys of
/// the one it replaces: they are not lost, though they may belong with the old content.
///
/// An array's elements have no key to find them by: see ``ElementLeftovers`` for how each stored
/// element is paired with what this release wrote of it, and found again in what the app writes.
struct Leftovers: Hashable, Sendable {
    /// Members to carry over whole.
    var members = JSONObject()
    /// Leftovers inside the object under each key.
    var inside: [String: Leftovers] = [:]
    /// Every element of the array under each key, as read (with or without leftovers: those
    /// without hold their place when the leftovers are placed), when any element has leftovers.
    var inArrays: [String: ArrayLeftovers] = [:]

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
            case (.array(let storedItems), .array(let writtenItems))
            where storedItems.count == writtenItems.count && storedItems != writtenItems
                && storedItems.contains(where: { if case .object = $0 { true } else { false } }):
                // (A model that drops elements while reading leaves nothing to pair them by; one
                // that wrote every element as stored, or an array of no objects, leaves nothing.)
                let array = ArrayLeftovers(of: storedItems, writtenAs: writtenItems)
                if array.elements.contains(where: { !$0.leftovers.isEmpty }) { inArrays[match.key] = array }
            default:
                break
            }
        }
    }

    /// Takes `other`'s leftovers where these have nothing under their key (their own stay).
    mutating func adopt(_ other: Leftovers) {
        for (key, value) in other.members where members[key] == nil { members[key] = value }
        for (key, nested) in other.inside { inside[key, default: Leftovers()].adopt(nested) }
        for (key, array) in other.inArrays where inArrays[key] == nil { inArrays[key] = array }
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
        for (key, array) in inArrays {
            guard case .array(var items)? = fields[key] else { continue }
            for (element, target) in array.place(in: items) {
                guard case .object(var inner) = items[target] else { continue }
                element.leftovers.carry(into: &inner)
                items[target] = .object(inner)
            }
            fields[key] = .array(items)
        }
    }
}

/// One element of an array as read: what this release wrote of it, where, and the keys it does
/// not know (its leftovers, often none).
struct ElementLeftovers: Hashable, Sendable {
    /// Where this release wrote it.
    var position: Int
    /// The element as this release wrote it when it was read.
    var written: JSONValue
    var leftovers: Leftovers
}

/// Every element of an array as read (``ElementLeftovers``), and whether the model kept their order.
///
/// When a record is read, each stored element is paired with the written element that is what
/// this release writes of it (every member it writes is the stored one's, with the same value),
/// wherever the model put it (a `Set`, a decoder that sorts): its own position first. When the
/// app writes the array again, each element's leftovers go to (``place(in:)``):
/// 1. the element still written as it was read, at its old position, else elsewhere (the app
///    moved it, or inserted others before it);
/// 2. else the element with the same `id` member (a string or a number); an element whose `id`
///    no element has any more was removed, and its leftovers go with it;
/// 3. else, when the array kept its length and the model keeps the order of its elements (it
///    wrote each where it was read), the element at its old position (the app edited it).
/// Elements written alike are told apart only by their order: removing one of two may leave the
/// other with the removed one's leftovers. An `id` member tells them apart.
struct ArrayLeftovers: Hashable, Sendable {
    /// Every element of the array as read, in the stored order.
    var elements: [ElementLeftovers]
    /// Whether the model wrote every element where it was read: only then does a position say
    /// which element is which (a `Set` writes them in any order).
    var orderKept: Bool

    /// Each of `stored` with what `written` (this release's writing of the same array) holds of it.
    init(of stored: [JSONValue], writtenAs written: [JSONValue]) {
        // Each stored element's written element: the same position when it is its writing, else
        // a free one equal to it (found by hash: elements without unknown keys, reordered), else
        // the first free one that is its writing, else its own position if free, else the first
        // free one.
        var pairs = [Int?](repeating: nil, count: stored.count)
        var used = Set<Int>()
        for index in stored.indices where Self.isWriting(written[index], of: stored[index]) {
            pairs[index] = index
            used.insert(index)
        }
        orderKept = used.count == stored.count
        var equal: [JSONValue: [Int]] = [:]
        for index in written.indices.reversed() where !used.contains(index) { equal[written[index], default: []].append(index) }
        for index in stored.indices where pairs[index] == nil {
            if let other = equal[stored[index]]?.popLast(), !used.contains(other) {
                pairs[index] = other
                used.insert(other)
            }
        }
        for index in stored.indices where pairs[index] == nil {
            if let other = written.indices.first(where: { !used.contains($0) && Self.isWriting(written[$0], of: stored[index]) }) {
                pairs[index] = other
                used.insert(other)
            }
        }
        var free = written.indices.filter { !used.contains($0) }[...]
        for index in stored.indices where pairs[index] == nil {
            let other = used.contains(index) ? free.popFirst() ?? index : index
            free.removeAll { $0 == other }
            pairs[index] = other
            used.insert(other)
        }
        elements = stored.indices.map { index in
            let position = pairs[index] ?? index
            var leftovers = Leftovers()
            if case .object(let storedObject) = stored[index], case .object(let writtenObject) = written[position] {
                leftovers.add(storedObject, notIn: writtenObject)
            }
            return ElementLeftovers(position: position, written: written[position], leftovers: leftovers)
        }
    }

    /// Whether `written` is what a release that knows fewer keys writes of `stored`: every member
    /// it has is stored's, with such a value.
    static func isWriting(_ written: JSONValue, of stored: JSONValue) -> Bool {
        switch (written, stored) {
        case (.object(let writtenObject), .object(let storedObject)):
            return writtenObject.allSatisfy { member in
                storedObject[member.key].map { isWriting(member.value, of: $0) } ?? false
            }
        case (.array(let writtenItems), .array(let storedItems)):
            return writtenItems.count == storedItems.count && zip(writtenItems, storedItems).allSatisfy(isWriting)
        default:
            return written == stored
        }
    }

    /// The element of `items` (the array the app writes) that each element with leftovers goes
    /// to, each element of `items` taken once, in the order the type's comment gives.
    func place(in items: [JSONValue]) -> [(ElementLeftovers, Int)] {
        var placed: [(ElementLeftovers, Int)] = []
        var taken = Set<Int>()
        var left = elements
        func take(_ element: ElementLeftovers, at index: Int) {
            taken.insert(index)
            placed.append((element, index))
        }
        func id(_ value: JSONValue) -> JSONValue? {
            guard case .object(let object) = value, let id = object["id"] else { return nil }
            switch id {
            case .string, .number: return id
            default: return nil
            }
        }
        func match(_ keyOf: (JSONValue) -> JSONValue?) {
            var candidates: [JSONValue: [Int]] = [:]
            for index in items.indices.reversed() where !taken.contains(index) {
                if let key = keyOf(items[index]) { candidates[key, default: []].append(index) }
            }
            left.removeAll { element in
                guard let key = keyOf(element.written), let index = candidates[key]?.popLast() else { return false }
                take(element, at: index)
                return true
            }
        }
        left.removeAll { element in
            guard items.indices.contains(element.position), !taken.contains(element.position),
                items[element.position] == element.written
            else { return false }
            take(element, at: element.position)
            return true
        }
        match { $0 }
        match(id)
        left.removeAll { id($0.written) != nil }
        for element in left where orderKept && items.count == elements.count && !taken.contains(element.position) {
            take(element, at: element.position)
        }
        return placed.filter { !$0.0.leftovers.isEmpty }
    }
}
