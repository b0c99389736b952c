import Foundation
import SnapshotFormat
import SyncEngine
import Testing

@Suite("Engine: publishing this device's file")
struct PublishTests {
    /// Two peers with a record in conflict, a tombstone and plain records.
    static func fillPeers(_ sandbox: Sandbox) throws {
        try sandbox.write(
            "phone.json",
            Wire.snapshot(
                "phone", generation: 4,
                versions: [
                    Wire.version(1, by: "phone", at: 10, fields: #"{"name": "Bananas", "n": 6}"#),
                    Wire.version(2, by: "phone", at: 20, fields: #"{"name": "phone's"}"#),
                    Wire.version(3, by: "phone", vector: ["phone": 2], at: 30, deleted: true),
                ]))
        try sandbox.write(
            "laptop.json",
            Wire.snapshot(
                "laptop", generation: 7,
                versions: [
                    Wire.version(2, by: "laptop", at: 25, fields: #"{"name": "laptop's"}"#),
                    Wire.version(4, by: "laptop", at: 40, fields: #"{"name": "Ünïcode 🍌", "list": [1, 2.5, -0, true, null]}"#),
                ]))
    }

    @Test("The first merge publishes a valid file holding every record with its conflicts")
    func firstPublish() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        try Self.fillPeers(sandbox)
        let device = try sandbox.device()
        let report = try device.merge()
        #expect(report.publishedGeneration == 1)
        #expect(report.added == 3 && report.deleted == 1 && report.conflicts == 1 && report.newConflicts == 1)
        #expect(!report.hasRejections)
        #expect(report.ownFile == sandbox.sharedPath("desk.json"))
        // Then the file reads cleanly as desk's own, generation 1, and holds exactly what the store holds
        let published = try readPublished(sandbox)
        #expect(published.reading.device == DeviceID("desk") && published.reading.role == .own)
        #expect(published.reading.generation == 1 && published.reading.problems.isEmpty && published.reading.warnings.isEmpty)
        #expect(published.reading.writtenAt == sandbox.clock.now)
        let held = try heldRecords(device)
        #expect(held.count == 4)
        #expect(published.records == held)
        // And the record in conflict carries its conflict, the tombstone is kept
        let conflicted = try #require(try device.record(Wire.id(2)))
        #expect(conflicted.version.modifiedBy == DeviceID("laptop") && conflicted.conflicts.map(\.modifiedBy) == [DeviceID("phone")])
        #expect(published.reading.versions.count == 5)
        #expect(try device.record(Wire.id(3))?.version.deleted == true)
    }

    @Test("A merge that changes nothing does not rewrite the own file; a change bumps the generation by exactly 1")
    func publishOnlyOnChange() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        try Self.fillPeers(sandbox)
        let device = try sandbox.device()
        #expect(try device.merge().publishedGeneration == 1)
        let before = try #require(fileIdentity(sandbox.sharedPath("desk.json")))
        let bytes = try sandbox.read("desk.json")

        // When nothing changed (even as time passes)
        sandbox.clock.advance()
        let quiet = try device.merge()
        // Then the own file is not rewritten: same inode, same times, same bytes, same generation
        #expect(quiet.publishedGeneration == nil)
        let after = try #require(fileIdentity(sandbox.sharedPath("desk.json")))
        #expect(after.inode == before.inode && after.modified == before.modified && after.changed == before.changed)
        #expect(try sandbox.read("desk.json") == bytes)
        #expect(try device.status().publishedGeneration == 1)
        // And unchanged peers are not parsed again
        #expect(quiet.source("phone.json")?.status == .unchanged)
        #expect(quiet.source("laptop.json")?.status == .unchanged)
        #expect(quiet.source("desk.json")?.status == .unchanged)

        // When a peer publishes a change
        sandbox.clock.advance()
        try sandbox.write(
            "phone.json",
            Wire.snapshot(
                "phone", generation: 5,
                versions: [Wire.version(1, by: "phone", vector: ["phone": 2], at: 50, fields: #"{"name": "Apples"}"#)]))
        let changed = try device.merge()
        // Then the own file is rewritten once, with the next generation, holding the change
        #expect(changed.publishedGeneration == 2)
        #expect(changed.changed == 1 && changed.added == 0)
        #expect(changed.source("phone.json")?.status == .merged && changed.source("phone.json")?.generation == 5)
        let published = try readPublished(sandbox)
        #expect(published.reading.generation == 2)
        #expect(published.records == (try heldRecords(device)))
        #expect(try device.record(Wire.id(1))?.version.fields["name"] == .string("Apples"))
        // And a further quiet merge keeps generation 2
        #expect(try device.merge().publishedGeneration == nil)
        #expect(try readPublished(sandbox).reading.generation == 2)
    }

    @Test("A peer rewritten with the same content and a new generation is merged, but the own file stays")
    func peerRewriteSameContent() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        try Self.fillPeers(sandbox)
        let device = try sandbox.device()
        _ = try device.merge()
        var text = try sandbox.read("laptop.json")
        text = Array(String(decoding: text, as: UTF8.self).replacingOccurrences(of: #""generation":7"#, with: #""generation":8"#).utf8)
        try sandbox.write("laptop.json", text)
        let report = try device.merge()
        #expect(report.source("laptop.json")?.status == .merged && report.source("laptop.json")?.generation == 8)
        #expect(report.publishedGeneration == nil && report.changed == 0)
    }

    @Test("The own file is published again when it disappears from the folder, with a new generation")
    func republishWhenMissing() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        try Self.fillPeers(sandbox)
        let device = try sandbox.device()
        _ = try device.merge()
        try FileManager.default.removeItem(atPath: sandbox.sharedPath("desk.json"))
        let report = try device.merge()
        #expect(report.publishedGeneration == 2)
        #expect(try readPublished(sandbox).records == (try heldRecords(device)))
    }

    @Test("A number like 1e20 from a peer is published in a form every reader accepts")
    func largeIntegralDouble() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        try sandbox.write(
            "phone.json",
            Wire.snapshotText(
                "phone", generation: 1,
                records: [#"{"id": "0000AAAA-0000-4000-8000-000000000001", "type": "Note", "versionVector": {"phone": 1}, "fields": {"big": 1e20, "small": 1.5e-7}}"#]))
        let device = try sandbox.device()
        let first = try device.merge()
        #expect(first.source("phone.json")?.rejectedRecords.isEmpty == true)
        #expect(try device.record(Wire.id(1))?.version.fields["big"] == .number(1e20))
        // The own file must be readable, record included, by every device (this one, on a new store, too)
        let published = try readPublished(sandbox)
        #expect(published.reading.problems.isEmpty, "the published file has records a reader rejects: \(published.reading.problems)")
        #expect(published.reading.versions.count == 1)
        // And a fresh device merging only the published file gets the record back
        try FileManager.default.removeItem(atPath: sandbox.sharedPath("phone.json"))
        let fresh = try sandbox.device("desk", state: sandbox.state("fresh"))
        let report = try fresh.merge()
        #expect(report.source("desk.json")?.rejectedRecords.isEmpty == true)
        #expect(try fresh.record(Wire.id(1))?.version.fields["big"] == .number(1e20))
    }
}

@Suite("Engine: repairing this device's own file")
struct OwnFileRepairTests {
    @Test("An own file that became unreadable (truncated by a sync tool) is published again by the next merge")
    func truncatedOwnFileRepublished() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        try sandbox.write("phone.json", Wire.snapshot("phone", generation: 1, versions: [Wire.version(1, by: "phone")]))
        let device = try sandbox.device()
        #expect(try device.merge().publishedGeneration == 1)
        // When desk.json is truncated in place
        let bytes = try sandbox.read("desk.json")
        try sandbox.write("desk.json", Array(bytes.prefix(bytes.count / 2)))
        let report = try device.merge()
        // Then the merge reports it and writes a complete file again
        #expect(report.source("desk.json")?.status == .skipped)
        #expect(report.publishedGeneration == 2, "the truncated own file was left in place for every peer to skip")
        let published = try readPublished(sandbox)
        #expect(published.records == (try heldRecords(device)))
    }

    @Test("An own file rolled back to an older generation (restored by a sync tool) is published again, with a new generation")
    func rolledBackOwnFileRepublished() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let device = try sandbox.device()
        _ = try device.put(id: Wire.id(1), type: "Note", fields: Wire.object(#"{"n": 1}"#), schemaVersion: nil)
        let first = try sandbox.read("desk.json")
        _ = try device.put(id: Wire.id(1), type: "Note", fields: Wire.object(#"{"n": 2}"#), schemaVersion: nil)
        try sandbox.write("desk.json", first)
        let report = try device.merge()
        // The contract reports a generation that goes backwards; its own earlier file is not another device
        #expect(report.warnings.contains { $0.contains("went backwards from 2 to 1") })
        #expect(!report.warnings.contains { $0.contains("ANOTHER DEVICE") }, "\(report.warnings)")
        #expect(report.publishedGeneration == 3)
        let published = try readPublished(sandbox)
        #expect(try published.reading.generation == 3 && published.records == heldRecords(device))
        #expect(try device.record(Wire.id(1))?.version.fields["n"] == .number(2))
    }
}
