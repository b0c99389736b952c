import SnapshotFormat

/// A JSON type a schema file may name for a field.
enum FieldType: String, CaseIterable, Hashable, Sendable {
    case string, number, integer, boolean, object, array, null

    /// Whether `value` is of this type; an integer is a number with an integral value within
    /// ±(2^53−1) (the contract's integer), so `2.0` is an integer and every integer is a number.
    func admits(_ value: JSONValue) -> Bool {
        switch (self, value) {
        case (.string, .string), (.number, .number), (.boolean, .bool), (.object, .object), (.array, .array),
            (.null, .null):
            return true
        case (.integer, .number):
            return value.exactInteger != nil
        default:
            return false
        }
    }

    /// The type with its article, for messages: "an integer", "a string", "null".
    var withArticle: String {
        switch self {
        case .null: "null"
        case .integer, .object, .array: "an \(rawValue)"
        case .string, .number, .boolean: "a \(rawValue)"
        }
    }

    /// What `value` is, for messages: `a string ("6")`, `a number (2.5)`, `an object`, `null`.
    static func describe(_ value: JSONValue) -> String {
        switch value {
        case .null: "null"
        case .bool(let flag): "a boolean (\(flag))"
        case .number: "a number (\(value.briefDescription))"
        case .string: "a string (\(value.briefDescription))"
        case .array: "an array"
        case .object: "an object"
        }
    }
}
