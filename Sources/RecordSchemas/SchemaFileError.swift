/// Why a schema file cannot be used, naming the file and saying what to change; nothing is loaded.
public enum SchemaFileError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The file is not valid JSON (I-JSON: no duplicate keys, …).
    case notJSON(source: String, reason: String)
    /// The file's `format` is newer than this release reads.
    case newerFormat(source: String, format: Int64)
    /// A value in the file breaks the schema-file format; `path` says where (`types[0].versions[1]`).
    case invalid(source: String, path: String, problem: String)
    /// Two declarations of one type's version disagree.
    case conflictingDeclarations(type: String, schemaVersion: Int64, first: String, second: String)

    public var description: String {
        switch self {
        case .notJSON(let source, let reason):
            "the schema file \(source) is not valid JSON (\(reason)); fix it, see docs/schemas.md"
        case .newerFormat(let source, let format):
            "the schema file \(source) has format \(format), which this release does not read (it reads 1); update SnapshotSync or write the file in format 1"
        case .invalid(let source, let path, let problem):
            "the schema file \(source) is not valid: \(path) \(problem); see docs/schemas.md"
        case .conflictingDeclarations(let type, let version, let first, let second):
            "schemaVersion \(version) of \"\(type)\" is declared differently in \(first) and \(second); a released version never changes: keep one declaration"
        }
    }
}
