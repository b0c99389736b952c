import SnapshotModels

/// The app's own, mutable idea of an item: what the commands edit and print. It is not the wire
/// shape, so either can change without the other.
struct ShoppingEntry {
    var name: String
    var amount: String?
    var aisle: String?
}

/// One release of the app: its model, and how its wire shape maps to the app's own type.
protocol ShoppingRelease: SyncedModel {
    /// "v1" or "v2", as `--schema` names it.
    static var label: String { get }
    /// Whether this release knows aisles.
    static var knowsAisles: Bool { get }
    /// An entry from the wire shape.
    static func entry(_ value: ReadOnly) -> ShoppingEntry
    /// The wire shape of an entry.
    static func value(_ entry: ShoppingEntry) -> ReadOnly
    /// Where an entry's aisle goes, for a backfill.
    static var aisle: WritableKeyPath<ReadOnly, String?>? { get }
}

extension ShoppingItemRelease1: ShoppingRelease {
    static let label = "v1"
    static let knowsAisles = false
    static func entry(_ value: ShoppingItemV1) -> ShoppingEntry {
        ShoppingEntry(name: value.name, amount: value.amount)
    }
    static func value(_ entry: ShoppingEntry) -> ShoppingItemV1 {
        ShoppingItemV1(name: entry.name, amount: entry.amount)
    }
    static var aisle: WritableKeyPath<ShoppingItemV1, String?>? { nil }
}

extension ShoppingItemRelease2: ShoppingRelease {
    static let label = "v2"
    static let knowsAisles = true
    static func entry(_ value: ShoppingItemV2) -> ShoppingEntry {
        ShoppingEntry(name: value.name, amount: value.amount, aisle: value.aisle)
    }
    static func value(_ entry: ShoppingEntry) -> ShoppingItemV2 {
        ShoppingItemV2(name: entry.name, amount: entry.amount, aisle: entry.aisle)
    }
    static var aisle: WritableKeyPath<ShoppingItemV2, String?>? { \.aisle }
}

extension ModelRecord where Model: ShoppingRelease {
    /// The item as the app's own type.
    var entry: ShoppingEntry { Model.entry(value) }
}
