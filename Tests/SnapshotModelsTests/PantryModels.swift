import SnapshotFormat
import SnapshotModels

// A pantry item through three releases:
//   V1: name, amount ("6 kg")
//   V2: adds an optional note (a lightweight step)
//   V3: amount split into an integer quantity and an optional unit (a custom step: a type change and a split)

struct PantryV1: ModelVersion {
    static let schemaVersion: Int64 = 1
    var name: String
    var amount: String
}

struct PantryV2: ModelVersion {
    static let schemaVersion: Int64 = 2
    var name: String
    var amount: String
    var note: String?
}

struct PantryV3: ModelVersion {
    static let schemaVersion: Int64 = 3
    var name: String
    var quantity: Int
    var unit: String?
    var note: String?

    /// "6 kg" is 6 of "kg"; "6" is 6 with no unit; anything unreadable is a quantity of 1 with the text as unit.
    init(migrating v2: PantryV2) {
        name = v2.name
        note = v2.note
        let parts = v2.amount.split(separator: " ", maxSplits: 1).map(String.init)
        if let first = parts.first, let number = Int(first) {
            quantity = number
            unit = parts.count > 1 ? parts[1] : nil
        } else {
            quantity = 1
            unit = v2.amount
        }
    }

    init(name: String, quantity: Int, unit: String? = nil, note: String? = nil) {
        self.name = name
        self.quantity = quantity
        self.unit = unit
        self.note = note
    }
}

/// The first release: one version, the default plan.
enum PantryRelease1: SyncedModel {
    static let typeName = "PantryItem"
    typealias ReadOnly = PantryV1
}

/// The second release: V2 adds an optional note.
enum PantryRelease2: SyncedModel {
    static let typeName = "PantryItem"
    typealias ReadOnly = PantryV2
    static let migrationPlan = MigrationPlan(PantryV1.self).lightweight(to: PantryV2.self)
}

/// The third release: V3 splits the amount.
enum PantryRelease3: SyncedModel {
    static let typeName = "PantryItem"
    typealias ReadOnly = PantryV3
    static let migrationPlan = MigrationPlan(PantryV1.self)
        .lightweight(to: PantryV2.self)
        .custom(to: PantryV3.self) { PantryV3(migrating: $0) }
}

/// Another type, to show that observing and fetching one type ignores the others.
struct NoteV1: ModelVersion {
    static let schemaVersion: Int64 = 1
    var text: String
    var pinned: Bool?
}

enum Note: SyncedModel {
    static let typeName = "Note"
    typealias ReadOnly = NoteV1
}
