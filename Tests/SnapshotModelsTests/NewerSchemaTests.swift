import SnapshotFormat
import SnapshotModels
import SyncEngine
import Testing

@Suite("Models: records from a newer release pass through verbatim")
struct NewerSchemaTests {
    @Test("A record with a newer schemaVersion is reported, kept verbatim, and published on unchanged")
    func newerVersionPassesThrough() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        // Given a device on release 3 writes a V3 item, and one on release 1 shares the folder
        let upgraded = try sandbox.store("upgraded")
        let written = try upgraded.insert(
            PantryV3(name: "Rice", quantity: 3, unit: "bags", note: "basmati"), as: PantryRelease3.self)
        let old = try sandbox.store("old")
        _ = try old.insert(PantryV1(name: "Flour", amount: "2 kg"), as: PantryRelease1.self)

        // When release 1 syncs and fetches
        try old.sync()
        let result = try old.fetch(PantryRelease1.self)

        // Then it sees its own item and reports the newer one, without dropping it
        #expect(result.records.map(\.value) == [PantryV1(name: "Flour", amount: "2 kg")])
        let passed = try #require(result.passedOver.first)
        #expect(passed.id == written.id && passed.reason == .newerSchema(stored: 3, known: 1))
        #expect(passed.explanation.contains("schemaVersion 3 by a newer release"))
        #expect(passed.version.fields == fields(#"{"name": "Rice", "quantity": 3, "unit": "bags", "note": "basmati"}"#))
        let error = try #require(throws: ModelError.self) { try old.record(written.id, as: PantryRelease1.self) }
        #expect(error == .newerSchema(id: written.id, type: "PantryItem", stored: 3, known: 1))
        // And its own published file carries the V3 version exactly as written
        let published = try sandbox.published("old").versions.first { $0.id == written.id }
        #expect(published == (try upgraded.device.record(written.id))?.version)
    }

    @Test("Release 1 keeps working beside release 3 on the same records: an old-shape edit is read back by release 3")
    func olderReleaseKeepsWorking() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let old = try sandbox.store("old")
        let flour = try old.insert(PantryV1(name: "Flour", amount: "2 kg"), as: PantryRelease1.self)
        let upgraded = try sandbox.store("upgraded")
        try upgraded.sync()
        // Release 1 edits its item again, still in V1
        sandbox.clock.advance()
        _ = try old.update(flour, to: PantryV1(name: "Flour", amount: "5 kg"))
        try upgraded.sync()
        let read = try #require(try upgraded.record(flour.id, as: PantryRelease3.self))
        #expect(read.value == PantryV3(name: "Flour", quantity: 5, unit: "kg"))
        #expect(read.storedSchemaVersion == 1 && !read.isMadeHere)
    }

    @Test("Fields this release does not know are carried over when this device edits the record")
    func unknownFieldsSurviveAnEdit() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let device = try sandbox.device("desk")
        // A hand-made V2 version with a field V2 does not declare
        let report = try device.put(
            id: nil, type: "PantryItem", fields: fields(#"{"name": "Eggs", "amount": "6", "colour": "brown"}"#),
            schemaVersion: 2)
        let store = ModelStore(device: device)
        let eggs = try #require(try store.record(RecordID(report.id)!, as: PantryRelease2.self))
        // When release 2 edits it, clearing nothing it does not know
        _ = try store.update(eggs, to: PantryV2(name: "Eggs", amount: "12", note: nil))
        let held = try #require(try device.record(eggs.id))
        #expect(held.version.fields == fields(#"{"name": "Eggs", "amount": "12", "colour": "brown"}"#))
        // And clearing a field it knows still clears it
        let noted = try store.update(
            try #require(try store.record(eggs.id, as: PantryRelease2.self)),
            to: PantryV2(name: "Eggs", amount: "12", note: "x"))
        _ = try store.update(noted, to: PantryV2(name: "Eggs", amount: "12", note: nil))
        #expect(
            try device.record(eggs.id)?.version.fields
                == fields(#"{"name": "Eggs", "amount": "12", "colour": "brown"}"#))
    }
}
