import SnapshotFormat

/// The versions of a model, oldest first, and the step from each to the next.
///
/// Build it from the first version, one step per later version:
///
/// ```swift
/// MigrationPlan(V1.self)
///     .lightweight(to: V2.self)                   // V2 adds an optional field
///     .custom(to: V3.self) { v2 in V3(v2) }       // a type change, a split
/// ```
///
/// Steps run only when an older version is read, on the reading device, and never rewrite the
/// record: the stored version stays as its writer made it until someone edits it.
public struct MigrationPlan<Latest: ModelVersion>: Sendable {
    typealias Upgrade = @Sendable (JSONObject) throws -> JSONObject

    /// For each known stored version: turns its fields into fields in `Latest`'s shape.
    let upgrades: [Int64: Upgrade]
    /// The first mistake made while building the plan, reported when the plan is used.
    let mistake: String?

    /// A plan whose first (and so far only) version is `first`.
    public init(_ first: Latest.Type) {
        upgrades = [first.schemaVersion: { $0 }]
        mistake = first.schemaVersion >= 1 ? nil : "schemaVersion \(first.schemaVersion) of \(first) is below 1"
    }

    private init(upgrades: [Int64: Upgrade], mistake: String?) {
        self.upgrades = upgrades
        self.mistake = mistake
    }

    /// The known schema versions, oldest first.
    public var schemaVersions: [Int64] { upgrades.keys.sorted() }

    /// A step to `next` that reads the previous version's fields as they are: right when `next`
    /// only adds optional fields (or drops fields).
    public func lightweight<Next: ModelVersion>(to next: Next.Type) -> MigrationPlan<Next> {
        adding(next) { $0 }
    }

    /// A step to `next` that converts a previous value: a field's type changes, a field is split.
    ///
    /// - Important: `migrate` runs on every device that reads an older version, every time it
    ///   reads it: keep it a pure function of its input.
    public func custom<Next: ModelVersion>(
        to next: Next.Type, _ migrate: @escaping @Sendable (Latest) throws -> Next
    ) -> MigrationPlan<Next> {
        adding(next) { fields in
            let previous = try FieldsCoding.decode(Latest.self, from: fields)
            let migrated = try FieldsCoding.encode(try migrate(previous))
            // Fields the previous version does not know pass through, as a lightweight step
            // passes them; those it knows are the step's to convert (or drop). Unless the next
            // version reuses such a name for something else and cannot read them: then they stay
            // behind, as before, rather than make the record unreadable.
            var carried = migrated
            try FieldsCoding.leftovers(of: fields, after: previous).carry(into: &carried)
            if carried == migrated || (try? FieldsCoding.decode(Next.self, from: carried)) == nil { return migrated }
            return carried
        }
    }

    private func adding<Next: ModelVersion>(
        _ next: Next.Type, step: @escaping @Sendable (JSONObject) throws -> JSONObject
    ) -> MigrationPlan<Next> {
        var upgrades: [Int64: MigrationPlan<Next>.Upgrade] = [:]
        for (version, upgrade) in self.upgrades {
            upgrades[version] = { fields in try step(upgrade(fields)) }
        }
        upgrades[next.schemaVersion] = { $0 }
        var mistake = self.mistake
        if mistake == nil && next.schemaVersion <= Latest.schemaVersion {
            mistake =
                "\(Next.self) has schemaVersion \(Next.schemaVersion), which must be greater than \(Latest.self)'s \(Latest.schemaVersion): give each new version the next number"
        }
        return MigrationPlan<Next>(upgrades: upgrades, mistake: mistake)
    }

    /// The fields of a version stored as `schemaVersion`, in `Latest`'s shape.
    func upgrade(_ fields: JSONObject, from schemaVersion: Int64) throws -> JSONObject? {
        guard let upgrade = upgrades[schemaVersion] else { return nil }
        return try upgrade(fields)
    }
}
