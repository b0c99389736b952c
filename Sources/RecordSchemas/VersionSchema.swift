import SnapshotFormat

/// One declared schema version of a type: its fields, in the order the file declares them.
struct VersionSchema: Sendable {
    /// The declared fields and their rules, in file order.
    var fields: [(name: String, rule: FieldRule)]
    /// Whether fields the version does not declare are allowed (the default) or a violation.
    var allowsOtherFields: Bool
    /// Where it was declared, for messages about two declarations that disagree.
    var source: String

    /// The first rule `fields` breaks, nil when they fit; `place` names the type and version.
    func problem(with fields: JSONObject, in place: String) -> String? {
        for (name, rule) in self.fields {
            if let problem = rule.problem(with: fields[name], field: name, in: place) { return problem }
        }
        guard !allowsOtherFields else { return nil }
        let declared = Set(self.fields.map { Array($0.name.utf8) })
        for key in fields.keys where !declared.contains(Array(key.utf8)) {
            let names = self.fields.map(\.name).joined(separator: ", ")
            return
                "field \(quote(key)) is not declared in \(place), which allows no other fields (declared: \(names.isEmpty ? "none" : names))"
        }
        return nil
    }

    /// Whether two declarations say the same thing (field order and source aside).
    func agrees(with other: VersionSchema) -> Bool {
        allowsOtherFields == other.allowsOtherFields && fields.count == other.fields.count
            && fields.allSatisfy { field in
                other.fields.contains { $0.name.utf8.elementsEqual(field.name.utf8) && $0.rule == field.rule }
            }
    }
}

/// Every declared schema version of one record type.
struct TypeSchema: Sendable {
    /// The type name, as records carry it in `type`.
    var name: String
    /// The declared versions by number.
    var versions: [Int64: VersionSchema]

    /// The declared version numbers, lowest first.
    var versionNumbers: [Int64] { versions.keys.sorted() }

    /// The known versions as a list for messages: "1, 2".
    var knownList: String { versionNumbers.map(String.init).joined(separator: ", ") }
}
