import SnapshotFormat
import SnapshotMerge
import Testing

/// What a local edit writes must itself be a valid version under the contract's record rules:
/// every other device (and this one, re-reading its own file) reads it with the strict reader.
/// These tests start from records that are valid input but sit at the edge of the format's ranges.
@Suite("Local edits at the edges of the format's ranges")
struct LocalEditLimitTests {
    /// Reads `version`'s normal form back as a reader would: its canonical bytes through the strict
    /// I-JSON parser, then the record rules.
    func readBack(_ version: ReadOnly.Version) -> String? {
        let bytes = JSONValue.object(version.normalForm).canonicalBytes
        let object: JSONObject
        do {
            guard case .object(let parsed) = try StrictJSON.parse(bytes) else { return "not an object" }
            object = parsed
        } catch {
            return "the strict parser refuses it (a file holding it is skipped as a whole): \(error)"
        }
        do {
            _ = try ReadOnly.Version(validating: object)
            return nil
        } catch {
            return "the record is rejected: \(error)"
        }
    }

    @Test("The input records of these tests are valid")
    func inputsAreValid() {
        #expect(readBack(Make.version(at: 0, by: "phone", vector: ["laptop": VersionVector.maximumCount])) == nil)
        #expect(readBack(ReadOnly.Version(id: Make.id, type: "Note", lastModified: .latest)) == nil)
    }

    /// An edit would have to raise this device's count past 2^53-1, which no reader accepts (the file
    /// holding it would be skipped whole): the edit is refused, and nothing is written.
    @Test("An edit of a record where this device's count is already 2^53-1 is refused, not written unreadable")
    func countAtMaximum() throws {
        // Given a valid record in which laptop's count is the largest the contract allows
        let current = ReadOnly.Record(
            version: Make.version(at: 0, by: "phone", vector: ["laptop": VersionVector.maximumCount, "phone": 1], fields: #"{"n":1}"#),
            conflicts: [Make.version(at: -1, by: "desk", vector: ["desk": 1], fields: #"{"n":0}"#)])
        let laptop = Make.device("laptop")
        let refusal = LocalEditError.countExhausted(Make.id, laptop)

        // When laptop puts, deletes and resolves it, then each is refused
        #expect(throws: refusal) {
            try LocalEdit.put(id: Make.id, type: "Note", fields: Make.object(#"{"n":2}"#), schemaVersion: 1,
                              current: current, device: laptop, now: Make.at(1_000))
        }
        #expect(throws: refusal) { try LocalEdit.delete(current: current, schemaVersion: 1, device: laptop, now: Make.at(1_000)) }
        #expect(throws: refusal) {
            try LocalEdit.resolve(current: current, with: .take(index: 0), device: laptop, now: Make.at(1_000))
        }

        // And another device, whose count is not exhausted, can still edit it into a readable version
        let desk = try LocalEdit.put(id: Make.id, type: "Note", fields: Make.object(#"{"n":3}"#), schemaVersion: 1,
                                     current: current, device: Make.device("desk"), now: Make.at(1_000))
        #expect(readBack(desk.version) == nil)
    }

    /// The clock rule would date an edit of a version made at 9999-12-31T23:59:59.999Z in year 10000,
    /// which every reader rejects: the edit is dated at that last millisecond instead, and its vector
    /// supersedes the version all the same (refusing it would leave the record uneditable for good).
    @Test("An edit of a version stamped at the last valid millisecond is dated there, readable, and supersedes it")
    func timestampAtMaximum() throws {
        // Given a valid record made at the latest instant the contract allows (a clock far ahead),
        // with a conflict
        let current = ReadOnly.Record(
            version: ReadOnly.Version(id: Make.id, type: "Note", lastModified: .latest, modifiedBy: Make.device("phone"),
                                      versionVector: Make.vector(["phone": 1])),
            conflicts: [Make.version(at: 0, by: "desk", vector: ["desk": 1], fields: #"{"n":0}"#)])
        let laptop = Make.device("laptop")

        // When laptop, with a sane clock, puts, deletes and resolves it
        let put = try LocalEdit.put(id: Make.id, type: "Note", fields: Make.object(#"{"n":2}"#), schemaVersion: 1,
                                    current: current, device: laptop, now: Make.at(1_000))
        let delete = try LocalEdit.delete(current: current, schemaVersion: 1, device: laptop, now: Make.at(1_000))
        let resolve = try LocalEdit.resolve(current: current, with: .take(index: 1), device: laptop, now: Make.at(1_000))

        // Then each is dated at that last millisecond, is readable, and dominates the version it supersedes
        for outcome in [put, delete, resolve] {
            #expect(outcome.version.lastModified == .latest)
            #expect(readBack(outcome.version) == nil)
            #expect(current.version.versionVector.isDominated(by: outcome.version.versionVector))
        }
        // (a resolution also dominates the conflict it supersedes)
        #expect(current.conflicts[0].versionVector.isDominated(by: resolve.version.versionVector))
        // And a new record made by a clock past year 9999 is dated at that last millisecond too
        let made = try LocalEdit.put(id: Make.id, type: "Note", fields: Make.object(#"{"n":1}"#), schemaVersion: 1,
                                     current: nil, device: laptop, now: Timestamp(milliseconds: Timestamp.latest.milliseconds + 5))
        #expect(made.version.lastModified == .latest && readBack(made.version) == nil)
    }

    @Test("A schema version outside 1…2^53−1 is refused by put, delete and a resolution with new fields; 2^53−1 is written readable")
    func schemaVersionRange() throws {
        let current = ReadOnly.Record(
            version: Make.version(at: 0, by: "phone", vector: ["phone": 1], fields: #"{"n":1}"#),
            conflicts: [Make.version(at: -1, by: "desk", vector: ["desk": 1], fields: #"{"n":0}"#)])
        let laptop = Make.device("laptop")
        for number in [0, -1, VersionVector.maximumCount + 1, Int64.max] {
            let refusal = LocalEditError.invalidSchemaVersion(number)
            #expect(throws: refusal) {
                try LocalEdit.put(id: Make.id, type: "Note", fields: Make.object(#"{"n":2}"#), schemaVersion: number,
                                  current: current, device: laptop, now: Make.at(1_000))
            }
            #expect(throws: refusal) {
                try LocalEdit.put(id: Make.id, type: "Note", fields: Make.object(#"{"n":2}"#), schemaVersion: number,
                                  current: nil, device: laptop, now: Make.at(1_000))
            }
            #expect(throws: refusal) {
                try LocalEdit.delete(current: current, schemaVersion: number, device: laptop, now: Make.at(1_000))
            }
            #expect(throws: refusal) {
                try LocalEdit.resolve(
                    current: current, with: .content(fields: Make.object(#"{"n":3}"#), schemaVersion: number),
                    device: laptop, now: Make.at(1_000))
            }
        }
        let highest = try LocalEdit.put(
            id: Make.id, type: "Note", fields: Make.object(#"{"n":2}"#), schemaVersion: VersionVector.maximumCount,
            current: current, device: laptop, now: Make.at(1_000))
        #expect(readBack(highest.version) == nil)
    }

    /// Fields `levels` deep, the fields object being level 1.
    static func fields(nested levels: Int) -> JSONObject {
        let inner = String(repeating: "[", count: levels - 1) + String(repeating: "]", count: levels - 1)
        return Make.object(#"{"a":"# + inner + "}")
    }

    @Test("Fields nested deeper than a published file can hold them, in a conflict entry too, are refused; at the limit they are read back from a file")
    func fieldsDepth() throws {
        let laptop = Make.device("laptop")
        let deepest = LocalEdit.maximumFieldsDepth
        #expect(throws: LocalEditError.fieldsTooDeep(Make.id)) {
            try LocalEdit.put(id: Make.id, type: "Note", fields: Self.fields(nested: deepest + 1), schemaVersion: 1,
                              current: nil, device: laptop, now: Make.at(1_000))
        }
        let conflicted = ReadOnly.Record(
            version: Make.version(at: 0, by: "phone", vector: ["phone": 1], fields: #"{"n":1}"#),
            conflicts: [Make.version(at: -1, by: "desk", vector: ["desk": 1], fields: #"{"n":0}"#)])
        #expect(throws: LocalEditError.fieldsTooDeep(Make.id)) {
            try LocalEdit.resolve(
                current: conflicted, with: .content(fields: Self.fields(nested: deepest + 1), schemaVersion: 1),
                device: laptop, now: Make.at(1_000))
        }
        // At the limit: as a record of a file, and as a conflict entry of another device's record
        let edit = try LocalEdit.put(
            id: Make.id, type: "Note", fields: Self.fields(nested: deepest), schemaVersion: 1, current: nil,
            device: laptop, now: Make.at(1_000))
        let other = Make.version(at: 5_000, by: "phone", vector: ["phone": 1], fields: #"{"n":1}"#)
        for record in [edit.record, ReadOnly.Record(version: other, conflicts: [edit.version])] {
            let file = Array(#"{"format":1,"device":"phone","generation":1,"records":["#.utf8) + record.interchangeLine
                + Array("]}".utf8)
            #expect(throws: Never.self) { try StrictJSON.parse(file) }
        }
    }

    @Test("An edit keeps the current version's other keys: one nested too deep for a conflict entry is refused; at the limit, the file holding it parses")
    func unknownKeysDepth() throws {
        let laptop = Make.device("laptop")
        func current(arrays: Int) -> ReadOnly.Record {
            let deep = String(repeating: "[", count: arrays) + String(repeating: "]", count: arrays)
            return ReadOnly.Record(
                version: ReadOnly.Version(
                    id: Make.id, type: "Note", lastModified: Make.at(0), modifiedBy: Make.device("phone"),
                    versionVector: VersionVector([Make.device("phone"): 1]), fields: Make.object(#"{"n":1}"#),
                    unknownKeys: Make.object(#"{"x":"# + deep + "}")))
        }
        // The other keys' values sit where `fields` does: as deep as the fields may nest
        #expect(throws: LocalEditError.fieldsTooDeep(Make.id)) {
            try LocalEdit.put(id: Make.id, type: "Note", fields: Make.object(#"{"n":2}"#), schemaVersion: 1,
                              current: current(arrays: LocalEdit.maximumFieldsDepth + 1), device: laptop, now: Make.at(1_000))
        }
        let edit = try LocalEdit.put(
            id: Make.id, type: "Note", fields: Make.object(#"{"n":2}"#), schemaVersion: 1,
            current: current(arrays: LocalEdit.maximumFieldsDepth), device: laptop, now: Make.at(1_000))
        let other = Make.version(at: 5_000, by: "desk", vector: ["desk": 1], fields: #"{"n":3}"#)
        let file = Array(#"{"format":1,"device":"desk","generation":1,"records":["#.utf8)
            + ReadOnly.Record(version: other, conflicts: [edit.version]).interchangeLine + Array("]}".utf8)
        #expect(throws: Never.self) { try StrictJSON.parse(file) }
    }
}
