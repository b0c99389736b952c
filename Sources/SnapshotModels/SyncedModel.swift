/// One released shape of a model's fields: a Codable value that is exactly what goes on the wire.
///
/// Keep it a plain struct of stored properties (Codable, Equatable, Hashable; `var` is fine: a
/// value is a copy, edited and saved with `ModelStore.update`). Once a release has shipped a
/// version, never change it: add a new one (`V2`) and a step to the model's
/// ``MigrationPlan`` instead. A new field in a later version must be optional, so that a
/// lightweight step can read the older fields as they are.
public protocol ModelVersion: Codable, Hashable, Sendable {
    /// The `schemaVersion` stamped on every version written in this shape: 1, 2, …
    static var schemaVersion: Int64 { get }
}

/// A type an app stores and syncs: a stable type name, the shape this release writes, and how
/// every earlier shape becomes it.
///
/// ```swift
/// enum ShoppingItem: SyncedModel {
///     static let typeName = "ShoppingItem"
///     typealias ReadOnly = V2
///     static let migrationPlan: MigrationPlan<ReadOnly> = MigrationPlan(V1.self).lightweight(to: V2.self)
/// }
/// ```
///
/// Give the plan its type, as here: without it, a plan that does not end at `ReadOnly` compiles
/// as a property of another type, and the default one-version plan is used instead.
///
/// The `ReadOnly` projection is the wire contract; keep the app's own (mutable, UI-facing) types
/// apart and convert at the edges, so either can change without breaking the other.
public protocol SyncedModel {
    /// The record `type` on the wire: never change it once shipped.
    static var typeName: String { get }
    /// The shape this release reads and writes.
    associatedtype ReadOnly: ModelVersion
    /// How every earlier shape becomes ``ReadOnly``, applied lazily when an older version is read.
    static var migrationPlan: MigrationPlan<ReadOnly> { get }
}

extension SyncedModel {
    /// The `schemaVersion` this release stamps: that of ``ReadOnly``.
    public static var schemaVersion: Int64 { ReadOnly.schemaVersion }

    /// A model with a single version needs no steps: its plan is that version alone.
    public static var migrationPlan: MigrationPlan<ReadOnly> { MigrationPlan(ReadOnly.self) }
}
