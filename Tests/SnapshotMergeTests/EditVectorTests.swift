import SnapshotFormat
import SnapshotMerge
import Testing

/// One case of `edits.json`, kept as the strict parser read it.
struct EditCase: Sendable, CustomTestStringConvertible {
    let name: String
    let object: JSONObject
    var testDescription: String { name }

    static func all() -> [EditCase] {
        guard let bytes = try? MergeVectors.bytes("edits.json"), case .array(let cases)? = try? StrictJSON.parse(bytes)
        else { return [EditCase(name: MergeVectors.missingPlaceholder, object: JSONObject())] }
        return cases.enumerated().map { index, value in
            guard case .object(let object) = value else { return EditCase(name: "case #\(index + 1) (not an object)", object: JSONObject()) }
            guard case .string(let name)? = object["name"] else { return EditCase(name: "case #\(index + 1)", object: object) }
            return EditCase(name: name, object: object)
        }
    }

    func string(_ key: String) throws -> String {
        guard case .string(let text)? = object[key] else { throw malformed("\(key) is not a string") }
        return text
    }

    func integer(_ key: String) throws -> Int64 {
        guard let number = object[key]?.exactInteger else { throw malformed("\(key) is not an integer") }
        return number
    }

    func fields() throws -> JSONObject {
        guard case .object(let fields)? = object["fields"] else { throw malformed("fields is not an object") }
        return fields
    }

    /// `record` as the merged record the device holds (nil for a new record).
    func record() throws -> ReadOnly.Record? {
        switch object["record"] {
        case nil, .null?: return nil
        case .object(let record)?:
            let version = try ReadOnly.Version(validating: record)
            var conflicts: [ReadOnly.Version] = []
            if case .array(let entries)? = record["conflicts"] {
                for entry in entries {
                    guard case .object(let entryObject) = entry else { throw malformed("a conflict is not an object") }
                    conflicts.append(try ReadOnly.Version(validating: entryObject))
                }
            }
            return ReadOnly.Record(version: version, conflicts: conflicts)
        case let other?: throw malformed("record is \(other.briefDescription)")
        }
    }

    func malformed(_ problem: String) -> VectorsUnavailable {
        VectorsUnavailable(message: "edits.json, case \(name): \(problem)")
    }
}

@Suite("Edit vectors: local edits and resolutions give edits.json's expected record")
struct EditVectorTests {
    @Test("There are 20 edit cases")
    func caseCount() {
        #expect(EditCase.all().count == 20)
    }

    @Test("Each case of edits.json", arguments: EditCase.all())
    func editCase(_ vector: EditCase) throws {
        // Given the record the device holds, its clock and the edit
        guard vector.name != MergeVectors.missingPlaceholder else {
            throw VectorsUnavailable(message: MergeVectors.missingMessage ?? "edits.json could not be read")
        }
        let record = try vector.record()
        let device = try #require(DeviceID(try vector.string("device")))
        let now = try #require(Timestamp(parsing: try vector.string("now")))
        guard case .object(let expected)? = vector.object["expected"] else { throw vector.malformed("no expected") }

        // When the edit is made
        let outcome = try apply(vector, to: record, device: device, now: now)

        // Then the record is the expected one, canonical byte for canonical byte
        let got = JSONValue.object(outcome.record.normalForm).canonicalString
        let want = JSONValue.object(expected).canonicalString
        #expect(Array(got.utf8) == Array(want.utf8), "\(vector.name):\nexpected: \(want)\n     got: \(got)")
        // and the tool would report as many superseded conflicts as the case says
        let superseded = outcome.supersededOwn.count + outcome.supersededOthers.count
        #expect(Int64(superseded) == (try vector.integer("superseded")))
        #expect(outcome.supersededOwn.allSatisfy { $0.modifiedBy == device })
        #expect(outcome.supersededOthers.allSatisfy { $0.modifiedBy != device })
        // and merging the old record's versions with the outcome gives the outcome again
        let merged = RecordMerge.merge(held: record, incoming: [outcome.version] + outcome.record.conflicts)
        #expect(merged == outcome.record)
        let reversed = RecordMerge.merge(held: outcome.record, incoming: record.map { [$0.version] + $0.conflicts } ?? [])
        #expect(reversed == outcome.record)
    }

    private func apply(_ vector: EditCase, to record: ReadOnly.Record?, device: DeviceID, now: Timestamp) throws -> LocalEditOutcome {
        switch try vector.string("op") {
        case "put":
            let id = try #require(record?.id ?? RecordID(try vector.string("id")))
            let type = try record?.version.type ?? vector.string("type")
            return try LocalEdit.put(
                id: id, type: type, fields: try vector.fields(), schemaVersion: try vector.integer("schemaVersion"),
                current: record, device: device, now: now)
        case "delete":
            let current = try #require(record)
            return try LocalEdit.delete(current: current, schemaVersion: try vector.integer("schemaVersion"), device: device, now: now)
        case "resolve":
            let current = try #require(record)
            let resolution: Resolution
            if let take = vector.object["take"]?.exactInteger {
                resolution = .take(index: Int(take))
            } else {
                resolution = .content(fields: try vector.fields(), schemaVersion: try vector.integer("schemaVersion"))
            }
            return try LocalEdit.resolve(current: current, with: resolution, device: device, now: now)
        case let op:
            throw vector.malformed("unknown op \(op)")
        }
    }
}
