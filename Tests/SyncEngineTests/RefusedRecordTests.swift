import Foundation
import SnapshotFormat
import SnapshotMerge
import SyncEngine
import Testing

@Suite("A record too entangled to merge, from another device's file")
struct RefusedRecordTests {
    /// 1,003 versions of record 1 over three devices, entangled on purpose (no second-half
    /// version has a count the first half lacks: each is compared with every one kept before:
    /// about 250,000 comparisons), past ``limit`` (docs/hostile-input.md). The standard limit
    /// refuses the same shape at 10,001 versions; a debug build takes long to get there.
    static func entangled() -> ReadOnly.Record {
        let k: Int64 = 501
        let first = (0...k).map { j in
            Wire.version(1, by: "a", vector: ["a": k + 2, "b": j + 1, "c": k - j + 1], at: j, fields: #"{"v": \#(j)}"#)
        }
        let second = (0..<k).map { i in
            Wire.version(1, by: "b", vector: ["a": k + 1 - i, "b": k - i + 1, "c": i + 2], at: i, fields: #"{"v": \#(-i)}"#)
        }
        let all = first + second
        return ReadOnly.Record(version: all[0], conflicts: Array(all.dropFirst()))
    }

    static let limit = RecordMergeLimit(baseSteps: 50_000, stepsPerEntry: 32)

    static func device(_ sandbox: Sandbox) throws -> SyncDevice {
        var settings = SyncSettings(sharedFolder: sandbox.shared, stateDirectory: sandbox.state(), device: DeviceID("desk"))
        settings.recordMergeLimit = limit
        let clock = sandbox.clock
        return try SyncDevice(settings: settings, logger: quietLogger, clock: { clock.now })
    }

    @Test("the shape merges without the limit: what the limit refuses is only its cost")
    func mergesWithoutLimit() throws {
        #expect(throws: RecordMergeError.self) {
            try RecordMerge.merge([Self.entangled().version] + Self.entangled().conflicts, limit: Self.limit)
        }
        #expect(RecordMerge.merge([Self.entangled().version] + Self.entangled().conflicts) != nil)
    }

    @Test("a first merge refuses it with a reason naming the record, merges the file's other records, and exits as rejected")
    func firstMergeRefuses() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let plain = ReadOnly.Record(version: Wire.version(2, by: "phone"))
        try sandbox.write("phone.json", Wire.snapshot("phone", generation: 1, [Self.entangled(), plain]))
        let desk = try Self.device(sandbox)

        let report = try desk.merge()

        #expect(report.refusedRecords.count == 1)
        #expect(report.refusedRecords.first?.contains(Wire.id(1).rawValue) == true, "\(report.refusedRecords)")
        #expect(report.hasRejections)
        #expect(try desk.record(Wire.id(1)) == nil)
        #expect(try desk.record(Wire.id(2)) == plain)
    }

    @Test("a later merge refuses it and keeps what the store held for the record")
    func laterMergeKeepsHeld() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let held = ReadOnly.Record(version: Wire.version(1, by: "tablet", vector: ["tablet": 1]))
        try sandbox.write("tablet.json", Wire.snapshot("tablet", generation: 1, [held]))
        let desk = try Self.device(sandbox)
        _ = try desk.merge()
        #expect(try desk.record(Wire.id(1)) == held)

        try sandbox.write("phone.json", Wire.snapshot("phone", generation: 1, [Self.entangled()]))
        let report = try desk.merge()

        #expect(report.refusedRecords.count == 1 && report.hasRejections)
        #expect(try desk.record(Wire.id(1)) == held)
    }

    /// `device`'s snapshot as one file: a format 1 `<device>.json` (`part` nil), or its part
    /// `part` (every id of ``Wire/id(_:)`` starts with 00).
    static func file(_ device: String, part: String?, generation: Int64, _ records: [ReadOnly.Record]) -> (String, [UInt8]) {
        var top = JSONObject()
        top["format"] = .number(part == nil ? 1 : 2)
        top["device"] = .string(device)
        if let part { top["part"] = .string(part) }
        top["generation"] = .number(Double(generation))
        top["records"] = .array(records.sorted { $0.id < $1.id }.map { .object($0.normalForm) })
        return (part.map { "\(device).\($0).json" } ?? "\(device).json", JSONValue.object(top).canonicalBytes)
    }

    @Test(
        "a file's next change refuses the record again, and says so, rather than skip it as merged",
        arguments: [nil, "0", "00"])  // a whole snapshot, a part of one digit, a part of two
    func refusedAgain(part: String?) throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let plain = ReadOnly.Record(version: Wire.version(2, by: "phone", vector: ["phone": 1]))
        let (name, first) = Self.file("phone", part: part, generation: 1, [plain])
        try sandbox.write(name, first)
        let desk = try Self.device(sandbox)
        _ = try desk.merge()

        // Given a change of the file that brings the entangled record, refused
        try sandbox.write(name, Self.file("phone", part: part, generation: 2, [plain, Self.entangled()]).1)
        #expect(try desk.merge().refusedRecords.count == 1)

        // When the file changes another record
        let edited = ReadOnly.Record(version: Wire.version(2, by: "phone", vector: ["phone": 2], at: 5))
        try sandbox.write(name, Self.file("phone", part: part, generation: 3, [edited, Self.entangled()]).1)
        let report = try desk.merge()

        // Then the entangled record is read and refused again (its element's digest was not kept
        // as merged), and the other record merges
        #expect(report.changed == 1)
        #expect(report.refusedRecords.count == 1, "\(report.refusedRecords)")
        #expect(report.hasRejections)
        #expect(try desk.record(Wire.id(1)) == nil)
    }
}
