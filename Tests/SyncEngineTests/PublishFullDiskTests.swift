import Foundation
import Logging
import SnapshotFormat
import SyncEngine
import TestSupport
import Testing

/// A full disk while publishing, on a real (tiny) tmpfs: the merge is kept, nothing half-written is left.
@Suite("Publishing on a full disk", .serialized)
struct PublishFullDiskTests {
    @Test(
        "a full disk fails the publish with a clear error, keeps the merged store and leaves no temporary file",
        .enabled(if: TinyFileSystem.canMount, "needs root to mount a tmpfs"))
    func fullDiskWhilePublishing() throws {
        // Given a peer's file on a 256 KiB file system filled up by a dot-file readers ignore
        let disk = try TinyFileSystem(kilobytes: 256)
        defer { disk.remove() }
        let peer = Self.snapshot(device: "phone", records: 200)
        try Data(peer).write(to: URL(fileURLWithPath: disk.path + "/phone.json"))
        try disk.fill(".filler")
        let state = NSTemporaryDirectory() + "fulldisk-state-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: state) }

        // When this device merges and tries to publish
        let (device, failure) = try Self.mergeFailingToPublish(in: disk, state: state)

        // Then the publish fails saying the disk is full, the merge is kept, no temporary file remains
        guard case .publishFailed(_, _, let advice)? = failure else {
            Issue.record("expected publishFailed, got \(String(describing: failure))")
            return
        }
        #expect(advice == "the disk is full: free some space")
        #expect(failure?.description.contains("disk is full") == true)
        #expect(try device.records().count == 200)
        let names = try FileManager.default.contentsOfDirectory(atPath: disk.path).sorted()
        #expect(names == [".filler", "phone.json"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: disk.path + "/phone.json")) == Data(peer))

        // And once there is room again, the next merge publishes generation 1
        try FileManager.default.removeItem(atPath: disk.path + "/.filler")
        let report = try device.merge()
        #expect(report.publishedGeneration == 1)
        let published = try [UInt8](Data(contentsOf: URL(fileURLWithPath: disk.path + "/laptop.json")))
        #expect(try SnapshotReader.read(bytes: published, fileName: "laptop.json").versions.count == 200)
    }

    @Test(
        "a shared folder mounted read-only fails the publish saying so and what to do, keeps the merged store, and publishes once writable",
        .enabled(if: TinyFileSystem.canMount, "needs root to mount a tmpfs"))
    func readOnlyFolder() throws {
        // Given a peer's file on a file system then remounted read-only
        let disk = try TinyFileSystem(kilobytes: 1024)
        defer { disk.remove() }
        try Data(Self.snapshot(device: "phone", records: 20)).write(to: URL(fileURLWithPath: disk.path + "/phone.json"))
        try disk.remount(readOnly: true)
        let state = NSTemporaryDirectory() + "readonly-state-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: state) }

        // When this device merges
        let (device, failure) = try Self.mergeFailingToPublish(in: disk, state: state)

        // Then the publish fails naming the cause and the remedy, and the merge is kept
        guard case .publishFailed(_, _, let advice)? = failure else {
            Issue.record("expected publishFailed, got \(String(describing: failure))")
            return
        }
        #expect(advice?.contains("mounted read-only: mount it read-write") == true, "\(failure!)")
        #expect(try device.records().count == 20)
        // And once it is writable again, the next merge publishes
        try disk.remount(readOnly: false)
        #expect(try device.merge().publishedGeneration == 1)
    }

    @Test(
        "a full disk under the state directory fails a merge and an edit saying so and what to do, saves nothing, and both work once there is room",
        .enabled(if: TinyFileSystem.canMount, "needs root to mount a tmpfs"))
    func fullStateDisk() throws {
        // Given a device whose state directory is a 4 MiB file system, in step with a small peer
        let disk = try TinyFileSystem(kilobytes: 4096)
        defer { disk.remove() }
        let shared = NSTemporaryDirectory() + "fullstate-shared-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: shared) }
        try Data(Self.snapshot(device: "phone", records: 20)).write(to: URL(fileURLWithPath: shared + "/phone.json"))
        let settings = SyncSettings(
            sharedFolder: shared, stateDirectory: disk.path + "/state", device: DeviceID("laptop"))
        let device = try SyncDevice(settings: settings, logger: Logger(label: "test"))
        _ = try device.merge()
        let published = try Data(contentsOf: URL(fileURLWithPath: shared + "/laptop.json"))

        // When another peer brings 4,980 new records (and the 20 again), and the state directory's disk is full
        try Data(Self.snapshot(device: "tablet", records: 5_000)).write(
            to: URL(fileURLWithPath: shared + "/tablet.json"))
        try disk.fill("filler")
        var failures: [EngineError] = []
        do { _ = try device.merge() } catch let error as EngineError { failures.append(error) }
        do {
            _ = try device.put(id: nil, type: "Note", fields: Wire.object(#"{"text": "new"}"#), schemaVersion: nil)
        } catch let error as EngineError { failures.append(error) }

        // Then each says the disk is full and what to do, nothing was saved, nothing published
        #expect(failures.count == 2)
        for failure in failures {
            guard case .stateDiskFull(let path, _) = failure else {
                Issue.record("expected stateDiskFull, got \(failure)")
                continue
            }
            #expect(path == disk.path + "/state")
            #expect(failure.description.contains("is full") && failure.description.contains("free some space"))
        }
        #expect(try device.records().count == 20)
        #expect(try Data(contentsOf: URL(fileURLWithPath: shared + "/laptop.json")) == published)

        // And once there is room again, the merge and the edit go through
        try FileManager.default.removeItem(atPath: disk.path + "/filler")
        _ = try device.merge()
        _ = try device.put(id: nil, type: "Note", fields: Wire.object(#"{"text": "new"}"#), schemaVersion: nil)
        #expect(try device.records().count == 5_001)  // the peers share their first 20 ids
    }

    @Test(
        "an edit saved but not published (the folder read-only then), made again once it is writable: refused as made already (nothing to resolve, deleted already), and what was saved is published all the same",
        .enabled(if: TinyFileSystem.canMount, "needs root to mount a tmpfs"))
    func editMadeAgainAfterFailedPublication() throws {
        // Given two peers that changed one record concurrently, merged by laptop: a conflict
        let disk = try TinyFileSystem(kilobytes: 1024)
        defer { disk.remove() }
        let id = "00000000-0000-4000-8000-000000000001"
        for peer in ["phone", "tablet"] {
            let text =
                #"{"format":1,"device":"\#(peer)","generation":1,"records":[{"id":"\#(id)","type":"Note","lastModified":"2026-11-22T10:00:00.000Z","modifiedBy":"\#(peer)","versionVector":{"\#(peer)":1},"fields":{"text":"\#(peer)'s"}}]}"#
            try Data(text.utf8).write(to: URL(fileURLWithPath: disk.path + "/\(peer).json"))
        }
        let state = NSTemporaryDirectory() + "edit-again-state-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: state) }
        let (device, failure) = try Self.mergeFailingToPublish(in: disk, state: state)
        try #require(failure == nil)
        let record = try #require(RecordID(id))
        // The record's versions in laptop's published file, and in its store (by tag).
        func published() throws -> [String] {
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: disk.path + "/laptop.json")))
            return try SnapshotReader.read(bytes: bytes, fileName: "laptop.json").versions.filter { $0.id == record }
                .map(\.tag).sorted()
        }
        func stored() throws -> [String] {
            let held = try #require(try device.record(record))
            return ([held.version] + held.conflicts).map(\.tag).sorted()
        }
        #expect(try published().count == 2)
        #expect(try !device.status().warnings.contains { $0.contains("that this device's files do not hold yet") })

        for step in ["resolve", "delete"] {
            // When the edit is made while the folder is read-only: saved, not published
            try disk.remount(readOnly: true)
            let make = {
                step == "resolve"
                    ? try device.resolve(id: record, with: .takeFrom(DeviceID("phone")!))
                    : try device.delete(id: record, schemaVersion: nil)
            }
            let first = try make()
            #expect(first.publishFailure != nil, "\(step)")
            let saved = try stored()
            #expect(try published() != saved, "\(step)")
            // (which status says)
            #expect(try device.status().warnings.contains { $0.contains("that this device's files do not hold yet") }, "\(step)")
            // Made again while it is still read-only, it is refused as made already, not reported
            // as saved but unpublished (which would tell a script not to make it again as if it were new)
            do {
                _ = try make()
                Issue.record("\(step): made twice")
            } catch let error as EngineError {
                if case .publishFailed = error { Issue.record("\(step): \(error)") }
                guard case .invalidEdit = error else {
                    Issue.record("\(step): \(error)")
                    continue
                }
            }

            // And made again once the folder is writable (a script retrying; a rerun after a crash
            // between the commit and the publication)
            try disk.remount(readOnly: false)
            #expect(throws: EngineError.self, "\(step)") { _ = try make() }

            // Then it is refused as made already, and what was saved is published
            #expect(try published() == saved, "\(step)")
            #expect(try !device.status().warnings.contains { $0.contains("that this device's files do not hold yet") }, "\(step)")
        }
        #expect(try device.record(record)?.version.deleted == true)
    }

    /// Device laptop on `disk` with its store in `state`, after one merge, and the error it threw.
    static func mergeFailingToPublish(in disk: TinyFileSystem, state: String) throws -> (SyncDevice, EngineError?) {
        let settings = SyncSettings(sharedFolder: disk.path, stateDirectory: state, device: DeviceID("laptop"))
        let device = try SyncDevice(settings: settings, logger: Logger(label: "test"))
        do {
            _ = try device.merge()
            return (device, nil)
        } catch let error as EngineError {
            return (device, error)
        }
    }

    static func snapshot(device: String, records: Int) -> [UInt8] {
        var text = #"{"format":1,"device":"\#(device)","generation":1,"records":["#
        for index in 0..<records {
            let id = String(format: "00000000-0000-4000-8000-%012d", index)
            text += index == 0 ? "" : ","
            text +=
                #"{"id":"\#(id)","type":"Note","lastModified":"2026-11-22T10:00:00.000Z","modifiedBy":"\#(device)","versionVector":{"\#(device)":1},"fields":{"text":"note \#(index) with some words"}}"#
        }
        return Array((text + "]}").utf8)
    }
}
