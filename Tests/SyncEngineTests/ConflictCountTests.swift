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

    @Test("nothing changed: the kept count; a change here or by another program: counted again")
    func keptUntilAChange() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        try Self.writeConflict(sandbox, 1, generation: 1)
        let desk = try sandbox.device("desk")
        #expect(try desk.merge().conflicts == 2)

        // Nothing changed: the kept count is reported (the marker shows it was not counted again)
        try Self.keep(77, in: desk)
        #expect(try desk.merge().conflicts == 77)

        // A peer's change adds a conflict: counted again
        try Self.writeConflict(sandbox, 2, generation: 2)
        #expect(try desk.merge().conflicts == 3)

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

        // A local edit resolves nothing but changes a record: counted again
        try Self.keep(77, in: desk)
        _ = try desk.put(id: nil, type: "Note", fields: Wire.object(#"{"a": 1}"#), schemaVersion: nil)
        #expect(try desk.merge().conflicts == 2)
        #expect(try desk.store.reading { try $0.recordsInConflict() } == 2)
    }
}
