import Foundation
import SnapshotFormat
import SyncEngine
import Testing

@Suite("Engine: tidy")
struct TidyTests {
    @Test("tidy removes sync-tool copies whose versions are in the published file, keeps the rest, and never an own file")
    func tidy() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let current = [
            Wire.version(1, by: "phone", vector: ["phone": 2], at: 20, fields: #"{"v": 2}"#),
            Wire.version(2, by: "phone"),
        ]
        let older = [Wire.version(1, by: "phone", vector: ["phone": 1], at: 10, fields: #"{"v": 1}"#)]
        try sandbox.write("phone.json", Wire.snapshot("phone", generation: 3, versions: current))
        // Copies: identical (Syncthing), older (numbered), truncated, one with a rejected record
        try sandbox.write("phone.sync-conflict-20261122-101010-ABCDEFG.json", Wire.snapshot("phone", generation: 3, versions: current))
        try sandbox.write("phone (1).json", Wire.snapshot("phone", generation: 2, versions: older))
        let whole = Wire.snapshot("phone", generation: 1, versions: older)
        try sandbox.write("phone (2).json", Array(whole.prefix(whole.count - 5)))
        try sandbox.write(
            "phone_conflict-20261122-101010.json",
            Wire.snapshotText("phone", generation: 2, records: [Wire.text(older[0]), #"{"id": "nope", "type": "Note"}"#]))
        // Own files: a peer's, a device whose ID looks like a copy of phone's, and one only in the laptop's copy
        try sandbox.write("phone.sync-conflict-1.json", Wire.snapshot("phone.sync-conflict-1", generation: 1, versions: [Wire.version(3, by: "phone.sync-conflict-1")]))
        try sandbox.write("laptop.json", Wire.snapshot("laptop", generation: 1, versions: []))
        try sandbox.write("laptop (1).json", Wire.snapshot("laptop", generation: 1, versions: [Wire.version(4, by: "laptop")]))
        let device = try sandbox.device()

        // When desk tidies the folder
        let report = try device.tidy()

        // Then the copies that add nothing to desk's published file are removed
        #expect(report.removed.sorted() == ["laptop (1).json", "phone (1).json", "phone.sync-conflict-20261122-101010-ABCDEFG.json"])
        // And the copy with a rejected record is kept with its reason, and so is the truncated one,
        // which did not merge
        #expect(report.kept.map(\.name).sorted() == ["phone (2).json", "phone_conflict-20261122-101010.json"])
        #expect(report.kept.first { $0.name == "phone_conflict-20261122-101010.json" }?.reason.contains("rejected") == true)
        #expect(report.kept.first { $0.name == "phone (2).json" }?.reason.hasPrefix("not merged: ") == true)
        let left = Set(try FileManager.default.contentsOfDirectory(atPath: sandbox.shared))
        #expect(left == ["desk.json", "phone.json", "phone (2).json", "phone_conflict-20261122-101010.json", "phone.sync-conflict-1.json", "laptop.json"])
        // And everything the removed copies held is in the published file
        #expect(report.merge.publishedGeneration == 1)
        let published = try readPublished(sandbox)
        #expect(published.records == (try heldRecords(device)))
        #expect(try device.records().map(\.id) == [1, 2, 3, 4].map(Wire.id))
        #expect(try device.record(Wire.id(1))?.version.fields["v"] == .number(2))
    }

    @Test("tidy keeps a copy that merged once and is rejected now (a key trusted since): what it was before does not count")
    func keepsCopyRejectedSince() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let phone = TestSigner()
        let versions = [Wire.version(1, by: "phone")]
        try sandbox.write("phone.json", phone.file("phone", generation: 1, versions: versions))
        try sandbox.write("phone (1).json", phone.file("phone", generation: 1, versions: versions))
        let device = try sandbox.device()
        #expect(try device.merge().sources.first { $0.name == "phone (1).json" }?.role == "copy")

        // When desk trusts another key for phone: the copy is rejected now
        try device.trust(TestSigner().publicKey, for: DeviceID("phone")!)
        #expect(try device.merge().sources.first { $0.name == "phone (1).json" }?.status == .rejected)

        // Then tidy keeps it, saying why
        let report = try device.tidy()
        #expect(report.removed.isEmpty, "\(report.removed)")
        #expect(report.kept.first { $0.name == "phone (1).json" }?.reason.hasPrefix("not merged: ") == true, "\(report.kept)")
        #expect(FileManager.default.fileExists(atPath: sandbox.sharedPath("phone (1).json")))
    }

    @Test("tidy keeps a copy holding a version that is not in the published file")
    func keepsUnpublished() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        try sandbox.write("phone.json", Wire.snapshot("phone", generation: 1, versions: [Wire.version(1, by: "phone")]))
        let device = try sandbox.device(maxFileSize: 2_000)
        _ = try device.merge()
        // A copy too large to read is never removed
        let padding = String(repeating: "p", count: 2_000)
        try sandbox.write("phone (1).json", Wire.snapshot("phone", generation: 2, versions: [Wire.version(2, by: "phone", fields: #"{"p": "\#(padding)"}"#)]))
        let report = try device.tidy()
        #expect(report.removed.isEmpty)
        #expect(FileManager.default.fileExists(atPath: sandbox.sharedPath("phone (1).json")))
        #expect(try device.record(Wire.id(2)) == nil)
    }

    @Test("tidy removes nothing while this device's own file cannot be read")
    func ownFileUnreadable() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        try sandbox.write("phone.json", Wire.snapshot("phone", generation: 1, versions: [Wire.version(1, by: "phone")]))
        try sandbox.write("phone (1).json", Wire.snapshot("phone", generation: 1, versions: [Wire.version(1, by: "phone")]))
        let device = try sandbox.device()
        _ = try device.merge()
        try sandbox.write("desk.json", "{\"format\": 1, \"device\": \"desk\"")
        _ = try device.tidy()
        #expect(FileManager.default.fileExists(atPath: sandbox.sharedPath("phone (1).json")))
    }
}
