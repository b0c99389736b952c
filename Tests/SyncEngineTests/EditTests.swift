import Foundation
import SnapshotFormat
import SnapshotMerge
import SyncEngine
import Testing

@Suite("Engine: local edits through SyncDevice")
struct EditTests {
    @Test("put, put again and delete make versions as the contract says, each published once")
    func putPutDelete() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let device = try sandbox.device()
        let start = sandbox.clock.now.milliseconds

        // When a new record is put
        let created = try device.put(id: nil, type: "ShoppingItem", fields: Wire.object(#"{"name": "Bananas"}"#), schemaVersion: nil)
        let id = try #require(RecordID(created.id))
        var record = try #require(try device.record(id))
        // Then it starts at {desk: 1}, stamped now by desk, schema 1, and generation 1 is published
        #expect(record.version.versionVector == VersionVector([DeviceID("desk")!: 1]))
        #expect(record.version.lastModified?.milliseconds == start)
        #expect(record.version.modifiedBy == DeviceID("desk") && record.version.schemaVersion == 1)
        #expect(record.version.type == "ShoppingItem" && record.conflicts.isEmpty)
        #expect(created.publishedGeneration == 1)
        #expect(try readPublished(sandbox).reading.generation == 1)
        #expect(created.version == JSONValue.object(record.version.normalForm).canonicalString)

        // When it is put again with this clock behind the current version
        sandbox.clock.set(start - 60_000)
        let edited = try device.put(id: id, type: "ShoppingItem", fields: Wire.object(#"{"name": "Apples"}"#), schemaVersion: 3)
        record = try #require(try device.record(id))
        // Then the count goes to 2, lastModified is 1 ms after the current one, and generation 2 is published
        #expect(record.version.versionVector == VersionVector([DeviceID("desk")!: 2]))
        #expect(record.version.lastModified?.milliseconds == start + 1)
        #expect(record.version.schemaVersion == 3 && record.version.fields["name"] == .string("Apples"))
        #expect(edited.publishedGeneration == 2)

        // When it is deleted
        sandbox.clock.set(start + 5_000)
        let deleted = try device.delete(id: id, schemaVersion: nil)
        record = try #require(try device.record(id))
        // Then a tombstone without fields, count 3, schema kept, generation 3
        #expect(record.version.deleted && record.version.fields.count == 0)
        #expect(record.version.versionVector == VersionVector([DeviceID("desk")!: 3]))
        #expect(record.version.lastModified?.milliseconds == start + 5_000 && record.version.schemaVersion == 3)
        #expect(deleted.publishedGeneration == 3)
        let published = try readPublished(sandbox)
        #expect(published.reading.generation == 3)
        #expect(published.records == (try heldRecords(device)))
        #expect(try device.records().isEmpty)
        #expect(try device.records(includeDeleted: true).count == 1)
        // And deleting it again is refused, publishing nothing
        #expect(throws: EngineError.self) { try device.delete(id: id, schemaVersion: nil) }
        #expect(try readPublished(sandbox).reading.generation == 3)
    }

    @Test("put of the content the record already holds makes no version and publishes nothing; another schemaVersion, or a conflict to settle, makes one")
    func putSameContent() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let device = try sandbox.device()
        let created = try device.put(
            id: Wire.id(1), type: "Note", fields: Wire.object(#"{"a": 1, "b": [true, "x"]}"#), schemaVersion: nil)
        let before = try #require(try device.record(Wire.id(1)))

        // When the same fields are put again, their keys in another order, later
        sandbox.clock.advance(by: 5_000)
        let again = try device.put(id: Wire.id(1), type: "Note", fields: Wire.object(#"{"b": [true, "x"], "a": 1.0}"#), schemaVersion: nil)
        // Then the record is as it was, nothing is published, and the report says so
        #expect(try device.record(Wire.id(1)) == before)
        #expect(again.publishedGeneration == nil && created.publishedGeneration == 1)
        #expect(try readPublished(sandbox).reading.generation == 1)
        #expect(again.notes.contains { $0.hasPrefix("unchanged") }, "\(again.notes)")
        #expect(again.version == created.version)

        // When they are put with another schemaVersion: a new version
        let upgraded = try device.put(id: Wire.id(1), type: "Note", fields: Wire.object(#"{"a": 1, "b": [true, "x"]}"#), schemaVersion: 2)
        #expect(upgraded.publishedGeneration == 2 && upgraded.notes.isEmpty)
        #expect(try device.record(Wire.id(1))?.version.versionVector == VersionVector([DeviceID("desk")!: 2]))

        // When a peer's concurrent version makes a conflict, the same content put again is a new
        // version (as any put on a record in conflict: the peer's conflict stays)
        try sandbox.write(
            "phone.json",
            Wire.snapshotText(
                "phone", generation: 1,
                records: [#"{"id": "\#(Wire.id(1).rawValue)", "type": "Note", "schemaVersion": 2, "lastModified": "2000-01-01T00:00:00.000Z", "modifiedBy": "phone", "versionVector": {"phone": 1}, "fields": {"a": 2}}"#]))
        let settled = try device.put(id: Wire.id(1), type: "Note", fields: Wire.object(#"{"a": 1, "b": [true, "x"]}"#), schemaVersion: 2)
        #expect(settled.merge.newConflicts == 1 && settled.publishedGeneration == 3 && settled.notes.isEmpty)
        let record = try #require(try device.record(Wire.id(1)))
        #expect(record.version.versionVector == VersionVector([DeviceID("desk")!: 3]))
        #expect(record.conflicts.map(\.modifiedBy) == [DeviceID("phone")])
    }

    @Test("An edit keeps the unknown keys of the version it edits, and builds on the peer's version")
    func editCarriesUnknownKeys() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        try sandbox.write(
            "phone.json",
            Wire.snapshotText(
                "phone", generation: 1,
                records: [#"{"id": "0000AAAA-0000-4000-8000-000000000001", "type": "Note", "lastModified": "2030-01-01T00:00:00.000Z", "modifiedBy": "phone", "versionVector": {"phone": 4}, "fields": {"a": 1}, "x-future": {"keep": [1, null]}}"#]))
        let device = try sandbox.device()
        // When desk edits a record it has not merged yet (put merges first)
        let report = try device.put(id: Wire.id(1), type: "Note", fields: Wire.object(#"{"a": 2}"#), schemaVersion: nil)
        let record = try #require(try device.record(Wire.id(1)))
        #expect(report.merge.added == 1)
        #expect(record.version.versionVector == VersionVector([DeviceID("phone")!: 4, DeviceID("desk")!: 1]))
        #expect(record.version.unknownKeys["x-future"] == Wire.object(#"{"v": {"keep": [1, null]}}"#)["v"])
        // The peer's clock is ahead: the edit is stamped 1 ms after its version
        #expect(record.version.lastModified == Timestamp(parsing: "2030-01-01T00:00:00.001Z"))
        #expect(record.conflicts.isEmpty)
    }

    @Test("put of an existing record with another type is refused, and nothing is published")
    func putOtherTypeRefused() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let device = try sandbox.device()
        let created = try device.put(id: Wire.id(1), type: "Note", fields: JSONObject(), schemaVersion: nil)
        #expect(created.publishedGeneration == 1)
        let bytes = try sandbox.read("desk.json")
        do {
            _ = try device.put(id: Wire.id(1), type: "ShoppingItem", fields: Wire.object(#"{"a": 1}"#), schemaVersion: nil)
            Issue.record("a put with another type was accepted")
        } catch let error as EngineError {
            guard case .invalidEdit(let message) = error else { throw error }
            #expect(message.contains("Note") && message.contains("ShoppingItem"))
        }
        #expect(try device.record(Wire.id(1))?.version.type == "Note")
        #expect(try device.record(Wire.id(1))?.version.versionVector == VersionVector([DeviceID("desk")!: 1]))
        #expect(try sandbox.read("desk.json") == bytes)
    }

    @Test("Editing or resolving an unknown record is refused as noSuchRecord")
    func unknownRecord() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let device = try sandbox.device()
        for attempt in [
            { _ = try device.delete(id: Wire.id(9), schemaVersion: nil) },
            { _ = try device.resolve(id: Wire.id(9), with: .take(index: 0)) },
        ] {
            do {
                try attempt()
                Issue.record("an edit of an unknown record was accepted")
            } catch EngineError.noSuchRecord(let id) {
                #expect(id == Wire.id(9).rawValue)
            }
        }
    }

    /// phone and laptop changed record 1 concurrently; laptop's is newer and wins.
    static func concurrentPeers(_ sandbox: Sandbox) throws {
        try sandbox.write("phone.json", Wire.snapshot("phone", generation: 1, versions: [Wire.version(1, by: "phone", at: 10, fields: #"{"v": "phone"}"#)]))
        try sandbox.write("laptop.json", Wire.snapshot("laptop", generation: 1, versions: [Wire.version(1, by: "laptop", at: 20, fields: #"{"v": "laptop"}"#)]))
    }

    @Test("resolve taking a conflict writes one version that dominates every version and clears the conflict")
    func resolveTake() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        try Self.concurrentPeers(sandbox)
        let device = try sandbox.device()
        let merged = try device.merge()
        #expect(merged.conflicts == 1 && merged.publishedGeneration == 1)
        #expect(try device.conflictedRecords().map(\.id) == [Wire.id(1)])
        let before = try #require(try device.record(Wire.id(1)))
        #expect(before.version.modifiedBy == DeviceID("laptop") && before.conflicts.count == 1)

        // When desk takes version 1 (phone's)
        let report = try device.resolve(id: Wire.id(1), with: .take(index: 1))
        let record = try #require(try device.record(Wire.id(1)))
        // Then one version with phone's content, vector max + desk 1, no conflicts, published once
        #expect(record.conflicts.isEmpty)
        #expect(record.version.fields["v"] == .string("phone"))
        #expect(record.version.versionVector == VersionVector([DeviceID("phone")!: 1, DeviceID("laptop")!: 1, DeviceID("desk")!: 1]))
        #expect(record.version.modifiedBy == DeviceID("desk"))
        #expect(record.version.lastModified == sandbox.clock.now)
        #expect(report.publishedGeneration == 2)
        #expect(try device.conflictedRecords().isEmpty)
        #expect(try device.status().counts.inConflict == 0)
        // And the published file carries no conflict any more
        let published = try readPublished(sandbox)
        #expect(try published.reading.versions.count == 1 && published.records == heldRecords(device))
        // And resolving again is refused: nothing to resolve
        #expect(throws: EngineError.self) { try device.resolve(id: Wire.id(1), with: .take(index: 0)) }
    }

    @Test("resolve with new fields or an index out of range")
    func resolveContent() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        try Self.concurrentPeers(sandbox)
        let device = try sandbox.device()
        _ = try device.merge()
        #expect(throws: EngineError.self) { try device.resolve(id: Wire.id(1), with: .take(index: 2)) }
        #expect(try device.record(Wire.id(1))?.conflicts.count == 1)
        _ = try device.resolve(id: Wire.id(1), with: .content(fields: Wire.object(#"{"v": "both"}"#), schemaVersion: 2))
        let record = try #require(try device.record(Wire.id(1)))
        #expect(record.conflicts.isEmpty && record.version.fields["v"] == .string("both") && record.version.schemaVersion == 2)
        #expect(record.version.versionVector[DeviceID("desk")!] == 1)
    }

    @Test("A put on a record in conflict keeps the other device's conflict")
    func putKeepsOthersConflict() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        try Self.concurrentPeers(sandbox)
        let device = try sandbox.device()
        _ = try device.put(id: Wire.id(1), type: "Note", fields: Wire.object(#"{"v": "desk"}"#), schemaVersion: nil)
        let record = try #require(try device.record(Wire.id(1)))
        #expect(record.version.versionVector == VersionVector([DeviceID("laptop")!: 1, DeviceID("desk")!: 1]))
        #expect(record.conflicts.map(\.modifiedBy) == [DeviceID("phone")])
        #expect(try device.status().counts.inConflict == 1)
    }
}
