import Foundation
import Testing

extension SyncthingTests {
    @Test(
        "a machine whose state directory is restored from an old backup reuses no vector count and loses nothing it had published"
    )
    func restoredStateReusesNoCount() async throws {
        try await SyncthingPair.run { pair in
            // Given records made on a and held by both machines
            let (a, b) = (pair.a, pair.b)
            let kept = try await a.put(["text": "kept"])
            let edited = try await a.put(["text": "edited v1"])
            try await pair.waitUntilStoresAgree { $0.count == 2 }
            // And a backup of a's state directory, taken while its syncd is stopped
            #expect(a.stopDaemon() == 0, "syncd alpha did not stop cleanly:\n\(a.daemonLog)")
            let backup = pair.root + "/a/state-backup"
            try FileManager.default.copyItem(atPath: a.stateDirectory, toPath: backup)
            try await a.startDaemon()

            // When a goes on after the backup: more edits of one record, a new record, a delete
            try await a.put(["text": "edited v2"], id: edited)
            try await a.put(["text": "edited v3"], id: edited)
            let added = try await a.put(["text": "added after the backup"])
            try await a.delete(kept)
            let published = try await pair.waitUntilStoresAgree { records in
                records.count == 3 && records.contains { $0.text == "edited v3" } && records.contains { $0.deleted }
            }
            let publishedCounts = Dictionary(
                uniqueKeysWithValues: published.map { ($0.id, $0.versionVector["alpha"] ?? 0) })
            let generationBefore = try #require(a.generation(of: "alpha.json"))
            // And a's state directory is then restored from the backup (syncd stopped, then restarted)
            #expect(a.stopDaemon() == 0, "syncd alpha did not stop cleanly:\n\(a.daemonLog)")
            try FileManager.default.removeItem(atPath: a.stateDirectory)
            try FileManager.default.moveItem(atPath: backup, toPath: a.stateDirectory)
            try await a.startDaemon()

            // Then a's store holds again everything it had published after the backup
            let restored = try await a.records()
            #expect(
                restored.map(\.description) == published.map(\.description),
                "restored \(restored)\npublished \(published)")
            // And its next publication has a higher generation than any before
            let republished = await eventually(within: 10) { (a.generation(of: "alpha.json") ?? 0) >= generationBefore }
            #expect(republished)
            // And a reports what it found: its own file holds a generation its store never wrote
            let warnings = try await a.statusWarnings()
            #expect(warnings.contains { $0.contains("ANOTHER DEVICE") && $0.contains("backup") }, "\(warnings)")

            // When a edits every record again
            try await a.put(["text": "edited v4"], id: edited)
            try await a.put(["text": "added, edited"], id: added)
            try await a.put(["text": "kept after all"], id: kept)
            // Then each new version's count for alpha is above every count alpha published for that record
            let after = try await pair.waitUntilStoresAgree { records in
                Set(records.compactMap(\.text)) == ["edited v4", "added, edited", "kept after all"]
            }
            for record in after {
                let before = try #require(publishedCounts[record.id])
                #expect(
                    record.versionVector["alpha"]! > before, "\(record) reuses a count (published: alpha \(before))")
                // And the new versions supersede the old ones on both machines: no conflict appears
                #expect(record.conflicts.isEmpty, "\(record)")
            }
            // And alpha's generation never went backwards
            #expect((a.generation(of: "alpha.json") ?? 0) > generationBefore)
            #expect(try await b.conflictListing() == "[]\n")
        }
    }
}
