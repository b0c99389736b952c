import Foundation
import Testing

extension SyncthingTests {
    @Test("a new record, an edit and a delete made on either machine reach the other machine's store through Syncthing")
    func editsAndDeletesPropagate() async throws {
        try await SyncthingPair.run { pair in
            // Given two machines whose Syncthing instances are in sync, each running syncd
            let (a, b) = (pair.a, pair.b)

            // When a puts a new record
            let id = try await a.put(["text": "milk"])
            // Then b's store holds it, as a made it
            let arrived = try await pair.waitFor(id, on: b) { $0.text == "milk" }
            #expect(arrived.modifiedBy == "alpha")
            #expect(arrived.versionVector == ["alpha": 1])

            // When b edits it
            try await b.put(["text": "oat milk"], id: id)
            // Then a's store holds b's version, which descends from a's
            let edited = try await pair.waitFor(id, on: a) { $0.text == "oat milk" }
            #expect(edited.modifiedBy == "beta")
            #expect(edited.versionVector == ["alpha": 1, "beta": 1])
            #expect(edited.conflicts.isEmpty)

            // When b puts a record of its own and a deletes the first one
            let second = try await b.put(["text": "bread"])
            try await pair.waitFor(second, on: a) { $0.text == "bread" }
            try await a.delete(id)
            // Then b holds the tombstone, and a holds b's new record
            let tombstone = try await pair.waitFor(id, on: b) { $0.deleted }
            #expect(tombstone.modifiedBy == "alpha")
            #expect(tombstone.versionVector == ["alpha": 2, "beta": 1])

            // And both stores end identical, with no conflicts
            let records = try await pair.waitUntilStoresAgree()
            #expect(records.map(\.id).sorted() == [id, second].sorted())
            #expect(try await a.conflictListing() == "[]\n")
            #expect(try await b.conflictListing() == "[]\n")
            // And neither daemon reported a problem
            for machine in pair.machines {
                #expect(try await machine.statusWarnings() == [], "\(pair.diagnostics())")
            }
        }
    }
}
