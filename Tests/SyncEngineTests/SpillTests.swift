import Foundation
@testable import SnapshotFormat
import SnapshotMerge
@testable import SyncEngine
import TestSupport
import Testing

/// Large whole-file snapshots are merged without keeping every file's bytes: their elements wait in
/// a spill file in the state directory until their group comes (SpanningSources). The result must
/// be the same as with everything in memory.
@Suite("whole-file snapshots spilled to the state directory")
struct SpillTests {
    static func device(_ sandbox: Sandbox, state: String, spilling: Bool) throws -> SyncDevice {
        var settings = SyncSettings(sharedFolder: sandbox.shared, stateDirectory: sandbox.state(state), device: DeviceID("desk"))
        // 1 byte: every file spilled, opened one at a time.
        if spilling { settings.spanningBytesInMemory = 1 }
        let clock = sandbox.clock
        return try SyncDevice(settings: settings, logger: quietLogger, clock: { clock.now })
    }

    /// Every record the store holds, as lines.
    static func held(_ device: SyncDevice) throws -> [String] {
        try device.records(includeDeleted: true).map { JSONValue.object($0.normalForm).canonicalString }
    }

    @Test("a first merge (more than 8 MiB: groups of ids) and a later one, spilled, store and publish what the merge in memory does")
    func spilledEqualsInMemory() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        // Enough records for a pass of 256 groups (over 8 MiB), in creation order (ids at random).
        try FastPathMergeTests.generate(into: sandbox.shared, records: 8_000)
        let inMemory = try Self.device(sandbox, state: "memory", spilling: false)
        let spilled = try Self.device(sandbox, state: "spilled", spilling: true)

        let coldMemory = try inMemory.merge()
        // (The first device's own files are in the folder now: the second one reads them too, as
        // another device's; so move them aside and back around its merge.)
        let own = try FileManager.default.contentsOfDirectory(atPath: sandbox.shared).filter { $0.hasPrefix("desk") }
        for name in own { try FileManager.default.moveItem(atPath: sandbox.sharedPath(name), toPath: sandbox.outside + "/" + name) }
        let coldSpilled = try spilled.merge()
        #expect(coldSpilled.added == coldMemory.added && coldSpilled.conflicts == coldMemory.conflicts)
        #expect(coldSpilled.sources.map(\.status) == coldMemory.sources.map(\.status))
        #expect(try Self.held(spilled) == Self.held(inMemory))
        let spilledOwn = try #require(try PublishedSnapshot.read(folder: sandbox.shared, device: "desk"))
        for name in spilledOwn.files { try FileManager.default.removeItem(atPath: sandbox.sharedPath(name)) }
        for name in own { try FileManager.default.moveItem(atPath: sandbox.outside + "/" + name, toPath: sandbox.sharedPath(name)) }
        let memoryOwn = try #require(try PublishedSnapshot.read(folder: sandbox.shared, device: "desk"))
        #expect(spilledOwn.versions == memoryOwn.versions)
        // And no spill file is left in the state directory.
        let stateFiles = try FileManager.default.contentsOfDirectory(atPath: sandbox.state("spilled"))
        #expect(!stateFiles.contains { $0.contains("spill") }, "\(stateFiles)")

        // When device-1 edits 300 records (a whole file of 8,000 changed: a pass of groups again)
        let path = sandbox.sharedPath("device-1.json")
        let reading = try SnapshotReader.readPlain(bytes: try sandbox.read("device-1.json"), fileName: "device-1.json")
        var versions = reading.versions
        var edited = 0
        for index in versions.indices where versions[index].hasVector && !versions[index].deleted && edited < 300 {
            versions[index].versionVector[DeviceID("device-1")!] += 1
            versions[index].lastModified = Timestamp(milliseconds: versions[index].lastModified!.milliseconds + 1000)
            versions[index].fields["edited"] = .bool(true)
            edited += 1
        }
        try Data(Wire.snapshot("device-1", generation: reading.generation + 1, versions: versions)).write(to: URL(fileURLWithPath: path))
        let warmMemory = try inMemory.merge()
        let warmSpilled = try spilled.merge()

        // Then both stores hold the same records
        #expect(warmMemory.changed >= 300 && warmSpilled.changed == warmMemory.changed)
        #expect(try Self.held(spilled) == Self.held(inMemory))
    }
}
