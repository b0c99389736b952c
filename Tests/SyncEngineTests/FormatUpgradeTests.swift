import Foundation
import GRDB
import SnapshotFormat
@testable import SyncEngine
@testable import SyncStore
import TestSupport
import Testing

/// A device whose store was filled under format 1 (migration v7 and before, `<device>.json` in
/// format 1) opened by this version.
@Suite("Upgrading a device from format 1")
struct FormatUpgradeTests {
    /// Writes a state directory and a shared folder as format 1 left them: `count` records in the
    /// store, published as generation 3 in a format 1 `desk.json`.
    static func formatOneDevice(_ sandbox: Sandbox, records count: Int) throws -> [UInt8] {
        let records = (0..<count).map { ReadOnly.Record(version: PartsTests.version($0, by: "phone")) }
            .sorted { $0.id < $1.id }
        var file = Array(#"{"format":1,"device":"desk","generation":3,"writtenAt":"2026-11-20T10:00:00.000Z","records":["#.utf8)
        var content = ContentDigest()
        for (index, record) in records.enumerated() {
            let line = record.interchangeLine
            file += index == 0 ? [0x0A] : [0x2C, 0x0A]
            file += line
            line.withUnsafeBytes { content.add($0) }
        }
        file += Array("\n]}\n".utf8)
        try sandbox.write("desk.json", file)
        try FileManager.default.createDirectory(atPath: sandbox.state(), withIntermediateDirectories: true)
        let store = try SyncStore(path: sandbox.state() + "/store.sqlite", upTo: "v7: no index on record type")
        try store.transaction { session in
            try session.claim(for: DeviceID("desk")!, at: Timestamp(milliseconds: Wire.base))
            for record in records { try session.save(record, at: Timestamp(milliseconds: Wire.base), isNew: true) }
            try session.db.execute(
                sql: """
                    INSERT INTO publication (generation, contentDigest, fileDigest, writtenAt, isPublished, isAdopted)
                    VALUES (3, ?, ?, ?, 1, 0)
                    """,
                arguments: [content.finalize(), PublishedLayout.fileDigest(of: file), Wire.base])
        }
        return file
    }

    @Test("a store filled under format 1 publishes its snapshot again at its first pass, as signed format 2 parts, and removes the old file")
    func largeSnapshotUpgrades() throws {
        // Given desk as format 1 left it: 400 records in one unsigned format 1 desk.json
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        _ = try Self.formatOneDevice(sandbox, records: 400)
        let desk = try sandbox.device("desk", partPolicy: PartsTests.policy)

        // When it merges with nothing changed
        let idle = try desk.merge()

        // Then it publishes its snapshot as format 2 parts signed with its key (a device that
        // trusts it would reject an unsigned file), every record in them, and removes desk.json
        #expect(idle.removedFiles == ["desk.json"])
        #expect(idle.warnings.isEmpty, "\(idle.warnings)")
        let published = try #require(try PublishedSnapshot.read(folder: sandbox.shared, device: "desk"))
        #expect(published.files.count == 16)
        #expect(published.readings.allSatisfy { $0.format == 2 && !$0.part.isWhole })
        #expect(published.readings.allSatisfy { $0.key == desk.key.publicKey && $0.signature != nil })
        #expect(published.recordCount == 400 && published.problems.isEmpty)

        // And the next pass writes nothing
        let again = try desk.merge()
        #expect(again.publishedFiles.isEmpty && again.removedFiles.isEmpty)
    }

    @Test("a small format 1 snapshot is rewritten in place as one signed format 2 file")
    func smallSnapshotUpgrades() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        _ = try Self.formatOneDevice(sandbox, records: 5)
        let desk = try sandbox.device("desk", partPolicy: PartsTests.policy)
        sandbox.clock.advance()
        let edit = try desk.put(id: nil, type: "Note", fields: Wire.object(#"{"text": "new"}"#), schemaVersion: nil)
        #expect(edit.merge.publishedFiles == ["desk.json"] && edit.merge.removedFiles.isEmpty)
        let reading = try SnapshotReader.read(bytes: try sandbox.read("desk.json"), fileName: "desk.json")
        #expect(reading.format == 2 && reading.part.isWhole && reading.recordCount == 6)
        #expect(reading.key == desk.key.publicKey && reading.signature != nil)
        #expect(reading.generation == 4)
    }
}
