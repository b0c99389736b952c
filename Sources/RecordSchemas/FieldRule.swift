import SnapshotFormat

/// What one declared field of a schema version must be.
struct FieldRule: Hashable, Sendable {
    /// The JSON types the value may have (at least one).
    var types: Set<FieldType>
    /// Whether the field may be absent; an optional field may also be `null`.
    var isOptional: Bool

    /// Why `value` (nil when the field is absent) breaks the rule, nil when it fits.
    func problem(with value: JSONValue?, field: String, in place: String) -> String? {
        guard let value else {
            return isOptional ? nil : "field \(quote(field)) is required in \(place), and is missing"
        }
        if value == .null && isOptional { return nil }
        if types.contains(where: { $0.admits(value) }) { return nil }
        return "field \(quote(field)) must be \(expected), not \(FieldType.describe(value)), in \(place)"
    }

    /// The admitted types as a phrase: "an integer", "a string or null", "a number, a string or null".
    var expected: String {
        let names = FieldType.allCases.filter(types.contains).map(\.withArticle)
        guard names.count > 1 else { return names.first ?? "nothing" }
        return names.dropLast().joined(separator: ", ") + " or " + names.last!
    }
}

/// `text` in double quotes, as messages show field and type names.
func quote(_ text: String) -> String { "\"" + text + "\"" }
