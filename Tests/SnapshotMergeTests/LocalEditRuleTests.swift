import SnapshotFormat
import SnapshotMerge
import Testing

/// The contract's "Making a version locally" and "Conflicts and manual resolution", one rule at a time,
/// beyond what edits.json covers.
@Suite("Local edit rules")
struct LocalEditRuleTests {
    let laptop = Make.device("laptop")

    @Test("A clock far behind stamps 1 ms after the version it edits; a clock ahead stamps now")
    func clockRule() throws {
        // Given a record last changed at base + 5 min by a device whose clock runs ahead
        let current = ReadOnly.Record(version: Make.version(at: 300_000, by: "phone", vector: ["phone": 1], fields: #"{"n":1}"#))

        // When laptop, whose clock is almost a year behind, edits and deletes it
        let behind = Make.at(-30_000_000_000)
        let put = try LocalEdit.put(id: Make.id, type: "Note", fields: Make.object(#"{"n":2}"#), schemaVersion: 1,
                                current: current, device: laptop, now: behind)
        let delete = try LocalEdit.delete(current: current, schemaVersion: 1, device: laptop, now: behind)
        // and when its clock is ahead
        let ahead = try LocalEdit.put(id: Make.id, type: "Note", fields: Make.object(#"{"n":2}"#), schemaVersion: 1,
                                  current: current, device: laptop, now: Make.at(900_000))

        // Then the stamps are C + 1 ms, C + 1 ms and now, and each new version wins over C
        #expect(put.version.lastModified == Make.at(300_001))
        #expect(delete.version.lastModified == Make.at(300_001))
        #expect(ahead.version.lastModified == Make.at(900_000))
        for outcome in [put, delete, ahead] {
            #expect(LastWriterOrder.precedes(current.version, outcome.version))
            #expect(RecordMerge.merge([current.version, outcome.version]) == outcome.record)
        }
    }

    @Test("A version without lastModified is edited at now, whatever the clock says")
    func noLastModified() throws {
        let current = ReadOnly.Record(version: Make.version(at: nil, fields: #"{"n":1}"#))
        let outcome = try LocalEdit.delete(current: current, schemaVersion: 1, device: laptop, now: Make.at(-86_400_000))
        #expect(outcome.version.lastModified == Make.at(-86_400_000))
        #expect(outcome.version.versionVector == Make.vector(["laptop": 1]))
    }

    @Test("This device's count goes one above its highest count anywhere in the record, even in another device's conflict")
    func vectorBump() throws {
        // Given a winner where laptop has 2, and phone's concurrent version that saw laptop's 7th edit
        let winner = Make.version(at: 2_000, by: "tablet", vector: ["laptop": 2, "tablet": 3], fields: #"{"v":"t"}"#)
        let phones = Make.version(at: 1_000, by: "phone", vector: ["laptop": 7, "phone": 1], fields: #"{"v":"p"}"#)
        let current = ReadOnly.Record(version: winner, conflicts: [phones])

        // When laptop edits the winner
        let outcome = try LocalEdit.put(id: Make.id, type: "Note", fields: Make.object(#"{"v":"l"}"#), schemaVersion: 1,
                                    current: current, device: laptop, now: Make.at(3_000))

        // Then its count is 8 (never a reused count), phone's version is not folded in, and it stays a conflict
        #expect(outcome.version.versionVector == Make.vector(["laptop": 8, "tablet": 3]))
        #expect(outcome.record.conflicts == [phones])
        #expect(outcome.supersededOwn.isEmpty && outcome.supersededOthers.isEmpty)
    }

    @Test("Benign conflicts are folded into the vector and absorbed, and are not reported as superseded")
    func benignAbsorbed() throws {
        // Given a winner and two conflicts with its content: one by phone that saw more, one by laptop itself
        let winner = Make.version(at: 3_000, by: "tablet", vector: ["tablet": 1], fields: #"{"v":"same"}"#)
        let phones = Make.version(at: 2_000, by: "phone", vector: ["phone": 4, "desk": 2], fields: #"{"v":"same"}"#)
        let own = Make.version(at: 1_000, by: "laptop", vector: ["laptop": 3], fields: #"{"v":"same"}"#)
        let current = ReadOnly.Record(version: winner, conflicts: [phones, own])

        // When laptop edits
        let outcome = try LocalEdit.put(id: Make.id, type: "Note", fields: Make.object(#"{"v":"new"}"#), schemaVersion: 1,
                                    current: current, device: laptop, now: Make.at(4_000))

        // Then the vector is the pointwise maximum with laptop one above its highest, and no conflict remains
        #expect(outcome.version.versionVector == Make.vector(["tablet": 1, "phone": 4, "desk": 2, "laptop": 4]))
        #expect(outcome.record.conflicts.isEmpty)
        #expect(outcome.supersededOwn.isEmpty && outcome.supersededOthers.isEmpty)
    }

    @Test("A conflict whose content differs only in schemaVersion, deleted or an unknown key is not benign",
          arguments: [#"{"schemaVersion":2}"#, #"{"deleted":true}"#, #"{"x-k":1}"#])
    func notBenign(_ difference: String) throws {
        // Given a conflict by phone that differs from the winner in one part of its content
        let winner = Make.version(at: 3_000, by: "tablet", vector: ["tablet": 1], fields: #"{"v":"same"}"#)
        var object = winner.normalForm
        object["lastModified"] = .string(Make.at(2_000).written)
        object["modifiedBy"] = .string("phone")
        object["versionVector"] = .object(Make.object(#"{"phone":1}"#))
        for (key, value) in Make.object(difference) { object[key] = value }
        if case .bool(true)? = object["deleted"] { object["fields"] = nil }
        let conflict = try ReadOnly.Version(validating: object)
        #expect(!conflict.hasSameContent(as: winner))

        // When laptop edits
        let outcome = try LocalEdit.put(id: Make.id, type: "Note", fields: Make.object(#"{"v":"new"}"#), schemaVersion: 1,
                                    current: ReadOnly.Record(version: winner, conflicts: [conflict]), device: laptop,
                                    now: Make.at(4_000))

        // Then the conflict is not folded in, and it stays
        #expect(outcome.version.versionVector == Make.vector(["tablet": 1, "laptop": 1]))
        #expect(outcome.record.conflicts == [conflict])
    }

    @Test("Unknown keys are carried over by a put and a delete; a null unknown key is absent")
    func unknownKeysCarried() throws {
        // Given a version read with an unknown key and a null one
        let object = Make.object("""
            {"id":"3f2504e0-4f89-41d3-9a0c-0305e82c3301","type":"Task","lastModified":"2026-11-22T10:05:00Z",
             "modifiedBy":"phone","versionVector":{"phone":1},"fields":{"n":1},
             "x-future":{"labels":["home"],"priority":2},"x-gone":null}
            """)
        let current = ReadOnly.Record(version: try ReadOnly.Version(validating: object))
        #expect(current.version.unknownKeys == Make.object(#"{"x-future":{"priority":2,"labels":["home"]}}"#))

        // When laptop puts new fields, and deletes
        let put = try LocalEdit.put(id: Make.id, type: "Ignored", fields: Make.object(#"{"n":2}"#), schemaVersion: 4,
                                current: current, device: laptop, now: Make.at(600_000))
        let delete = try LocalEdit.delete(current: current, schemaVersion: 3, device: laptop, now: Make.at(600_000))

        // Then both keep x-future verbatim and the type, and neither has x-gone
        for outcome in [put, delete] {
            #expect(outcome.version.unknownKeys == current.version.unknownKeys)
            #expect(outcome.version.type == "Task")
            #expect(outcome.version.normalForm["x-gone"] == nil)
        }
        #expect(Make.text(put.record) == """
            {"fields":{"n":2},"id":"3F2504E0-4F89-41D3-9A0C-0305E82C3301","lastModified":"2026-11-22T10:10:00.000Z",\
            "modifiedBy":"laptop","schemaVersion":4,"type":"Task","versionVector":{"laptop":1,"phone":1},\
            "x-future":{"labels":["home"],"priority":2}}
            """)
        #expect(delete.version.deleted && delete.version.fields.count == 0 && delete.version.schemaVersion == 3)
    }

    @Test("A resolution dominates every version of the record, whichever content it takes", arguments: 0...4)
    func resolutionDominates(_ choice: Int) throws {
        // Given a legacy winner and three concurrent vectored versions
        let record = ReadOnly.Record(version: Make.version(at: 9_000, fields: #"{"v":"legacy"}"#), conflicts: [
            Make.version(at: 8_000, by: "phone", vector: ["phone": 3, "laptop": 1], fields: #"{"v":"p"}"#),
            Make.version(at: 7_000, by: "tablet", vector: ["tablet": 2], deleted: true),
            Make.version(type: "Other", schemaVersion: 5, at: 6_000, by: "laptop", vector: ["laptop": 4], unknown: #"{"x":1}"#),
        ])
        let resolution: Resolution = choice < 4 ? .take(index: choice) : .content(fields: Make.object(#"{"v":"new"}"#), schemaVersion: 2)

        // When desk resolves it with a clock behind
        let outcome = try LocalEdit.resolve(current: record, with: resolution, device: Make.device("desk"), now: Make.at(0))

        // Then its vector dominates every conflict, it sorts after the winner, and merging leaves it alone
        #expect(outcome.version.versionVector == Make.vector(["phone": 3, "laptop": 4, "tablet": 2, "desk": 1]))
        #expect(outcome.version.lastModified == Make.at(9_001))
        #expect(outcome.record.conflicts.isEmpty)
        for conflict in record.conflicts { #expect(conflict.versionVector.isDominated(by: outcome.version.versionVector)) }
        #expect(RecordMerge.merge(held: record, incoming: [outcome.version]) == outcome.record)
        // and the content is the one chosen, a taken version keeping its own type, schemaVersion and unknown keys
        let source = choice < 4 ? record.allVersions[choice] : nil
        #expect(outcome.version.hasSameContent(as: source ?? {
            var content = record.version
            content.fields = Make.object(#"{"v":"new"}"#)
            content.schemaVersion = 2
            return content
        }()))
    }

    @Test("A resolution of a record without conflicts, or of a version that does not exist, is refused")
    func resolutionErrors() throws {
        let plain = ReadOnly.Record(version: Make.version(by: "phone", vector: ["phone": 1]))
        #expect(throws: LocalEditError.nothingToResolve(Make.id)) {
            try LocalEdit.resolve(current: plain, with: .take(index: 0), device: laptop, now: Make.at(1))
        }
        let conflicted = ReadOnly.Record(version: plain.version, conflicts: [Make.version(by: "desk", vector: ["desk": 1])])
        for index in [2, -1] {
            #expect(throws: LocalEditError.noSuchVersion(index: index, count: 2)) {
                try LocalEdit.resolve(current: conflicted, with: .take(index: index), device: laptop, now: Make.at(1))
            }
        }
    }
}
