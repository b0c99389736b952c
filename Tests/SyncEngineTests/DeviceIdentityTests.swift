import Foundation
import SnapshotFormat
import SyncEngine
import Testing

@Suite("Engine: the device, its state directory and its own file")
struct DeviceIdentityTests {
    @Test("A store refuses another --device; without --device it uses its own")
    func deviceMismatch() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        _ = try sandbox.device("desk")
        do {
            _ = try sandbox.device("phone")
            Issue.record("the store accepted another device")
        } catch EngineError.deviceMismatch(let store, let given) {
            #expect(store == "desk" && given == "phone")
        }
        #expect(try sandbox.device(nil).device == DeviceID("desk"))
        #expect(throws: EngineError.self) { _ = try sandbox.device(nil, state: sandbox.state("new")) }
    }

    @Test("A state directory inside the shared folder is refused, and nothing is left in the folder")
    func stateInsideShared() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        try sandbox.write("phone.json", Wire.snapshot("phone", generation: 1, versions: [Wire.version(1, by: "phone")]))
        let before = try folderListing(sandbox.shared)
        for state in [sandbox.shared, sandbox.sharedPath("state"), sandbox.shared + "/./deeper/state"] {
            do {
                _ = try sandbox.device(state: state)
                Issue.record("a state directory inside the shared folder was accepted: \(state)")
            } catch EngineError.stateInsideShared {
            }
        }
        #expect(try folderListing(sandbox.shared) == before, "refusing the state directory left entries in the shared folder")
    }

    @Test("A missing shared folder is an error, and neither it nor the state directory is created")
    func sharedFolderMissing() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let missing = sandbox.root.appendingPathComponent("unmounted/drive").path
        let settings = SyncSettings(sharedFolder: missing, stateDirectory: sandbox.state(), device: DeviceID("desk"))
        do {
            _ = try SyncDevice(settings: settings, logger: quietLogger)
            Issue.record("a missing shared folder was accepted")
        } catch EngineError.sharedFolderMissing(let path, _) {
            #expect(path == missing)
        }
        #expect(!FileManager.default.fileExists(atPath: missing))
        #expect(!FileManager.default.fileExists(atPath: sandbox.state()))
        // A file in place of the folder is refused the same way
        try #require(FileManager.default.createFile(atPath: sandbox.root.appendingPathComponent("file").path, contents: Data()))
        let onFile = SyncSettings(sharedFolder: sandbox.root.appendingPathComponent("file").path, stateDirectory: sandbox.state(), device: DeviceID("desk"))
        #expect(throws: EngineError.self) { _ = try SyncDevice(settings: onFile, logger: quietLogger) }
    }

    @Test("A shared folder that vanishes after opening fails the merge and deletes nothing")
    func sharedFolderVanishes() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        try sandbox.write("phone.json", Wire.snapshot("phone", generation: 1, versions: [Wire.version(1, by: "phone")]))
        let device = try sandbox.device()
        _ = try device.merge()
        try FileManager.default.moveItem(atPath: sandbox.shared, toPath: sandbox.root.appendingPathComponent("moved").path)
        #expect(throws: EngineError.self) { _ = try device.merge() }
        #expect(try device.records().map(\.id) == [Wire.id(1)])
        #expect(!FileManager.default.fileExists(atPath: sandbox.shared))
    }

    @Test("A peer whose generation goes backwards is merged and warned about")
    func generationBackwards() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        try sandbox.write("phone.json", Wire.snapshot("phone", generation: 5, versions: [Wire.version(1, by: "phone")]))
        let device = try sandbox.device()
        _ = try device.merge()
        // When phone's file is restored from an older backup with another record
        try sandbox.write("phone.json", Wire.snapshot("phone", generation: 3, versions: [Wire.version(2, by: "phone")]))
        let report = try device.merge()
        // Then it is merged, and the report, the source and status all say the generation went backwards
        #expect(report.source("phone.json")?.status == .merged)
        #expect(report.added == 1)
        #expect(try device.records().map(\.id) == [Wire.id(1), Wire.id(2)])
        #expect(report.warnings.contains { $0.contains("phone.json") && $0.contains("went backwards from 5 to 3") })
        #expect(try device.status().warnings.contains { $0.contains("went backwards") })
        // And phone's next file, above the restored one but below the earlier one, is not reported
        // again (a made-up generation read once would otherwise make every later file "backwards")
        try sandbox.write("phone.json", Wire.snapshot("phone", generation: 4, versions: [Wire.version(3, by: "phone")]))
        let next = try device.merge()
        #expect(!next.warnings.contains { $0.contains("went backwards") }, "\(next.warnings)")
        #expect(try device.status().warnings.isEmpty)
    }

    @Test("This device's own file restored from a backup is warned about until the device publishes that file again, not forever")
    func ownFileRestoredWarningClears() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let device = try sandbox.device()
        _ = try device.put(id: Wire.id(1), type: "Note", fields: JSONObject(), schemaVersion: nil)
        let backup = try sandbox.read("desk.json")
        _ = try device.put(id: Wire.id(2), type: "Note", fields: JSONObject(), schemaVersion: nil)
        _ = try device.put(id: Wire.id(3), type: "Note", fields: JSONObject(), schemaVersion: nil)
        // When the first generation comes back (a backup restored over the folder)
        try sandbox.write("desk.json", backup)
        let report = try device.merge()
        // Then the merge and status say so, and the device publishes over it at once
        #expect(report.warnings.contains { $0.contains("desk.json") && $0.contains("went backwards") })
        #expect(try device.status().warnings.contains { $0.contains("went backwards") })
        // And once the device publishes that file again, with nothing restored since, the warning is gone
        _ = try device.put(id: Wire.id(4), type: "Note", fields: JSONObject(), schemaVersion: nil)
        _ = try device.merge()
        let afterPublishing = try device.status().warnings
        #expect(afterPublishing.isEmpty, "\(afterPublishing)")
        _ = try device.put(id: Wire.id(5), type: "Note", fields: JSONObject(), schemaVersion: nil)
        let afterAnother = try device.status().warnings
        #expect(afterAnother.isEmpty, "\(afterAnother)")
        #expect(try device.records().count == 5)
    }

    @Test("This device's own file deleted since the last merge is warned about by status, which looks in the folder; the next merge publishes it again")
    func ownFileDeletedSinceTheLastMerge() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let device = try sandbox.device()
        _ = try device.put(id: Wire.id(1), type: "Note", fields: JSONObject(), schemaVersion: nil)
        #expect(try device.status().warnings.isEmpty)
        // When a person or a tool deletes it
        try FileManager.default.removeItem(atPath: sandbox.sharedPath("desk.json"))
        // Then status says so before any merge
        let warnings = try device.status().warnings
        #expect(warnings.contains { $0.contains("desk.json are not in the shared folder") }, "\(warnings)")
        // And the next merge publishes it again, after which status says nothing
        _ = try device.merge()
        #expect(FileManager.default.fileExists(atPath: sandbox.sharedPath("desk.json")))
        #expect(try device.status().warnings.isEmpty)
    }

    @Test("A sync tool's copy of a peer's file, once gone from the folder, is forgotten; a peer's own file gone is kept as absent; their records stay")
    func copiesGoneAreForgotten() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        try sandbox.write("phone.json", Wire.snapshot("phone", generation: 2, versions: [Wire.version(1, by: "phone")]))
        let copy = "phone.sync-conflict-20261122-101010-ABCDEFG.json"
        try sandbox.write(copy, Wire.snapshot("phone", generation: 1, versions: [Wire.version(2, by: "phone")]))
        let device = try sandbox.device()
        _ = try device.merge()
        #expect(Set(try device.status().sources.map(\.name)).isSuperset(of: ["phone.json", copy]))
        // When the sync tool removes its copy, and later the peer's file goes too
        try FileManager.default.removeItem(atPath: sandbox.shared + "/" + copy)
        _ = try device.merge()
        try FileManager.default.removeItem(atPath: sandbox.shared + "/phone.json")
        _ = try device.merge()
        // Then the copy is no longer known, the peer's file is known as absent, and nothing merged is lost
        let sources = try device.status().sources
        #expect(!sources.contains { $0.name == copy }, "\(sources.map(\.name))")
        #expect(sources.first { $0.name == "phone.json" }?.present == false)
        #expect(try device.records().map(\.id) == [Wire.id(1), Wire.id(2)])
    }

    @Test("A file under this device's name with a generation it never wrote is merged and reported as ANOTHER DEVICE")
    func impostor() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let device = try sandbox.device()
        _ = try device.put(id: Wire.id(1), type: "Note", fields: JSONObject(), schemaVersion: nil)
        // When another machine configured as "desk" writes desk.json with generation 7
        try sandbox.write("desk.json", Wire.snapshot("desk", generation: 7, versions: [Wire.version(2, by: "desk", vector: ["desk": 1])]))
        let report = try device.merge()
        // Then the warning names it, its record is merged, and desk.json is desk's own again, at
        // desk's next generation (an unsigned file desk did not write does not push it)
        #expect(report.warnings.contains { $0.contains("ANOTHER DEVICE") && $0.contains("desk") })
        #expect(try device.records().map(\.id) == [Wire.id(1), Wire.id(2)])
        #expect(report.publishedGeneration == 2)
        #expect(try SnapshotReader.read(bytes: sandbox.read("desk.json"), fileName: "desk.json").key == device.key.publicKey)
        #expect(try device.status().warnings.contains { $0.contains("ANOTHER DEVICE") }, "status does not report the impostor after the merge")
        // And a copy under this device's name with content it did not publish is reported too
        try sandbox.write("desk (1).json", Wire.snapshot("desk", generation: 8, versions: [Wire.version(3, by: "desk", vector: ["desk": 1])]))
        let copy = try device.merge()
        #expect(copy.warnings.contains { $0.contains("desk (1).json") && $0.contains("ANOTHER DEVICE") })
        #expect(try device.status().warnings.contains { $0.contains("desk (1).json") && $0.contains("ANOTHER DEVICE") })
    }

    @Test(
        "Trusting no keys itself, a device publishes again, signed with its own key, a file under its name that holds its very records but another device signed: its peers that trust its key would reject that file"
    )
    func sameRecordsOtherKey() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let desk = try sandbox.device()
        _ = try desk.put(id: Wire.id(1), type: "Note", fields: JSONObject(), schemaVersion: nil)
        // When a second store of "desk" (a mistyped state directory, a cloned machine) merges the
        // folder and publishes desk.json with the same records, signed with its own new key
        let twin = try sandbox.device(state: sandbox.state("twin"))
        _ = try twin.merge()
        let twinFile = try SnapshotReader.read(bytes: try sandbox.read("desk.json"), fileName: "desk.json")
        try #require(twinFile.key == twin.key.publicKey && twinFile.versions.map(\.id) == [Wire.id(1)])
        // Then desk, merging, says another device uses its ID and publishes its file again, signed with its key
        let report = try desk.merge()
        #expect(report.warnings.contains { $0.contains("ANOTHER DEVICE") }, "\(report.warnings)")
        #expect(report.publishedFiles == ["desk.json"])
        let published = try SnapshotReader.read(bytes: try sandbox.read("desk.json"), fileName: "desk.json")
        #expect(published.key == desk.key.publicKey && published.versions.map(\.id) == [Wire.id(1)])
        // And its next merge finds its own file: nothing to publish, no warning
        let again = try desk.merge()
        #expect(again.publishedFiles.isEmpty && again.warnings.isEmpty, "\(again)")
    }

    @Test("This device's own files, re-read, raise no warning")
    func ownFileNoWarning() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let device = try sandbox.device()
        _ = try device.put(id: Wire.id(1), type: "Note", fields: JSONObject(), schemaVersion: nil)
        // A sync tool's copy of the own file, byte for byte
        try sandbox.write("desk.sync-conflict-20261122-101010-ABCDEFG.json", try sandbox.read("desk.json"))
        let report = try device.merge()
        #expect(report.warnings.isEmpty)
        #expect(!report.hasRejections)
        #expect(try device.status().warnings.isEmpty)
    }

    @Test("A restored own file is merged by a new store, which never reuses a count or a generation")
    func restoreOnNewStore() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        // Given desk edited record 1 three times and published generation 3
        let old = try sandbox.device()
        for n in 1...3 {
            _ = try old.put(id: Wire.id(1), type: "Note", fields: Wire.object(#"{"n": \#(n)}"#), schemaVersion: nil)
        }
        #expect(try old.record(Wire.id(1))?.version.versionVector[DeviceID("desk")!] == 3)
        #expect(try readPublished(sandbox).reading.generation == 3)

        // When the state directory is lost and desk starts on a new store
        let new = try sandbox.device("desk", state: sandbox.state("restored"))
        let report = try new.put(id: Wire.id(1), type: "Note", fields: Wire.object(#"{"n": 4}"#), schemaVersion: nil)
        // Then the own file was merged first (a new store takes it as its own earlier self), saying
        // so once: the same is seen by a second machine given this ID by mistake, which must stop
        #expect(report.merge.source("desk.json")?.status == .merged)
        #expect(report.merge.warnings.count == 1, "\(report.merge.warnings)")
        #expect(
            report.merge.warnings.allSatisfy {
                $0.contains("desk.json is under this device's ID \"desk\" but not signed with this device's key")
                    && $0.contains("give it its own --device ID")
            }, "\(report.merge.warnings)")
        #expect(try new.merge().warnings.isEmpty)
        #expect(try new.status().warnings.isEmpty)
        // And the edit's count is above every count published before, as is the generation
        let record = try #require(try new.record(Wire.id(1)))
        #expect(record.version.versionVector == VersionVector([DeviceID("desk")!: 4]))
        #expect(record.conflicts.isEmpty)
        #expect(report.publishedGeneration == 4)
        #expect(try readPublished(sandbox).reading.generation == 4)
    }
}
