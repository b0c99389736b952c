import SnapshotFormat
import SnapshotModels
import SyncEngine
import Testing

@Suite("Models: another device's record is read-only content")
struct ForeignRecordTests {
    @Test("update and delete refuse another device's record and write nothing; the explicit calls edit it")
    func foreignEditsNeedTheExplicitCall() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let laptop = try sandbox.store("laptop")
        let made = try laptop.insert(PantryV2(name: "Eggs", amount: "6"), as: PantryRelease2.self)
        let phone = try sandbox.store("phone")
        try phone.sync()
        let seen = try #require(try phone.record(made.id, as: PantryRelease2.self))
        #expect(!seen.isMadeHere && seen.modifiedBy == DeviceID("laptop"))
        let generation = try sandbox.published("phone").generation

        // When the phone tries an ordinary update or delete
        let error = try #require(throws: ModelError.self) {
            try phone.update(seen, to: PantryV2(name: "Eggs", amount: "12"))
        }
        #expect(error == .foreignRecord(id: made.id, type: "PantryItem", madeBy: DeviceID("laptop")))
        #expect(error.description.contains("read-only on this device"))
        #expect(throws: ModelError.self) { try phone.delete(seen) }
        // Then nothing was written or published
        #expect(try phone.device.record(made.id)?.version == laptop.device.record(made.id)?.version)
        #expect(try sandbox.published("phone").generation == generation)

        // When a person asks for the edit, the explicit call makes it, and the record is the phone's now
        let edited = try phone.updateForeign(seen, to: PantryV2(name: "Eggs", amount: "12"))
        #expect(edited.isMadeHere && edited.value.amount == "12")
        #expect(try phone.device.record(made.id)?.version.modifiedBy == DeviceID("phone"))
        // And the laptop may no longer update it without the explicit call either
        try laptop.sync()
        let back = try #require(try laptop.record(made.id, as: PantryRelease2.self))
        #expect(throws: ModelError.self) { try laptop.update(back, to: PantryV2(name: "Eggs", amount: "1")) }
        try laptop.deleteForeign(back)
        #expect(try laptop.record(made.id, as: PantryRelease2.self) == nil)
        #expect(try laptop.device.record(made.id)?.version.deleted == true)
    }

    @Test("A backfill fills only this device's records, and only when asked")
    func backfillOnlyOwnRecords() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let laptop = try sandbox.store("laptop")
        let phone = try sandbox.store("phone")
        let eggs = try laptop.insert(PantryV2(name: "Eggs", amount: "6"), as: PantryRelease2.self)
        let noted = try laptop.insert(PantryV2(name: "Milk", amount: "1", note: "oat"), as: PantryRelease2.self)
        let flour = try phone.insert(PantryV1(name: "Flour", amount: "2 kg"), as: PantryRelease1.self)
        let salt = try phone.insert(PantryV2(name: "Salt", amount: "1"), as: PantryRelease2.self)
        try laptop.sync()

        // Reading does not backfill
        #expect(try laptop.fetch(PantryRelease2.self).records.filter { $0.note == nil }.count == 3)

        // When the laptop backfills the note, with nothing for salt
        var asked: [String] = []
        let report = try laptop.backfill(PantryRelease2.self, missing: \.note) { record in
            asked.append(record.name)
            return "checked on laptop"
        }

        // Then only its own record without a note was computed and filled; the phone's are left to the phone
        #expect(asked == ["Eggs"])
        #expect(report.filled == [eggs.id])
        #expect(Set(report.leftToTheirMakers) == [flour.id, salt.id])
        #expect(try laptop.record(eggs.id, as: PantryRelease2.self)?.note == "checked on laptop")
        #expect(try laptop.record(noted.id, as: PantryRelease2.self)?.note == "oat")
        #expect(try laptop.device.record(flour.id)?.version.modifiedBy == DeviceID("phone"))
        #expect(try laptop.device.record(flour.id)?.version.schemaVersion == 1)
        #expect(try laptop.device.record(salt.id)?.version.fields["note"] == nil)
    }

    @Test("An edit of a record that changed since it was read is refused: read it again")
    func changedSinceRead() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let laptop = try sandbox.store("laptop")
        let made = try laptop.insert(PantryV2(name: "Eggs", amount: "6"), as: PantryRelease2.self)
        let phone = try sandbox.store("phone")
        try phone.sync()
        let stale = try #require(try laptop.record(made.id, as: PantryRelease2.self))
        let phoneCopy = try #require(try phone.record(made.id, as: PantryRelease2.self))
        sandbox.clock.advance()
        _ = try phone.updateForeign(phoneCopy, to: PantryV2(name: "Eggs", amount: "10"))
        // The laptop has not synced: its update merges first and finds the phone's version
        let error = try #require(throws: ModelError.self) {
            try laptop.update(stale, to: PantryV2(name: "Eggs", amount: "8"))
        }
        #expect(error == .changedSinceRead(id: made.id))
        #expect(try laptop.record(made.id, as: PantryRelease2.self)?.amount == "10")
    }
}
