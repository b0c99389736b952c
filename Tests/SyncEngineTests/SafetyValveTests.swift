import Foundation
import SnapshotFormat
import SyncEngine
import TestSupport
import Testing

/// Clocks that run ahead, and mass deletions held back until a person lets them through.
@Suite("Safety valves")
struct SafetyValveTests {
    @Test("a version dated hours in this device's future merges and wins, but is reported naming its device")
    func clockAhead() throws {
        // Given phone, whose clock runs three hours ahead, wrote a version
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let ahead = sandbox.clock.now.milliseconds + 3 * 3_600_000 - Wire.base
        try sandbox.write("phone.json", Wire.snapshot("phone", generation: 1, versions: [Wire.version(1, by: "phone", at: ahead)]))
        let desk = try sandbox.device("desk")

        // When desk merges
        let report = try desk.merge()

        // Then the version is merged (last writer wins: the contract) and the clock is named
        #expect(try desk.records().map(\.version.modifiedBy) == [DeviceID("phone")])
        #expect(report.warnings.contains { $0.contains("by phone are dated in this device's future") && $0.contains("3 h") })
        #expect(report.source("phone.json")?.warning?.contains("check the clock of phone") == true)
        #expect(try desk.status().warnings.contains { $0.contains("phone.json") && $0.contains("future") })
        #expect(!report.hasRejections)
    }

    @Test("an edit made later on a correct device that merged a version from a clock ahead still wins")
    func clockRuleAcrossDevices() throws {
        // Given desk holds phone's version dated two hours ahead of desk's clock
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let ahead = sandbox.clock.now.milliseconds + 2 * 3_600_000 - Wire.base
        let future = Wire.version(1, by: "phone", at: ahead, fields: #"{"n":1}"#)
        try sandbox.write("phone.json", Wire.snapshot("phone", generation: 1, versions: [future]))
        let desk = try sandbox.device("desk")
        _ = try desk.merge()

        // When desk edits the record with its correct (earlier) clock
        let edit = try desk.put(id: Wire.id(1), type: "Note", fields: Wire.object(#"{"n":2}"#), schemaVersion: nil)

        // Then the edit is stamped just after phone's version, and wins on a fresh device too
        let held = try #require(try desk.record(Wire.id(1)))
        #expect(held.version.lastModified?.milliseconds == future.lastModified!.milliseconds + 1)
        #expect(held.version.fields == Wire.object(#"{"n":2}"#))
        #expect(held.conflicts.isEmpty)
        #expect(edit.publishedGeneration != nil)
        let fresh = try sandbox.device("fresh", state: sandbox.state("fresh"))
        _ = try fresh.merge()
        #expect(try fresh.record(Wire.id(1))?.version.fields == Wire.object(#"{"n":2}"#))
    }

    @Test("a source that would delete most live records at once is held back until accepted")
    func massDeletion() throws {
        // Given desk holds 100 live records from phone
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let live = (0..<100).map { Wire.version($0, by: "phone") }
        try sandbox.write("phone.json", Wire.snapshot("phone", generation: 1, versions: live))
        try sandbox.write("tablet.json", Wire.snapshot("tablet", generation: 1, versions: []))
        let desk = try sandbox.device("desk")
        _ = try desk.merge()

        // When phone's next file deletes 80 of them, and tablet adds one record
        let tombstones = (0..<80).map { Wire.version($0, by: "phone", vector: ["phone": 2], at: 1_000, deleted: true) }
        try sandbox.write("phone.json", Wire.snapshot("phone", generation: 2, versions: tombstones + live.suffix(20)))
        try sandbox.write("tablet.json", Wire.snapshot("tablet", generation: 2, versions: [Wire.version(500, by: "tablet")]))
        let held = try desk.merge()

        // Then phone's file is held back (nothing from it merged), tablet's merges, and it is reported
        #expect(held.source("phone.json")?.status == .heldBack)
        #expect(held.source("phone.json")?.reason?.contains("--accept-deletions 'phone.json'") == true)
        #expect(held.source("tablet.json")?.status == .merged)
        #expect(held.hasRejections)
        #expect(try desk.status().counts.live == 101)
        #expect(try desk.status().warnings.contains { $0.contains("held back") })

        // And it stays held back on the next pass, until it is accepted
        #expect(try desk.merge().source("phone.json")?.status == .heldBack)
        let accepted = try desk.merge(acceptDeletions: ["phone.json"])
        #expect(accepted.source("phone.json")?.status == .merged)
        #expect(accepted.deleted == 80)
        #expect(try desk.status().counts.live == 21)
        #expect(try desk.merge().source("phone.json")?.status == .unchanged)
    }

    @Test("a file under this device's own name, not written by it, that would delete every record is held back and called another device using this ID")
    func massDeletionUnderOwnName() throws {
        // Given desk holds 100 live records from phone, and has published its own file
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        try sandbox.write("phone.json", Wire.snapshot("phone", generation: 1, versions: (0..<100).map { Wire.version($0, by: "phone") }))
        let desk = try sandbox.device("desk")
        _ = try desk.merge()

        // When another writer replaces desk.json with tombstones of them all, at a generation desk never wrote
        let tombstones = (0..<100).map { Wire.version($0, by: "desk", vector: ["phone": 1, "desk": 1], at: 1_000, deleted: true) }
        try sandbox.write("desk.json", Wire.snapshot("desk", generation: 7, versions: tombstones))
        let held = try desk.merge()

        // Then it is held back, and said loudly to be another device's, in the report and in status
        #expect(held.source("desk.json")?.status == .heldBack)
        #expect(held.warnings.contains { $0.contains("ANOTHER DEVICE IS USING THIS DEVICE'S ID") }, "\(held.warnings)")
        #expect(try desk.status().counts.live == 100)
        #expect(try desk.status().sources.contains { $0.lastWarning?.contains("ANOTHER DEVICE IS USING THIS DEVICE'S ID") == true })
        // And desk replaces the file with its own (a copy kept), so the advice is not to let it
        // through (that would find nothing) but where the copy is
        let reason = held.source("desk.json")?.reason ?? ""
        #expect(!reason.contains("--accept-deletions") && reason.contains("replaced/"), "\(reason)")
        #expect(!held.warnings.contains { $0.contains("--accept-deletions") }, "\(held.warnings)")
        #expect(held.warnings.contains { $0.contains("a copy is kept at") }, "\(held.warnings)")
        #expect(try SnapshotReader.read(bytes: sandbox.read("desk.json"), fileName: "desk.json").generation != 7)
    }

    @Test("a wipe under this device's whole name while it publishes parts is not replaced: it stays held back, with the advice that lets it through")
    func massDeletionUnderOwnNameBesideParts() throws {
        // Given desk holding phone's 400 records, published in parts
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        try sandbox.write("phone.json", PartsTests.peerFile("phone", generation: 1, 0..<400))
        let desk = try sandbox.device("desk", partPolicy: PartsTests.policy)
        _ = try desk.merge()
        #expect(!FileManager.default.fileExists(atPath: sandbox.sharedPath("desk.json")))

        // When another writer puts desk.json tombstoning them all
        let tombstones = (0..<400).map { PartsTests.version($0, by: "desk", count: 2, deleted: true) }
        let wipe = Wire.snapshot("desk", generation: 7, versions: tombstones)
        try sandbox.write("desk.json", wipe)
        let held = try desk.merge()

        // Then it is held back and left as it is, and the advice is the one that lets it through
        #expect(held.source("desk.json")?.status == .heldBack)
        #expect(held.source("desk.json")?.reason?.contains("--accept-deletions 'desk.json'") == true, "\(held.sources)")
        #expect(try sandbox.read("desk.json") == wipe)
        #expect(try desk.status().counts.live == 400)
    }

    @Test("a peer's parts that would together delete most live records are held back together, until its device is accepted")
    func massDeletionAcrossParts() throws {
        // Given phone publishing 100 records in parts (none of which holds 50 records), merged by desk
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let phone = try sandbox.device("phone", state: sandbox.state("phone"), partPolicy: PartsTests.policy)
        let text = Wire.object(#"{"text": "\#(String(repeating: "x", count: 300))"}"#)
        for n in 0..<100 { _ = try phone.put(id: PartsTests.id(n), type: "Note", fields: text, schemaVersion: nil) }
        let desk = try sandbox.device("desk", state: sandbox.state("desk"))
        _ = try desk.merge()
        #expect(try desk.status().counts.live == 100)
        #expect(try PublishedSnapshot.read(folder: sandbox.shared, device: "phone")?.files.count ?? 0 > 1)

        // When phone deletes 80 of them (each part deletes a few)
        for n in 0..<80 { _ = try phone.delete(id: PartsTests.id(n), schemaVersion: nil) }
        let report = try desk.merge()

        // Then every part of phone's that deletes is held back, together, and nothing is deleted
        let held = report.sources.filter { $0.status == .heldBack }
        #expect(held.count > 1 && held.allSatisfy { $0.name.hasPrefix("phone.") }, "\(report.sources.map { ($0.name, $0.status) })")
        #expect(held.allSatisfy { $0.reason?.contains("--accept-deletions 'phone'") == true })
        #expect(report.deleted == 0 && report.hasRejections)
        #expect(try desk.status().counts.live == 100)
        #expect(try desk.merge().sources.filter { $0.status == .heldBack }.count == held.count)

        // And a name that matches nothing is said; accepting the device lets all of them through
        #expect(try desk.merge(acceptDeletions: ["phnoe"]).warnings.contains { $0.contains("--accept-deletions 'phnoe': no file or device") })
        let accepted = try desk.merge(acceptDeletions: ["phone"])
        #expect(accepted.deleted == 80)
        #expect(!accepted.warnings.contains { $0.contains("--accept-deletions") })
        #expect(try desk.status().counts.live == 20)
    }

    @Test("deleting fewer than the minimum, or less than the share, is not held back")
    func smallDeletionsPass() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let live = (0..<40).map { Wire.version($0, by: "phone") }
        try sandbox.write("phone.json", Wire.snapshot("phone", generation: 1, versions: live))
        let desk = try sandbox.device("desk")
        _ = try desk.merge()
        // 30 of 40 is more than half, but fewer than 50 records
        let tombstones = (0..<30).map { Wire.version($0, by: "phone", vector: ["phone": 2], at: 1_000, deleted: true) }
        try sandbox.write("phone.json", Wire.snapshot("phone", generation: 2, versions: tombstones + live.suffix(10)))
        let report = try desk.merge()
        #expect(report.source("phone.json")?.status == .merged)
        #expect(report.deleted == 30)
    }
}
