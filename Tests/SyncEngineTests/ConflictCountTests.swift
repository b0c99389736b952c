import Foundation
import GRDB
@testable import SnapshotFormat
@testable import SyncEngine
@testable import SyncStore
import Testing

/// A pass reports how many records are in conflict. One that changed no record reports the count
/// the last pass that changed records kept (store v11) instead of counting them again; any change
/// since, by this device or another program, makes the pass count again.
@Suite("the count of records in conflict: kept while nothing changes")
struct ConflictCountTests {
    /// Record `n` edited concurrently by phone and laptop: a conflict.
    static func writeConflict(_ sandbox: Sandbox, _ n: Int, generation: Int64) throws {
        let phone = (0...n).map {
            Wire.version($0, by: "phone", vector: ["phone": 1], at: Int64($0), fields: #"{"by": "phone"}"#)
        }
        let laptop = (0...n).map {
            Wire.version($0, by: "laptop", vector: ["laptop": 1], at: Int64($0) + 1, fields: #"{"by": "laptop"}"#)
        }
        try sandbox.write("phone.json", Wire.snapshot("phone", generation: generation, versions: phone))
        try sandbox.write("laptop.json", Wire.snapshot("laptop", generation: generation, versions: laptop))
    }

    /// Sets the kept count to `value` behind the engine's back, so a report shows which count it used.
    static func keep(_ value: Int, in device: SyncDevice) throws {
        try device.store.transaction { session in
            try session.db.execute(sql: "UPDATE conflictCount SET count = ?", arguments: [value])
        }
    }

    @Test("nothing changed: the kept count; this device's changes move it; another program's change: counted again")
    func keptUntilAChange() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        try Self.writeConflict(sandbox, 1, generation: 1)
        let desk = try sandbox.device("desk")
        #expect(try desk.merge().conflicts == 2)

        // Nothing changed: the kept count is reported (the marker shows it was not counted again)
        try Self.keep(77, in: desk)
        #expect(try desk.merge().conflicts == 77)

        // A peer's change adds a conflict: the kept count moves by one (not counted again)
        try Self.writeConflict(sandbox, 2, generation: 2)
        #expect(try desk.merge().conflicts == 78)

        // Another program deletes a record in conflict: counted again
        try Self.keep(77, in: desk)
        try desk.store.transaction { session in
            try session.db.execute(sql: "DELETE FROM record WHERE id = ?", arguments: [Wire.id(0).description])
        }
        #expect(try desk.merge().conflicts == 2)

        // Another program rewrites a line (its digest is cleared): counted again
        try Self.keep(77, in: desk)
        try desk.store.transaction { session in
            try session.db.execute(sql: "UPDATE record SET line = line || ' ' WHERE id = ?", arguments: [Wire.id(1).description])
        }
        #expect(try desk.merge().conflicts == 2)

        // A local edit that adds no conflict moves nothing
        try Self.keep(77, in: desk)
        _ = try desk.put(id: nil, type: "Note", fields: Wire.object(#"{"a": 1}"#), schemaVersion: nil)
        #expect(try desk.merge().conflicts == 77)
    }

    @Test("the moved count is the count: over passes that add, resolve and add again conflicts, edits, and more changes than are looked up one by one")
    func movedCountIsTheCount() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let desk = try sandbox.device("desk")
        func counted() throws -> Int { try desk.store.reading { try $0.recordsInConflict() } }
        func expectCount(_ report: MergeReport, _ step: String) throws {
            #expect(report.conflicts == (try counted()), "\(step): reported \(report.conflicts)")
        }
        try Self.writeConflict(sandbox, 3, generation: 1)
        try expectCount(try desk.merge(), "first merge")
        try Self.writeConflict(sandbox, 6, generation: 2)
        try expectCount(try desk.merge(), "three more conflicts")
        // phone resolves records 0 to 4 (a version after both), laptop adds record 7 in conflict
        let resolved = (0...4).map {
            Wire.version($0, by: "phone", vector: ["phone": 2, "laptop": 1], at: 100 + Int64($0), fields: #"{"by": "both"}"#)
        }
        try sandbox.write("phone.json", Wire.snapshot("phone", generation: 3, versions: resolved))
        try expectCount(try desk.merge(), "five resolved")
        #expect(try counted() == 2)
        // A local edit of record 5, in conflict
        _ = try desk.put(id: Wire.id(5), type: "Note", fields: Wire.object(#"{"by": "desk"}"#), schemaVersion: nil)
        try expectCount(try desk.merge(), "after the edit")
        // More changed records held before than the tally looks up: counted again, the same
        let many = ConflictTally.lookUpLimit + 100
        let phone = (0..<many).map {
            Wire.version($0, by: "phone", vector: ["phone": 3], at: 1_000 + Int64($0), fields: #"{"by": "phone again"}"#)
        }
        let laptop = (0..<many).map {
            Wire.version($0, by: "laptop", vector: ["laptop": 3], at: 1_001 + Int64($0), fields: #"{"by": "laptop again"}"#)
        }
        try sandbox.write("phone.json", Wire.snapshot("phone", generation: 4, versions: phone))
        try expectCount(try desk.merge(), "phone's \(many) records")
        try sandbox.write("laptop.json", Wire.snapshot("laptop", generation: 4, versions: laptop))
        try expectCount(try desk.merge(), "laptop's \(many) concurrent records")
        #expect(try counted() == many)
    }
}
