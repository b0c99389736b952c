import Foundation
import SnapshotFormat
import SnapshotModels
import SyncEngine
import Synchronization
import Testing

/// Runs an action at a chosen call of a device's clock: each merge pass reads the clock first,
/// before it lists the folder, so the action (a sync tool delivering a file) lands exactly
/// between an edit's check and its own merge.
final class ClockHook: Sendable {
    private let state = Mutex<(calls: Int, at: Int, action: (@Sendable () -> Void)?)>((0, 0, nil))

    /// Runs `action` at the `call`-th reading of the clock from now on.
    func arm(at call: Int, _ action: @escaping @Sendable () -> Void) {
        state.withLock { $0 = (0, call, action) }
    }

    func tick() {
        let action = state.withLock { state -> (@Sendable () -> Void)? in
            guard state.action != nil else { return nil }
            state.calls += 1
            guard state.calls == state.at else { return nil }
            defer { state.action = nil }
            return state.action
        }
        action?()
    }
}

extension Sandbox {
    /// A model store for device `name` whose clock runs `hook` first.
    func store(_ name: String, hook: ClockHook) throws -> ModelStore {
        let settings = SyncSettings(sharedFolder: shared, stateDirectory: path(name), device: DeviceID(name)!)
        let clock = self.clock
        return ModelStore(
            device: try SyncDevice(settings: settings, logger: quietLogger, clock: { hook.tick(); return clock.now }))
    }
}

@Suite("Models: versions that arrive while an edit runs")
struct RaceTests {
    /// Laptop's record, merged by desk; then laptop's edit of it made offline, not yet delivered.
    static func laptopEditPending(_ sandbox: Sandbox) throws -> (offline: String, id: RecordID) {
        let laptop = try sandbox.store("laptop")
        let made = try laptop.insert(PantryV2(name: "Milk", amount: "1 l"), as: PantryRelease2.self)
        let offline = try sandbox.copyOfShared("offline")
        let away = try sandbox.store("laptop", folder: offline)
        let held = try #require(try away.record(made.id, as: PantryRelease2.self))
        _ = try away.update(held, to: PantryV2(name: "Milk", amount: "2 l"))
        return (offline, made.id)
    }

    @Test("an update or delete whose own merge brings another device's newer version fails with changedSinceRead and replaces nothing; the merge is kept")
    func versionArrivingDuringEdit() throws {
        for deleting in [false, true] {
            let sandbox = try Sandbox()
            defer { sandbox.remove() }
            let hook = ClockHook()
            let desk = try sandbox.store("desk", hook: hook)
            let (offline, id) = try Self.laptopEditPending(sandbox)
            _ = try desk.sync()
            let read = try #require(try desk.record(id, as: PantryRelease2.self))
            #expect(read.value.amount == "1 l")

            // When laptop's edit is delivered between desk's check (its 1st pass) and its edit (the 2nd)
            hook.arm(at: 2) { try? sandbox.deliver("laptop", from: offline) }
            #expect(throws: ModelError.changedSinceRead(id: id)) {
                if deleting {
                    try desk.deleteForeign(read)
                } else {
                    try desk.updateForeign(read, to: PantryV2(name: "Milk", amount: "3 l"))
                }
            }

            // Then desk holds laptop's edit, not its own, and published nothing of its own edit
            let held = try #require(try desk.device.record(id))
            #expect(held.version.fields == fields(#"{"name": "Milk", "amount": "2 l"}"#) && held.conflicts.isEmpty)
            #expect(held.version.modifiedBy == DeviceID("laptop"))
        }
    }

    @Test("insert with a chosen id that another device's record, merged only by the insert's own merge, already has fails with alreadyExists and overwrites nothing")
    func insertCollidingWithArrivingRecord() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let hook = ClockHook()
        let desk = try sandbox.store("desk", hook: hook)
        let offline = try sandbox.copyOfShared("offline")
        let id = RecordID.random()
        _ = try sandbox.store("laptop", folder: offline).insert(
            PantryV2(name: "Laptop's", amount: "1"), as: PantryRelease2.self, id: id)

        hook.arm(at: 1) { try? sandbox.deliver("laptop", from: offline) }
        #expect(throws: ModelError.alreadyExists(id: id)) {
            try desk.insert(PantryV2(name: "Desk's", amount: "2"), as: PantryRelease2.self, id: id)
        }
        #expect(try desk.device.record(id)?.version.fields == fields(#"{"name": "Laptop's", "amount": "1"}"#))
    }

    @Test("insert over a deleted record's id revives it (as syncctl put does); over another type's record it says so")
    func insertOverTombstone() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let store = try sandbox.store("desk")
        let made = try store.insert(PantryV2(name: "Eggs", amount: "6"), as: PantryRelease2.self)
        try store.delete(made)
        let revived = try store.insert(PantryV2(name: "Eggs", amount: "12"), as: PantryRelease2.self, id: made.id)
        #expect(revived.value.amount == "12")
        #expect(try store.device.record(made.id)?.version.deleted == false)
        #expect(throws: ModelError.otherType(id: made.id, expected: "Note", actual: "PantryItem")) {
            try store.insert(NoteV1(text: "x"), as: Note.self, id: made.id)
        }
    }
}

@Suite("Models: this device's own concurrent edit kept as a conflict")
struct OwnConflictTests {
    /// Eggs inserted on the laptop; the laptop edits them (`edit`) while the phone, offline, edits
    /// them too, later; back in step, the laptop holds the phone's version as current and its own
    /// as a conflict.
    static func editedApart(
        in sandbox: Sandbox, _ edit: (ModelStore, ModelRecord<PantryRelease2>) throws -> Void
    ) throws -> (laptop: ModelStore, made: ModelRecord<PantryRelease2>) {
        let laptop = try sandbox.store("laptop")
        let made = try laptop.insert(PantryV2(name: "Eggs", amount: "6"), as: PantryRelease2.self)
        let trip = try sandbox.copyOfShared("trip")
        let phone = try sandbox.store("phone", folder: trip)
        _ = try phone.sync()
        let phoneCopy = try #require(try phone.record(made.id, as: PantryRelease2.self))
        sandbox.clock.advance()
        try edit(laptop, made)
        sandbox.clock.advance()
        _ = try phone.updateForeign(phoneCopy, to: PantryV2(name: "Eggs", amount: "6", note: "large"))
        try sandbox.deliver("phone", from: trip)
        _ = try laptop.sync()
        return (laptop, made)
    }

    @Test("an edit of a record holding this device's own concurrent edit as a conflict is refused (it would supersede it unseen); resolving settles it")
    func editOverOwnConflictRefused() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        // Given: the laptop edits the record (amount 12) while the phone, offline, edits it too,
        // later; back in step, the phone's version is current and the laptop's a conflict
        let (laptop, made) = try Self.editedApart(in: sandbox) { laptop, made in
            _ = try laptop.update(made, to: PantryV2(name: "Eggs", amount: "12"))
        }
        let record = try #require(try laptop.record(made.id, as: PantryRelease2.self))
        #expect(record.unresolvedConflicts == 1 && record.modifiedBy == DeviceID("phone"))

        // When a person on the laptop edits the version shown, or deletes the record
        var value = record.value
        value.note = "free range"
        sandbox.clock.advance()
        // Then both are refused, and the laptop's own edit is still there
        #expect(throws: ModelError.ownConflict(id: made.id, type: "PantryItem")) { try laptop.updateForeign(record, to: value) }
        #expect(throws: ModelError.ownConflict(id: made.id, type: "PantryItem")) { try laptop.deleteForeign(record) }
        #expect(try laptop.device.record(made.id)?.conflicts.map { $0.fields["amount"] } == [.string("12")])
        // And resolving with new content settles it
        let conflict = try #require(try laptop.conflicts(of: PantryRelease2.self).first)
        try laptop.resolve(conflict, with: PantryV2(name: "Eggs", amount: "12", note: "free range"))
        let settled = try #require(try laptop.record(made.id, as: PantryRelease2.self))
        #expect(settled.unresolvedConflicts == 0 && settled.value.amount == "12")
        _ = try laptop.update(settled, to: PantryV2(name: "Eggs", amount: "10", note: "free range"))
    }

    @Test("resolving with new content keeps the fields this release does not know of every candidate, not only the current one's")
    func resolveKeepsEveryCandidatesUnknownFields() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        // Given: the laptop's version (a field this release does not know, "brand") loses to the phone's
        let (laptop, made) = try Self.editedApart(in: sandbox) { laptop, made in
            _ = try laptop.device.put(
                id: made.id, type: "PantryItem", fields: fields(#"{"name": "Eggs", "amount": "12", "brand": "Happy Hens"}"#),
                schemaVersion: 2, expecting: .current(try #require(try laptop.device.record(made.id)).version))
        }
        let conflict = try #require(try laptop.conflicts(of: PantryRelease2.self).first)

        // When a person resolves with new content built from both
        sandbox.clock.advance()
        try laptop.resolve(conflict, with: PantryV2(name: "Eggs", amount: "12", note: "large"))

        // Then the losing candidate's "brand" is kept
        let held = try #require(try laptop.device.record(made.id))
        #expect(held.conflicts.isEmpty)
        #expect(held.version.fields == fields(#"{"name": "Eggs", "amount": "12", "note": "large", "brand": "Happy Hens"}"#))
    }
}
