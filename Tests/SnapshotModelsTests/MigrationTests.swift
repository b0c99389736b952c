import SnapshotFormat
import SnapshotModels
import SyncEngine
import Testing

@Suite("Models: migrations applied lazily when an older version is read")
struct MigrationTests {
    @Test("Data stored by every earlier release reads as the current version, through each step")
    func everyEarlierVersionReads() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        // Given records written by release 1, release 2 and release 3 on one device
        let old = try sandbox.store("old")
        let v1 = try old.insert(PantryV1(name: "Flour", amount: "2 kg"), as: PantryRelease1.self)
        let v2 = try old.insert(PantryV2(name: "Eggs", amount: "6", note: "free range"), as: PantryRelease2.self)
        let v2Plain = try old.insert(PantryV2(name: "Salt", amount: "a pinch"), as: PantryRelease2.self)
        let v3 = try old.insert(PantryV3(name: "Rice", quantity: 3, unit: "bags"), as: PantryRelease3.self)

        // When a device running release 3 reads them
        let reader = try sandbox.store("reader")
        try reader.sync()
        let records = try reader.fetch(PantryRelease3.self, sortedBy: [.ascending(\.name)])

        // Then each is in the V3 shape, converted step by step, and says which version it was stored as
        #expect(records.passedOver.isEmpty)
        #expect(
            records.records.map(\.value) == [
                PantryV3(name: "Eggs", quantity: 6, note: "free range"),
                PantryV3(name: "Flour", quantity: 2, unit: "kg"),
                PantryV3(name: "Rice", quantity: 3, unit: "bags"),
                PantryV3(name: "Salt", quantity: 1, unit: "a pinch"),
            ])
        #expect(records.records.map(\.storedSchemaVersion) == [2, 1, 3, 2])
        #expect(records.records.map(\.isMigrated) == [true, true, false, true])
        // And release 2 reads the V1 record through the lightweight step, the new field absent
        let asV2 = try #require(try reader.record(v1.id, as: PantryRelease2.self))
        #expect(asV2.value == PantryV2(name: "Flour", amount: "2 kg", note: nil))
        _ = (v2, v2Plain, v3)
    }

    @Test("Reading never rewrites: the stored versions and the published files stay as their writers made them")
    func readingNeverWrites() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let writer = try sandbox.store("writer")
        let record = try writer.insert(PantryV1(name: "Flour", amount: "2 kg"), as: PantryRelease1.self)
        let reader = try sandbox.store("reader")
        try reader.sync()
        let before = try #require(try reader.device.record(record.id))
        let generation = try sandbox.published("reader").generation

        // When release 3 reads, fetches and syncs again
        _ = try reader.fetch(PantryRelease3.self)
        _ = try reader.record(record.id, as: PantryRelease3.self)
        try reader.sync()

        // Then the held version is still the writer's V1 version, and nothing was published again
        #expect(try reader.device.record(record.id) == before)
        #expect(before.version.schemaVersion == 1 && before.version.modifiedBy == DeviceID("writer"))
        #expect(try sandbox.published("reader").generation == generation)
        #expect(
            try sandbox.published("reader").versions.first?.fields == fields(#"{"name": "Flour", "amount": "2 kg"}"#))
    }

    @Test("Editing an older record of this device writes it in the current shape and schemaVersion")
    func editUpgradesOwnRecord() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let store = try sandbox.store("desk")
        let stored = try store.insert(PantryV1(name: "Flour", amount: "2 kg"), as: PantryRelease1.self)
        let read = try #require(try store.record(stored.id, as: PantryRelease3.self))
        var value = read.value
        value.quantity = 3
        let edited = try store.update(read, to: value)
        let held = try #require(try store.device.record(stored.id))
        #expect(held.version.schemaVersion == 3)
        #expect(held.version.fields == fields(#"{"name": "Flour", "quantity": 3, "unit": "kg"}"#))
        #expect(edited.storedSchemaVersion == 3 && !edited.isMigrated)
    }

    @Test("A version whose fields do not fit its shape is passed over with the reason, never dropped")
    func unreadableFieldsArePassedOver() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let device = try sandbox.device("script")
        // A script wrote a V1 pantry item without its amount, and one with a number for a name
        let missing = try device.put(id: nil, type: "PantryItem", fields: fields(#"{"name": "Oil"}"#), schemaVersion: 1)
        _ = try device.put(
            id: nil, type: "PantryItem", fields: fields(#"{"name": 7, "amount": "1"}"#), schemaVersion: 1)
        let store = ModelStore(device: device)
        let result = try store.fetch(PantryRelease3.self)
        #expect(result.records.isEmpty)
        #expect(result.passedOver.count == 2)
        let reasons = result.passedOver.map(\.explanation).sorted()
        #expect(reasons[0].contains(#"field "amount" is missing"#), "\(reasons)")
        #expect(reasons[1].contains(#"field "name" is not String"#), "\(reasons)")
        let id = try #require(RecordID(missing.id))
        #expect(throws: ModelError.self) { try store.record(id, as: PantryRelease3.self) }
        #expect(try device.records(type: "PantryItem").count == 2)
    }

    @Test("A schemaVersion the plan does not have (older than its first) is passed over, naming the plan's versions")
    func versionMissingFromPlan() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let store = try sandbox.store("desk")
        _ = try store.insert(PantryV1(name: "Flour", amount: "2 kg"), as: PantryRelease1.self)
        let result = try store.fetch(LaterOnly.self)
        #expect(result.records.isEmpty)
        #expect(result.passedOver.map(\.reason) == [.unknownSchema(stored: 1, known: [2])])
    }

    @Test("A plan whose versions do not increase, or an empty type name, is refused when used, saying what to fix")
    func planMistakes() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let store = try sandbox.store("desk")
        let error = try #require(throws: ModelError.self) { try store.fetch(Backwards.self) }
        #expect(error.description.contains("must be greater than"))
        #expect(throws: ModelError.self) { try store.insert(PantryV1(name: "x", amount: "1"), as: Backwards.self) }
        #expect(throws: ModelError.invalidTypeName("")) { try store.fetch(Nameless.self) }
        #expect(try store.device.records().isEmpty)
    }

    @Test("A custom step that throws passes the record over with the step's error")
    func throwingStep() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let store = try sandbox.store("desk")
        _ = try store.insert(PantryV1(name: "Flour", amount: "2 kg"), as: PantryRelease1.self)
        let result = try store.fetch(Refusing.self)
        #expect(result.passedOver.first?.explanation.contains("cannot convert Flour") == true)
    }
}

enum LaterOnly: SyncedModel {
    static let typeName = "PantryItem"
    typealias ReadOnly = PantryV2
    static let migrationPlan = MigrationPlan(PantryV2.self)
}

enum Backwards: SyncedModel {
    static let typeName = "PantryItem"
    typealias ReadOnly = PantryV1
    static let migrationPlan = MigrationPlan(PantryV2.self).lightweight(to: PantryV1.self)
}

struct StepRefused: Error, CustomStringConvertible {
    var description: String
}

enum Refusing: SyncedModel {
    static let typeName = "PantryItem"
    typealias ReadOnly = PantryV3
    static let migrationPlan = MigrationPlan(PantryV1.self).custom(to: PantryV3.self) { v1 -> PantryV3 in
        throw StepRefused(description: "cannot convert \(v1.name)")
    }
}

enum Nameless: SyncedModel {
    static let typeName = ""
    typealias ReadOnly = PantryV1
}
