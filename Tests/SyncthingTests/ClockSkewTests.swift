import Foundation
import Testing

extension SyncthingTests {
    @Test(
        "a device whose clock runs three hours ahead wins last-writer-wins for its edits, an edit made later on a correct machine that merged them still wins (the clock rule), and status names the device dated in the future"
    )
    func clockRunningAhead() async throws {
        try await SyncthingPair.run { pair in
            // Given a record made on a and held by both machines
            let (a, b) = (pair.a, pair.b)
            let shared = try await a.put(["text": "list v1"])
            try await pair.waitFor(shared, on: b)

            // When a edits it, and at about the same time a third device, "skewed", whose clock
            // runs 3 h ahead, edits it too (concurrently: it had seen only a's first version), and
            // also makes a record with a simple script that writes no version vector; its file
            // arrives in b's folder
            try await a.put(["text": "a's edit"], id: shared)
            let ahead = Timestamps.now + 3 * 3_600_000
            let scripted = UUID().uuidString
            try await b.writeFile("skewed.json", Self.skewedSnapshot(dated: ahead, editing: shared, scripted: scripted))

            // Then on both machines the fast clock's edit wins last-writer-wins, a's is its conflict
            let held = try await pair.waitUntilStoresAgree { records in
                records.count == 2 && records.contains { $0.id == shared && $0.conflicts.count == 1 }
            }
            let contested = try #require(held.first { $0.id == shared })
            #expect(contested.modifiedBy == "skewed" && contested.text == "skewed's edit", "\(contested)")
            #expect(contested.conflicts.first?.text == "a's edit", "\(contested)")
            #expect(held.first { $0.id == scripted }?.modifiedBy == "skewed")
            // And status, on both machines, warns about versions dated in the future, naming the device
            for machine in pair.machines {
                let warnings = try await machine.statusWarnings()
                #expect(
                    warnings.contains {
                        $0.contains("by skewed are dated in this device's future") && $0.contains("skewed")
                    },
                    "\(machine.syncthing.name): \(warnings)")
                #expect(
                    machine.daemonLog.contains("by skewed are dated in this device's future"), "\(machine.daemonLog)")
            }

            // When b, a correct machine that has merged the fast clock's versions, edits both records
            try await b.put(["text": "b's edit, later"], id: shared)
            try await b.put(["text": "b fixes the script's record"], id: scripted)
            // Then b's edits win on both machines, each dated 1 ms after the version it replaces
            // (the clock rule: max(now, C.lastModified + 1 ms)), not at b's clock, 3 h earlier
            let after = try await pair.waitUntilStoresAgree { records in
                records.allSatisfy { $0.modifiedBy == "beta" }
            }
            let edited = try #require(after.first { $0.id == shared })
            #expect(edited.text == "b's edit, later")
            #expect(edited.lastModifiedMilliseconds == ahead + 1, "\(edited)")
            #expect(edited.versionVector == ["alpha": 1, "skewed": 1, "beta": 1], "\(edited)")
            // And a's concurrent edit is still kept as a conflict, on both machines
            #expect(edited.conflicts.map(\.text) == ["a's edit"], "\(edited)")
            // And for the record without a vector the clock rule alone decides: dated at b's own
            // clock, b's edit would have lost to the script's version, which has no vector to dominate
            let fixed = try #require(after.first { $0.id == scripted })
            #expect(fixed.text == "b fixes the script's record")
            #expect(fixed.lastModifiedMilliseconds == ahead + 1, "\(fixed)")
            #expect(fixed.conflicts.isEmpty, "\(fixed)")
            #expect(try await a.conflictListing() == (try await b.conflictListing()))
        }
    }

    /// The file of device "skewed", written by hand as a device whose clock is wrong would write
    /// it: a version of `editing` that saw only `{"alpha": 1}`, and a new record `scripted`
    /// without a version vector, both dated `dated`.
    static func skewedSnapshot(dated: Int64, editing: String, scripted: String) throws -> Data {
        let stamp = Timestamps.written(dated)
        let snapshot: [String: Any] = [
            "format": 1, "device": "skewed", "generation": 1, "writtenAt": stamp,
            "records": [
                [
                    "id": editing, "type": "Note", "lastModified": stamp, "modifiedBy": "skewed",
                    "versionVector": ["alpha": 1, "skewed": 1], "fields": ["text": "skewed's edit"],
                ],
                [
                    "id": scripted, "type": "Note", "lastModified": stamp, "modifiedBy": "skewed",
                    "fields": ["text": "written by a script"],
                ],
            ],
        ]
        return try JSONSerialization.data(withJSONObject: snapshot, options: [.sortedKeys])
    }
}
