import SnapshotModels

// The wire shapes of a shopping item, one per release. A shipped shape never changes.

/// Release 1: a name and an optional amount.
struct ShoppingItemV1: ModelVersion {
    static let schemaVersion: Int64 = 1
    var name: String
    var amount: String?
}

/// Release 2 adds an optional aisle: a lightweight step, older items read as they are.
struct ShoppingItemV2: ModelVersion {
    static let schemaVersion: Int64 = 2
    var name: String
    var amount: String?
    var aisle: String?
}

/// The model as release 1 of the app knows it.
enum ShoppingItemRelease1: SyncedModel {
    static let typeName = "ShoppingItem"
    typealias ReadOnly = ShoppingItemV1
}

/// The model as release 2 of the app knows it.
enum ShoppingItemRelease2: SyncedModel {
    static let typeName = "ShoppingItem"
    typealias ReadOnly = ShoppingItemV2
    static let migrationPlan: MigrationPlan<ReadOnly> =
        MigrationPlan(ShoppingItemV1.self).lightweight(to: ShoppingItemV2.self)
}
