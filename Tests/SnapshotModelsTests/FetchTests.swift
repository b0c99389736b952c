import SnapshotFormat
import SnapshotModels
import SyncEngine
import Testing

@Suite("Models: fetching by type with a predicate and an order")
struct FetchTests {
    @Test("fetch returns the live records of the type that match, in the order asked, ties by id")
    func predicateAndOrder() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let store = try sandbox.store("desk")
        let items = [
            ("Eggs", "6", "b"), ("Flour", "2 kg", nil), ("Apples", "6", "a"), ("Milk", "1", nil), ("Bread", "1", "a"),
        ]
        var byName: [String: ModelRecord<PantryRelease2>] = [:]
        for (name, amount, note) in items {
            sandbox.clock.advance()
            byName[name] = try store.insert(PantryV2(name: name, amount: amount, note: note), as: PantryRelease2.self)
        }
        _ = try store.insert(NoteV1(text: "not a pantry item"), as: Note.self)
        try store.delete(byName["Milk"]!)

        // A predicate on the value, sorted by name
        let six = try store.fetch(PantryRelease2.self, where: { $0.amount == "6" }, sortedBy: [.ascending(\.name)])
        #expect(six.records.map(\.name) == ["Apples", "Eggs"])
        // Descending by a record property
        let newest = try store.fetch(PantryRelease2.self, sortedBy: [.descending(\.lastModified)])
        #expect(newest.records.map(\.name) == ["Bread", "Apples", "Flour", "Eggs"])
        // An optional key: nil first ascending, last descending; then the next key
        let byNote = try store.fetch(PantryRelease2.self, sortedBy: [.ascending(\.note), .descending(\.name)])
        #expect(byNote.records.map(\.name) == ["Flour", "Bread", "Apples", "Eggs"])
        let byNoteDown = try store.fetch(PantryRelease2.self, sortedBy: [.descending(\.note), .ascending(\.name)])
        #expect(byNoteDown.records.map(\.name) == ["Eggs", "Apples", "Bread", "Flour"])
        // No order: by id
        let all = try store.fetch(PantryRelease2.self).records
        #expect(all.map(\.id) == all.map(\.id).sorted())
        #expect(try store.fetch(Note.self).records.map(\.text) == ["not a pantry item"])
    }

    @Test("record(_:as:) finds one record; deleted is nil; another type is an error")
    func oneRecord() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let store = try sandbox.store("desk")
        let note = try store.insert(NoteV1(text: "hello", pinned: true), as: Note.self)
        #expect(try store.record(note.id, as: Note.self)?.value == NoteV1(text: "hello", pinned: true))
        #expect(try store.record(RecordID.random(), as: Note.self) == nil)
        let error = try #require(throws: ModelError.self) { try store.record(note.id, as: PantryRelease2.self) }
        #expect(error == .otherType(id: note.id, expected: "PantryItem", actual: "Note"))
        try store.delete(note)
        #expect(try store.record(note.id, as: Note.self) == nil)
    }
}
