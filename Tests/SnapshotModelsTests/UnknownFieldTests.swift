import Foundation
import SnapshotFormat
import SnapshotModels
import SyncEngine
import Testing

struct AddressV1: Codable, Hashable, Sendable {
    var street: String
}

struct ContactV1: ModelVersion {
    static let schemaVersion: Int64 = 1
    var name: String
    var address: AddressV1
}

enum Contact: SyncedModel {
    static let typeName = "Contact"
    typealias ReadOnly = ContactV1
}

struct PriceV1: ModelVersion {
    static let schemaVersion: Int64 = 1
    var price: Decimal
}

enum Priced: SyncedModel {
    static let typeName = "Priced"
    typealias ReadOnly = PriceV1
}

struct CafeV1: ModelVersion {
    static let schemaVersion: Int64 = 1
    var café: String
}

enum Cafe: SyncedModel {
    static let typeName = "Cafe"
    typealias ReadOnly = CafeV1
}

struct ThingV1: ModelVersion {
    static let schemaVersion: Int64 = 1
    var name: String
}

struct ThingV2: ModelVersion {
    static let schemaVersion: Int64 = 2
    var name: String
    var size: Int?
}

/// V2 gives the name `size` to a number; a writer of V1 records put text there, unknown to V1.
enum Thing: SyncedModel {
    static let typeName = "Thing"
    typealias ReadOnly = ThingV2
    static let migrationPlan = MigrationPlan(ThingV1.self).custom(to: ThingV2.self) { ThingV2(name: $0.name, size: nil) }
}

@Suite("Models: fields this release does not know, and values the format cannot keep")
struct UnknownFieldTests {
    @Test("a field no version declares passes a custom migration step and is kept by the edit; the fields the step converts are not")
    func unknownFieldThroughCustomStep() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let store = try sandbox.store("desk")
        let id = RecordID.random()
        _ = try store.device.put(
            id: id, type: "PantryItem", fields: fields(#"{"name": "Flour", "amount": "2 kg", "extra": "kept"}"#),
            schemaVersion: 2)
        let read = try #require(try store.record(id, as: PantryRelease3.self))
        _ = try store.update(read, to: PantryV3(name: "Flour", quantity: 3, unit: "kg"))
        #expect(
            try store.device.record(id)?.version.fields
                == fields(#"{"name": "Flour", "quantity": 3, "unit": "kg", "extra": "kept"}"#))
    }

    @Test("a key this release does not know inside a known nested field is kept by an edit")
    func nestedUnknownKey() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let store = try sandbox.store("desk")
        let id = RecordID.random()
        _ = try store.device.put(
            id: id, type: "Contact", fields: fields(#"{"name": "Ann", "address": {"street": "Main 1", "zip": "1234"}}"#),
            schemaVersion: 1)
        let read = try #require(try store.record(id, as: Contact.self))
        _ = try store.update(read, to: ContactV1(name: "Anne", address: read.value.address))
        #expect(
            try store.device.record(id)?.version.fields
                == fields(#"{"name": "Anne", "address": {"street": "Main 1", "zip": "1234"}}"#))
    }

    @Test("a field stored under a decomposed key is replaced by the edit, not doubled")
    func decomposedKey() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let store = try sandbox.store("desk")
        let id = RecordID.random()
        _ = try store.device.put(id: id, type: "Cafe", fields: fields("{\"cafe\u{301}\": \"old\"}"), schemaVersion: 1)
        let read = try #require(try store.record(id, as: Cafe.self))
        #expect(read.value.café == "old")
        let edited = try store.update(read, to: CafeV1(café: "new"))
        #expect(edited.value.café == "new")
        #expect(try store.device.record(id)?.version.fields.count == 1)
    }

    @Test("a value whose fields would not read back (a Decimal beyond a double) is refused before anything is written")
    func unreadableValueRefused() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let store = try sandbox.store("desk")
        let huge = try #require(Decimal(string: "123456789012345678901234567890.5"))
        #expect(throws: ModelError.self) { try store.insert(PriceV1(price: huge), as: Priced.self) }
        #expect(try store.device.records().isEmpty)
        #expect(!FileManager.default.fileExists(atPath: sandbox.shared + "/desk.json"))
        #expect(try store.insert(PriceV1(price: Decimal(string: "12.5")!), as: Priced.self).value.price == Decimal(string: "12.5"))
    }

    @Test("resolving with new content is refused when a newer release wrote the current version (its fields would be lost)")
    func resolveOverNewerRelease() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let desk = try sandbox.store("desk")
        let made = try desk.insert(PantryV2(name: "Milk", amount: "1 l"), as: PantryRelease2.self)
        _ = try sandbox.store("laptop").sync()
        let offline = try sandbox.copyOfShared("offline")
        // Laptop, on a newer release, edits it apart (later), while desk edits it too
        sandbox.clock.set(sandbox.clock.now.milliseconds + 60_000)
        let newer = try sandbox.store("laptop", folder: offline)
        let laptopRead = try #require(try newer.record(made.id, as: PantryRelease3.self))
        _ = try newer.updateForeign(laptopRead, to: PantryV3(name: "Milk", quantity: 2, unit: "l"))
        sandbox.clock.set(sandbox.clock.now.milliseconds - 30_000)
        _ = try desk.update(made, to: PantryV2(name: "Milk", amount: "3 l"))
        try sandbox.deliver("laptop", from: offline)
        _ = try desk.sync()
        let conflict = try #require(try desk.conflicts(of: PantryRelease2.self).first)
        #expect(throws: ModelError.self) { try desk.resolve(conflict, with: PantryV2(name: "Milk", amount: "5 l")) }
        #expect(try desk.device.record(made.id)?.version.schemaVersion == 3)
    }

    @Test("resolving with new content is refused when a newer release wrote another candidate, even one that lost")
    func resolveOverNewerCandidate() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let laptop = try sandbox.store("laptop")
        let made = try laptop.insert(PantryV2(name: "Eggs", amount: "6"), as: PantryRelease2.self)
        // The phone, on release 3, edits it apart; the laptop's later edit wins the last-writer order
        let trip = try sandbox.copyOfShared("trip")
        let phone = try sandbox.device("phone", folder: trip)
        _ = try phone.merge()
        sandbox.clock.advance()
        _ = try phone.put(
            id: made.id, type: "PantryItem", fields: fields(#"{"name": "Eggs", "quantity": 6, "unit": "box"}"#),
            schemaVersion: 3)
        sandbox.clock.advance()
        _ = try laptop.update(made, to: PantryV2(name: "Eggs", amount: "12"))
        try sandbox.deliver("phone", from: trip)
        _ = try laptop.sync()
        let conflict = try #require(try laptop.conflicts(of: PantryRelease2.self).first)
        #expect(try laptop.device.record(made.id)?.version.schemaVersion == 2)
        sandbox.clock.advance()
        #expect(throws: ModelError.self) { try laptop.resolve(conflict, with: PantryV2(name: "Eggs", amount: "12")) }
        #expect(try laptop.device.record(made.id)?.conflicts.count == 1)
        // Keeping a candidate whole stays a person's choice
        try laptop.resolve(conflict, keeping: 0)
        #expect(try laptop.device.record(made.id)?.conflicts.isEmpty == true)
    }

    @Test("a field unknown to the previous version that the next one reuses for something else stays behind in a custom step, rather than make the record unreadable")
    func customStepDoesNotResurrectAReusedName() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let store = try sandbox.store("desk")
        let id = RecordID.random()
        _ = try store.device.put(id: id, type: "Thing", fields: fields(#"{"name": "box", "size": "large"}"#), schemaVersion: 1)
        let read = try #require(try store.record(id, as: Thing.self))
        #expect(read.value == ThingV2(name: "box", size: nil))
    }
}

struct StepV1: Codable, Hashable, Sendable {
    var text: String
}

struct RecipeV1: ModelVersion {
    static let schemaVersion: Int64 = 1
    var name: String
    var steps: [StepV1]
}

enum Recipe: SyncedModel {
    static let typeName = "Recipe"
    typealias ReadOnly = RecipeV1
}

struct TagV1: Codable, Hashable, Sendable {
    var label: String
}

/// Its tags are a `Set`: they encode in no stable order.
struct TaggedV1: ModelVersion {
    static let schemaVersion: Int64 = 1
    var name: String
    var tags: Set<TagV1>
}

enum Tagged: SyncedModel {
    static let typeName = "Tagged"
    typealias ReadOnly = TaggedV1
}

struct ChecklistItemV1: Codable, Hashable, Sendable {
    var id: String
    var title: String
}

struct ChecklistV1: ModelVersion {
    static let schemaVersion: Int64 = 1
    var items: [ChecklistItemV1]
}

enum Checklist: SyncedModel {
    static let typeName = "Checklist"
    typealias ReadOnly = ChecklistV1
}

@Suite("Models: keys this release does not know inside the objects of arrays")
struct UnknownKeysInArraysTests {
    /// A checklist whose first item holds a key ChecklistV1 does not know (`due`).
    private static let checklist = #"{"items": [{"id": "a", "title": "Milk", "due": "Monday"}, {"id": "b", "title": "Eggs"}]}"#

    /// A recipe whose steps hold keys RecipeV1 does not know (a newer release's `timer`, `heat`).
    private static let soup =
        #"{"name": "Soup", "steps": [{"text": "chop", "timer": 30}, {"text": "boil", "heat": "high"}]}"#

    private func edited(_ stored: String, _ edit: (inout RecipeV1) -> Void) throws -> JSONObject? {
        try edited(stored, as: Recipe.self, edit)
    }

    private func edited<Model: SyncedModel>(
        _ stored: String, as model: Model.Type, _ edit: (inout Model.ReadOnly) -> Void
    ) throws -> JSONObject? {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let store = try sandbox.store("desk")
        let id = RecordID.random()
        _ = try store.device.put(id: id, type: Model.typeName, fields: fields(stored), schemaVersion: 1)
        let read = try #require(try store.record(id, as: Model.self))
        var value = read.value
        edit(&value)
        _ = try store.update(read, to: value)
        return try store.device.record(id)?.version.fields
    }

    @Test("an edit elsewhere in the record keeps every element's unknown keys")
    func editElsewhere() throws {
        #expect(
            try edited(Self.soup) { $0.name = "Broth" }
                == fields(#"{"name": "Broth", "steps": [{"text": "chop", "timer": 30}, {"text": "boil", "heat": "high"}]}"#))
    }

    @Test("elements the app moves keep their own unknown keys")
    func reordered() throws {
        #expect(
            try edited(Self.soup) { $0.steps.reverse() }
                == fields(#"{"name": "Soup", "steps": [{"text": "boil", "heat": "high"}, {"text": "chop", "timer": 30}]}"#))
    }

    @Test("an element the app edits in an array of the same length keeps its unknown keys, by position")
    func editedInPlace() throws {
        #expect(
            try edited(Self.soup) { $0.steps[0].text = "dice" }
                == fields(#"{"name": "Soup", "steps": [{"text": "dice", "timer": 30}, {"text": "boil", "heat": "high"}]}"#))
    }

    @Test("an element the app removes takes its unknown keys with it; the others keep theirs")
    func removed() throws {
        #expect(
            try edited(Self.soup) { $0.steps.removeFirst() }
                == fields(#"{"name": "Soup", "steps": [{"text": "boil", "heat": "high"}]}"#))
        #expect(
            try edited(Self.soup) { $0.steps.append(StepV1(text: "serve")) }
                == fields(
                    #"{"name": "Soup", "steps": [{"text": "chop", "timer": 30}, {"text": "boil", "heat": "high"}, {"text": "serve"}]}"#))
    }

    @Test("an edited element is found by its id when the array changed length")
    func foundByID() throws {
        #expect(
            try edited(Self.checklist, as: Checklist.self) { value in
                value.items[0].title = "Oat milk"
                value.items.insert(ChecklistItemV1(id: "c", title: "Bread"), at: 0)
            }
                == fields(
                    #"{"items": [{"id": "c", "title": "Bread"}, {"id": "a", "title": "Oat milk", "due": "Monday"}, {"id": "b", "title": "Eggs"}]}"#
                ))
    }

    @Test("elements written alike are told apart by their position: an in-place edit of one keeps each one's keys")
    func alikeElements() throws {
        #expect(
            try edited(#"{"name": "Soup", "steps": [{"text": "stir", "timer": 30}, {"text": "stir", "timer": 60}]}"#) {
                $0.steps[0].text = "whisk"
            } == fields(#"{"name": "Soup", "steps": [{"text": "whisk", "timer": 30}, {"text": "stir", "timer": 60}]}"#))
        #expect(
            try edited(Self.soup) { $0.steps[0].text = "boil" }
                == fields(#"{"name": "Soup", "steps": [{"text": "boil", "timer": 30}, {"text": "boil", "heat": "high"}]}"#))
    }

    @Test("the elements of a Set (written in any order) keep their own keys")
    func setElements() throws {
        let labels = ["a", "b", "c", "d", "e", "f"]
        let tags = labels.map { #"{"label": "\#($0)", "color": "color of \#($0)"}"# }.joined(separator: ", ")
        let result = try #require(try edited(#"{"name": "box", "tags": [\#(tags)]}"#, as: Tagged.self) { $0.name = "crate" })
        guard case .array(let items)? = result["tags"] else {
            Issue.record("no tags in \(result)")
            return
        }
        #expect(items.count == 6)
        for case .object(let tag) in items {
            guard case .string(let label)? = tag["label"] else { continue }
            #expect(tag["color"] == .string("color of \(label)"), "\(result)")
        }
    }

    @Test("an element removed by id takes its keys with it, even when another takes its place")
    func removedByID() throws {
        #expect(
            try edited(Self.checklist, as: Checklist.self) { value in
                value.items.removeFirst()
                value.items.append(ChecklistItemV1(id: "c", title: "Bread"))
            } == fields(#"{"items": [{"id": "b", "title": "Eggs"}, {"id": "c", "title": "Bread"}]}"#))
    }

    @Test("renamed elements of a Set (written in any order) never take another element's keys")
    func renamedSetElements() throws {
        let labels = ["a", "b", "c", "d", "e", "f"]
        let tags = labels.map { #"{"label": "\#($0)", "color": "color of \#($0)"}"# }.joined(separator: ", ")
        for _ in 0..<5 {
            let result = try #require(
                try edited(#"{"name": "box", "tags": [\#(tags)]}"#, as: Tagged.self) { value in
                    value.tags = Set(value.tags.map { $0.label == "a" || $0.label == "b" ? TagV1(label: $0.label + "2") : $0 })
                })
            guard case .array(let items)? = result["tags"] else {
                Issue.record("no tags in \(result)")
                return
            }
            for case .object(let tag) in items {
                guard case .string(let label)? = tag["label"] else { continue }
                if label.hasSuffix("2") {
                    #expect(tag["color"] == nil, "\(result)")
                } else {
                    #expect(tag["color"] == .string("color of \(label)"), "\(result)")
                }
            }
        }
    }
}
