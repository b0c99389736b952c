import SnapshotFormat

/// Record shapes known only at run time: the types, versions and fields that schema files declare,
/// and the check of a version against the schema version it carries.
///
/// The format of a schema file is in `docs/schemas.md`. A set is a value: load each file with
/// ``load(_:source:)`` and combine them with ``merging(_:)``.
///
/// - Important: only declared types are checked. A version of an undeclared type, a tombstone,
///   and a version whose `schemaVersion` is newer than every declared one pass (see
///   ``newerVersionNote(for:)``): a device that knows less than the writer keeps its data verbatim.
public struct SchemaSet: Sendable {
    /// The declared types by the UTF-8 bytes of their names: type names compare by bytes, as the
    /// snapshot format's strings do (a Swift `String` key would equate NFC and NFD spellings).
    var types: [[UInt8]: TypeSchema]

    /// An empty set: every version passes.
    public init() { types = [:] }

    init(types: [[UInt8]: TypeSchema]) { self.types = types }

    /// The declared type names, sorted by their UTF-8 bytes.
    public var typeNames: [String] {
        types.keys.sorted { $0.lexicographicallyPrecedes($1) }.compactMap { types[$0]?.name }
    }

    /// The declared schema versions of `type`, lowest first; empty when the type is not declared.
    public func declaredVersions(of type: String) -> [Int64] { types[Array(type.utf8)]?.versionNumbers ?? [] }

    /// This set and `other` together: a type declared in both gets the versions of both.
    ///
    /// - Throws: ``SchemaFileError/conflictingDeclarations(type:schemaVersion:first:second:)`` when
    ///   both declare the same version of a type differently (the same declaration twice is fine).
    public func merging(_ other: SchemaSet) throws -> SchemaSet {
        var merged = types
        for (key, schema) in other.types {
            guard var existing = merged[key] else {
                merged[key] = schema
                continue
            }
            for (number, version) in schema.versions {
                if let held = existing.versions[number] {
                    guard held.agrees(with: version) else {
                        throw SchemaFileError.conflictingDeclarations(
                            type: schema.name, schemaVersion: number, first: held.source, second: version.source)
                    }
                } else {
                    existing.versions[number] = version
                }
            }
            merged[key] = existing
        }
        return SchemaSet(types: merged)
    }

    /// Why `version` does not fit the schema version it carries, as one sentence naming the field
    /// and the rule; nil when it fits or is not checked.
    ///
    /// Not checked (nil): undeclared types, tombstones (a tombstone carries no fields), and a
    /// `schemaVersion` newer than every declared one of its type (kept verbatim: the writer knows a
    /// release these files do not describe; ``newerVersionNote(for:)`` says so). A `schemaVersion`
    /// below the newest declared one that is not declared itself is a violation.
    public func violation(of version: ReadOnly.Version) -> String? {
        guard !types.isEmpty, let type = types[Array(version.type.utf8)], !version.deleted else { return nil }
        guard let schema = type.versions[version.schemaVersion] else {
            let newest = type.versionNumbers.last ?? 0
            guard version.schemaVersion < newest else { return nil }
            return "schemaVersion \(version.schemaVersion) of \(type.name) is not declared (known: \(type.knownList))"
        }
        return schema.problem(with: version.fields, in: "schemaVersion \(version.schemaVersion) of \(type.name)")
    }

    /// A note for a live version of a declared type whose `schemaVersion` is newer than every
    /// declared one: it passes unchecked, and a reader may want to say so. Nil otherwise.
    public func newerVersionNote(for version: ReadOnly.Version) -> String? {
        guard !types.isEmpty, let type = types[Array(version.type.utf8)], !version.deleted, let newest = type.versionNumbers.last,
            version.schemaVersion > newest
        else { return nil }
        return
            "schemaVersion \(version.schemaVersion) of \(type.name) is newer than the schema files declare (known: \(type.knownList)): merged unchecked and kept verbatim"
    }
}
