import Foundation
import Testing

extension SyncthingTests {
    @Test(
        "edits of the same records on both sides of a partition end, once it heals, with the same winners and the same conflicts on both machines, and a resolve on one machine clears the conflict on both"
    )
    func partitionHealsToTheSameConflicts() async throws {
        try await SyncthingPair.run { pair in
            // Given three records made on a and held by both machines
            let (a, b) = (pair.a, pair.b)
            var ids: [String] = []
            for text in ["apples", "pears", "plums"] { ids.append(try await a.put(["text": text])) }
            try await pair.waitUntilStoresAgree { $0.count == 3 }

            // When the link is cut (each Syncthing pauses the other)
            try await pair.partition()
            // And both machines edit records 0 and 1, a edits record 2 and b deletes it
            try await a.put(["text": "green apples"], id: ids[0])
            try await b.put(["text": "red apples"], id: ids[0])
            try await b.put(["text": "pears, ripe"], id: ids[1])
            try await a.put(["text": "pears, hard"], id: ids[1])
            try await a.put(["text": "plums, many"], id: ids[2])
            try await b.delete(ids[2])
            // Then, while the link is down, each store holds only its own edits
            #expect(try await a.record(ids[0])?.text == "green apples")
            #expect(try await b.record(ids[0])?.text == "red apples")
            #expect(try await b.record(ids[2])?.deleted == true)

            // When the link heals
            try await pair.heal()
            // Then both stores converge to the same records, each with the other side's edit as a conflict
            let records = try await pair.waitUntilStoresAgree(timeout: 30) { records in
                records.count == 3 && records.allSatisfy { $0.conflicts.count == 1 }
            }
            let byID = Dictionary(uniqueKeysWithValues: records.map { ($0.id, $0) })
            for id in ids {
                let record = try #require(byID[id])
                let versions = [record] + record.conflicts
                #expect(Set(versions.map(\.modifiedBy)) == ["alpha", "beta"], "\(record)")
                // And the winner is the later of the two edits (last-writer-wins), a delete included
                #expect(record.lastModifiedMilliseconds! >= record.conflicts[0].lastModifiedMilliseconds!, "\(record)")
            }
            #expect(byID[ids[0]]?.text == "red apples")
            #expect(byID[ids[1]]?.text == "pears, hard")
            #expect(byID[ids[2]]?.deleted == true)
            // And both machines list the same conflicts for a person to resolve
            let conflicts = try await a.conflictListing()
            #expect(try await b.conflictListing() == conflicts)
            #expect(try SnapshotRecord.list(json: conflicts).map(\.id).sorted() == ids.sorted())

            // When a resolves record 0 by taking the losing version ([1]: b's conflict)
            let loser = try #require(byID[ids[0]]?.conflicts.first?.text)
            try await a.resolve(ids[0], take: 1)
            // Then both machines hold the taken content with no conflict left on that record
            let resolved = try await pair.waitUntilStoresAgree { records in
                records.first { $0.id == ids[0] }.map { $0.conflicts.isEmpty && $0.text == loser } ?? false
            }
            #expect(resolved.first { $0.id == ids[0] }?.modifiedBy == "alpha")
            // And neither lists it as a conflict any more; the two others are still listed on both
            let remaining = try await a.conflictListing()
            #expect(try await b.conflictListing() == remaining)
            #expect(try SnapshotRecord.list(json: remaining).map(\.id).sorted() == [ids[1], ids[2]].sorted())
        }
    }
}
