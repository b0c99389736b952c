import Foundation
import SnapshotFormat
import SnapshotModels
import SyncEngine
import TestSupport
import Testing

@Suite("Models: saving stamps versions as the contract says")
struct SavingTests {
    @Test("insert, update and delete stamp schemaVersion, the clock rule, the vector and modifiedBy, and publish")
    func stamping() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let store = try sandbox.store("desk")
        let start = sandbox.clock.now.milliseconds
        let desk = DeviceID("desk")!

        let made = try store.insert(PantryV2(name: "Eggs", amount: "6"), as: PantryRelease2.self)
        var held = try #require(try store.device.record(made.id)).version
        #expect(held.type == "PantryItem" && held.schemaVersion == 2 && held.modifiedBy == desk)
        #expect(held.versionVector == VersionVector([desk: 1]) && held.lastModified?.milliseconds == start)
        #expect(held.fields == fields(#"{"name": "Eggs", "amount": "6"}"#))
        #expect(made.isMadeHere && made.unresolvedConflicts == 0)

        // The clock runs behind the current version: the edit is dated 1 ms after it
        sandbox.clock.set(start - 60_000)
        let edited = try store.update(made, to: PantryV2(name: "Eggs", amount: "12", note: "brown"))
        held = try #require(try store.device.record(made.id)).version
        #expect(held.versionVector == VersionVector([desk: 2]) && held.lastModified?.milliseconds == start + 1)
        #expect(held.fields == fields(#"{"name": "Eggs", "amount": "12", "note": "brown"}"#))
        #expect(edited.value.note == "brown")

        sandbox.clock.set(start + 5_000)
        try store.delete(edited)
        let tombstone = try #require(try store.device.record(made.id)).version
        #expect(tombstone.deleted && tombstone.fields.count == 0 && tombstone.schemaVersion == 2)
        #expect(
            tombstone.versionVector == VersionVector([desk: 3]) && tombstone.lastModified?.milliseconds == start + 5_000
        )
        #expect(try sandbox.published("desk").versions == [tombstone])
        #expect(try store.fetch(PantryRelease2.self).records.isEmpty)
    }

    @Test("insert with a taken id is refused")
    func insertTakenID() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let store = try sandbox.store("desk")
        let made = try store.insert(NoteV1(text: "a"), as: Note.self)
        #expect(throws: ModelError.alreadyExists(id: made.id)) {
            try store.insert(NoteV1(text: "b"), as: Note.self, id: made.id)
        }
        let chosen = RecordID.random()
        #expect(try store.insert(NoteV1(text: "c"), as: Note.self, id: chosen).id == chosen)
    }

    @Test("Two devices edit apart: the conflict shows both versions, and resolving it clears it everywhere")
    func conflictAndResolution() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let laptop = try sandbox.store("laptop")
        let made = try laptop.insert(PantryV2(name: "Eggs", amount: "6"), as: PantryRelease2.self)
        // The phone takes the folder on a trip
        let trip = try sandbox.copyOfShared("trip")
        let phone = try sandbox.store("phone", folder: trip)
        try phone.sync()
        let phoneCopy = try #require(try phone.record(made.id, as: PantryRelease2.self))
        sandbox.clock.advance()
        _ = try laptop.update(made, to: PantryV2(name: "Eggs", amount: "12"))
        sandbox.clock.advance()
        _ = try phone.updateForeign(phoneCopy, to: PantryV2(name: "Eggs", amount: "6", note: "large"))
        // Back home: the phone's file reaches the shared folder
        try sandbox.deliver("phone", from: trip)
        let home = try sandbox.store("phone")
        #expect(try laptop.sync().newConflicts == 1)
        try home.sync()

        let conflict = try #require(try laptop.conflicts(of: PantryRelease2.self).first)
        #expect(conflict.id == made.id)
        #expect(conflict.candidates.map(\.modifiedBy) == [DeviceID("phone"), DeviceID("laptop")])
        #expect(conflict.candidates.map(\.value?.amount) == ["6", "12"])
        #expect(try laptop.record(made.id, as: PantryRelease2.self)?.unresolvedConflicts == 1)

        // The laptop resolves with new content
        sandbox.clock.advance()
        try laptop.resolve(conflict, with: PantryV2(name: "Eggs", amount: "12", note: "large"))
        try home.sync()
        #expect(try home.conflicts(of: PantryRelease2.self).isEmpty)
        #expect(
            try home.record(made.id, as: PantryRelease2.self)?.value
                == PantryV2(name: "Eggs", amount: "12", note: "large"))
        // Resolving a record that is no longer in conflict is refused
        #expect(throws: ModelError.self) { try laptop.resolve(conflict, keeping: 1) }
    }

    @Test("Resolving by keeping a version keeps its content and schemaVersion")
    func resolveKeeping() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let laptop = try sandbox.store("laptop")
        let made = try laptop.insert(PantryV1(name: "Flour", amount: "1 kg"), as: PantryRelease1.self)
        let trip = try sandbox.copyOfShared("trip")
        let phone = try sandbox.store("phone", folder: trip)
        try phone.sync()
        sandbox.clock.advance()
        _ = try phone.updateForeign(
            try #require(try phone.record(made.id, as: PantryRelease3.self)),
            to: PantryV3(name: "Flour", quantity: 2, unit: "kg"))
        sandbox.clock.advance()
        _ = try laptop.update(made, to: PantryV1(name: "Flour", amount: "3 kg"))
        try sandbox.deliver("phone", from: trip)
        try laptop.sync()
        let conflict = try #require(try laptop.conflicts(of: PantryRelease1.self).first)
        // Release 1 cannot read the phone's V3 version, and says why
        let phoneVersion = try #require(conflict.candidates.first { $0.modifiedBy == DeviceID("phone") })
        #expect(phoneVersion.value == nil && phoneVersion.storedSchemaVersion == 3)
        #expect(phoneVersion.problem?.contains("newer release") == true)
        // Keeping it keeps the V3 content as it is
        try laptop.resolve(conflict, keeping: phoneVersion)
        let held = try #require(try laptop.device.record(made.id))
        #expect(held.conflicts.isEmpty && held.version.schemaVersion == 3)
        #expect(held.version.fields == fields(#"{"name": "Flour", "quantity": 2, "unit": "kg"}"#))
    }
}

@Suite("Models: a save that could not be published", .serialized)
struct UnpublishedSaveTests {
    @Test(
        "a save whose publication fails (the folder mounted read-only) is kept, and lastPublishFailure says why until a sync publishes it",
        .enabled(if: TinyFileSystem.canMount, "needs root to mount a tmpfs"))
    func unpublishedSave() throws {
        // Given a store on a shared folder of its own file system, its record published
        let disk = try TinyFileSystem(kilobytes: 1024)
        defer { disk.remove() }
        let state = NSTemporaryDirectory() + "unpublished-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: state) }
        let store = try ModelStore(sharedFolder: disk.path, stateDirectory: state, device: DeviceID("desk"))
        let made = try store.insert(PantryV2(name: "Milk", amount: "1 l"), as: PantryRelease2.self)
        #expect(store.lastPublishFailure == nil)

        // When the folder is remounted read-only and the record is edited
        try disk.remount(readOnly: true)
        let edited = try store.update(made, to: PantryV2(name: "Milk", amount: "2 l"))

        // Then the edit is saved, and the store says it is not published, and why
        #expect(edited.value.amount == "2 l")
        #expect(store.lastPublishFailure?.contains("read-only") == true, "\(String(describing: store.lastPublishFailure))")
        // And once the folder is writable, a sync publishes it and the failure is gone
        try disk.remount(readOnly: false)
        try store.sync()
        #expect(store.lastPublishFailure == nil)
        let published = try [UInt8](Data(contentsOf: URL(fileURLWithPath: disk.path + "/desk.json")))
        #expect(String(decoding: published, as: UTF8.self).contains(#""amount":"2 l""#))
    }
}
