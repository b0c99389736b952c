import SnapshotFormat

extension SchemaSet {
    /// The schema-file format this release reads.
    public static let fileFormat: Int64 = 1

    /// Reads one schema file (`docs/schemas.md`); `source` names it in every message (its path).
    ///
    /// Strict: unknown keys, unknown type names and repeated declarations are errors, so a typo
    /// (`"optinal"`) cannot silently loosen a schema.
    ///
    /// - Throws: ``SchemaFileError`` naming the file, where in it, and what to change.
    public static func load(_ bytes: [UInt8], source: String) throws -> SchemaSet {
        let top: JSONValue
        do {
            top = try StrictJSON.parse(bytes)
        } catch {
            throw SchemaFileError.notJSON(source: source, reason: error.description)
        }
        let reader = SchemaFileReader(source: source)
        let object = try reader.object(top, at: "the file", keys: ["format", "types", "description"])
        guard let formatValue = object["format"] else {
            throw reader.invalid("the file", "has no \"format\" (write \"format\": 1)")
        }
        guard let format = formatValue.exactInteger, format >= 1 else {
            throw reader.invalid("\"format\"", "must be 1, not \(formatValue.briefDescription)")
        }
        guard format == fileFormat else { throw SchemaFileError.newerFormat(source: source, format: format) }
        guard case .array(let declarations)? = object["types"] else {
            throw reader.invalid("\"types\"", "must be an array of type declarations")
        }
        var types: [[UInt8]: TypeSchema] = [:]
        for (index, declaration) in declarations.enumerated() {
            let type = try reader.type(declaration, at: "types[\(index)]")
            guard types[Array(type.name.utf8)] == nil else {
                throw reader.invalid(
                    "types[\(index)]",
                    "declares \(quote(type.name)) again: declare each type once, with all its versions")
            }
            types[Array(type.name.utf8)] = type
        }
        return SchemaSet(types: types)
    }
}

/// Reads the parts of one schema file, naming the place of each problem.
struct SchemaFileReader {
    let source: String

    func invalid(_ path: String, _ problem: String) -> SchemaFileError {
        .invalid(source: source, path: path, problem: problem)
    }

    /// `value` as an object whose keys are all in `keys`.
    func object(_ value: JSONValue, at path: String, keys: Set<String>) throws -> JSONObject {
        guard case .object(let object) = value else {
            throw invalid(path, "must be an object, not \(value.briefDescription)")
        }
        if let stranger = object.keys.first(where: { !keys.contains($0) }) {
            let allowed = keys.sorted().map(quote).joined(separator: ", ")
            throw invalid(path, "has an unknown key \(quote(stranger)) (allowed: \(allowed))")
        }
        return object
    }

    func type(_ value: JSONValue, at path: String) throws -> TypeSchema {
        let object = try object(value, at: path, keys: ["type", "versions", "description"])
        guard case .string(let name)? = object["type"] else {
            throw invalid(path, "needs \"type\": the type name as records carry it")
        }
        guard (1...128).contains(name.unicodeScalars.count) else {
            throw invalid("\(path).type", "must be 1 to 128 characters, as the snapshot format allows")
        }
        guard case .array(let declarations)? = object["versions"], !declarations.isEmpty else {
            throw invalid(path, "needs \"versions\": a non-empty array of schema versions")
        }
        var versions: [Int64: VersionSchema] = [:]
        for (index, declaration) in declarations.enumerated() {
            let (number, version) = try self.version(declaration, at: "\(path).versions[\(index)]")
            guard versions[number] == nil else {
                throw invalid("\(path).versions[\(index)]", "declares schemaVersion \(number) of \(quote(name)) again")
            }
            versions[number] = version
        }
        return TypeSchema(name: name, versions: versions)
    }

    func version(_ value: JSONValue, at path: String) throws -> (Int64, VersionSchema) {
        let object = try object(value, at: path, keys: ["schemaVersion", "fields", "additionalFields", "description"])
        guard let numberValue = object["schemaVersion"] else {
            throw invalid(path, "needs \"schemaVersion\": an integer >= 1")
        }
        guard let number = numberValue.exactInteger, number >= 1 else {
            throw invalid("\(path).schemaVersion", "must be an integer >= 1, not \(numberValue.briefDescription)")
        }
        var allowsOtherFields = true
        switch object["additionalFields"] {
        case nil: break
        case .bool(let flag)?: allowsOtherFields = flag
        case let other?:
            throw invalid("\(path).additionalFields", "must be true or false, not \(other.briefDescription)")
        }
        var fields: [(name: String, rule: FieldRule)] = []
        switch object["fields"] {
        case nil: break
        case .object(let declared)?:
            for (name, declaration) in declared {
                fields.append((name, try rule(declaration, at: "\(path).fields.\(name)")))
            }
        case let other?:
            throw invalid("\(path).fields", "must be an object of field declarations, not \(other.briefDescription)")
        }
        return (number, VersionSchema(fields: fields, allowsOtherFields: allowsOtherFields, source: source))
    }

    /// A field declaration: a type name, a list of type names, or `{"type": …, "optional": …}`.
    func rule(_ value: JSONValue, at path: String) throws -> FieldRule {
        switch value {
        case .string, .array:
            return FieldRule(types: try types(value, at: path), isOptional: false)
        case .object:
            let object = try object(value, at: path, keys: ["type", "optional", "description"])
            guard let typeValue = object["type"] else {
                throw invalid(path, "needs \"type\": a JSON type name or a list of them")
            }
            var isOptional = false
            switch object["optional"] {
            case nil: break
            case .bool(let flag)?: isOptional = flag
            case let other?: throw invalid("\(path).optional", "must be true or false, not \(other.briefDescription)")
            }
            return FieldRule(types: try types(typeValue, at: "\(path).type"), isOptional: isOptional)
        default:
            throw invalid(path, "must be a JSON type name, a list of them, or an object with \"type\" and \"optional\"")
        }
    }

    func types(_ value: JSONValue, at path: String) throws -> Set<FieldType> {
        let names: [JSONValue]
        if case .array(let list) = value { names = list } else { names = [value] }
        guard !names.isEmpty else { throw invalid(path, "must name at least one JSON type") }
        var types = Set<FieldType>()
        for name in names {
            guard case .string(let text) = name, let type = FieldType(rawValue: text) else {
                let known = FieldType.allCases.map(\.rawValue).joined(separator: ", ")
                throw invalid(path, "names \(name.briefDescription), which is not a JSON type (use one of: \(known))")
            }
            types.insert(type)
        }
        return types
    }
}
