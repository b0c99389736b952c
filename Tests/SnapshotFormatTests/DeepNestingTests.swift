import TestSupport
import Testing

@testable import SnapshotFormat

/// The contract sets no nesting depth; the parsers stop at ``StrictJSON/maximumDepth``. A record
/// nested deeper is rejected on its own and the rest of its file merges, unless the file is not
/// valid JSON anyway (docs/format.md, "Readings chosen where the contract is open").
@Suite("Nesting deeper than the parsers go")
struct DeepNestingTests {
    static let deepID = "00000001-0000-4000-8000-000000000001"
    static let plainID = "00000002-0000-4000-8000-000000000002"

    static func arrays(_ depth: Int, inner: String = "1") -> String {
        String(repeating: "[", count: depth) + inner + String(repeating: "]", count: depth)
    }

    static func record(_ id: String, fields: String = #"{"a":1}"#, extra: String = "") -> String {
        #"{"id":"\#(id)","type":"T","lastModified":"2026-11-22T10:00:00.000Z","modifiedBy":"a","versionVector":{"a":1},"fields":\#(fields)\#(extra)}"#
    }

    static func file(_ records: [String], top: String = "") -> [UInt8] {
        Array(#"{"format":1,"device":"a","generation":1\#(top),"records":[\#(records.joined(separator: ",\n"))]}"#.utf8)
    }

    /// Every way a file is read: whole (fast path, and the plain path alone), and split into
    /// elements read one by one, as the engine reads them.
    static func readings(_ bytes: [UInt8]) throws -> [SnapshotReading] {
        var all = [
            try SnapshotReader.read(bytes: bytes, fileName: "a.json"),
            try SnapshotReader.readPlain(bytes: bytes, fileName: "a.json"),
        ]
        let split = try #require(SnapshotReader.split(bytes))
        let elements = bytes.withUnsafeBufferPointer { input in
            split.elements.enumerated().map { index, range in
                SnapshotReader.readElement(of: UnsafeBufferPointer(rebasing: input[range]), at: index)
            }
        }
        all.append(try #require(try SnapshotReader.assemble(split, fileName: "a.json", elements: elements)))
        return all
    }

    static func invalidJSONReason(_ bytes: [UInt8]) -> String? {
        do {
            _ = try SnapshotReader.read(bytes: bytes, fileName: "a.json")
            return nil
        } catch {
            guard case .invalidJSON(let parseError) = error else { return "not invalid JSON: \(error)" }
            return parseError.reason
        }
    }

    @Test(
        "a conflict entry nested deeper than 512 levels (a version read at the top of its record, kept by a device as a conflict, two levels deeper) is rejected alone: the record's version and its other entries merge"
    )
    func deepConflictEntryAlone() throws {
        // Given a record whose version is shallow, its first entry shallow, its second 509 levels
        // deep in its fields (fine at the top of a record, too deep as an entry)
        let entry = { (device: String, fields: String) in
            #"{"id":"\#(Self.deepID)","type":"T","lastModified":"2026-11-22T10:00:00.000Z","modifiedBy":"\#(device)","versionVector":{"\#(device)":1},"fields":\#(fields)}"#
        }
        let conflicts = #","conflicts":["# + entry("b", #"{"b":1}"#) + "," + entry("c", #"{"x":\#(Self.arrays(508))}"#) + "]"
        let bytes = Self.file([Self.record(Self.deepID, extra: conflicts), Self.record(Self.plainID)])

        // When it is read every way the code reads a file
        for reading in try Self.readings(bytes) {
            // Then the record's version and its shallow entry merge, the deep entry is reported alone
            #expect(reading.versions.map(\.modifiedBy?.rawValue) == ["a", "b", "a"], "\(reading.versions.map(\.modifiedBy))")
            #expect(reading.problems.count == 1, "\(reading.problems)")
            #expect(reading.problems.first?.conflictIndex == 1 && reading.problems.first?.recordID == Self.deepID, "\(reading.problems)")
        }
    }

    @Test("a valid record nested deeper than 512 levels is rejected alone; the rest of its file merges")
    func deepRecordAlone() throws {
        // Given a file whose first record's fields nest 600 arrays deep, and a plain second record
        let bytes = Self.file([
            Self.record(Self.deepID, fields: #"{"x":\#(Self.arrays(600))}"#), Self.record(Self.plainID),
        ])

        // When it is read every way the code reads a file
        for reading in try Self.readings(bytes) {
            // Then the plain record merges, and the deep one is rejected by itself, named
            #expect(reading.versions.map(\.id.rawValue) == [Self.plainID])
            #expect(reading.recordCount == 2)
            #expect(reading.problems.count == 1)
            let problem = try #require(reading.problems.first)
            #expect(problem.recordIndex == 0 && problem.recordID == Self.deepID && problem.conflictIndex == nil)
            #expect(problem.rule.hasPrefix(JSONParseError.tooDeepReason))
        }
    }

    @Test("a conflict entry nested too deep is rejected alone, its record's version merges; depth 512 still reads")
    func deepConflictEntry() throws {
        let entry = #"{"id":"\#(Self.deepID)","type":"T","versionVector":{"b":1},"fields":{"x":\#(Self.arrays(600))}}"#
        let bytes = Self.file([Self.record(Self.deepID, extra: #","conflicts":[\#(entry)]"#), Self.record(Self.plainID)])
        for reading in try Self.readings(bytes) {
            #expect(reading.versions.map(\.id.rawValue) == [Self.deepID, Self.plainID])
            #expect(reading.problems.map(\.recordID) == [Self.deepID])
            #expect(reading.problems.map(\.conflictIndex) == [0])
        }
        // The file, its records array, the record, its fields object and 508 arrays: 512 levels.
        let atTheLimit = Self.file([Self.record(Self.deepID, fields: #"{"x":\#(Self.arrays(508))}"#)])
        for reading in try Self.readings(atTheLimit) {
            #expect(reading.versions.map(\.id.rawValue) == [Self.deepID])
            #expect(reading.problems.isEmpty)
        }
    }

    @Test(
        "a deep record that is not valid JSON makes the file invalid, with the error a parse without a limit finds",
        arguments: [
            (#"{"x":\#(arrays(600, inner: #"{"k":1,"k":2}"#))}"#, "duplicate key \"k\""),
            (#"{"x":\#(arrays(600, inner: #""\ud800""#))}"#, "lone"),
            (#"{"x":\#(arrays(600, inner: "01"))}"#, "leading zeros"),
            (#"{"x":\#(arrays(600, inner: "1,]"))}"#, "unexpected character ']'"),
        ])
    func deepAndInvalid(fields: String, reason: String) throws {
        let bytes = Self.file([Self.record(Self.deepID, fields: fields), Self.record(Self.plainID)])
        let found = try #require(Self.invalidJSONReason(bytes))
        #expect(found.contains(reason), "\(found)")
        #expect(!found.contains("nested deeper"))
        // Cut inside the deep record: truncated.
        let cut = Array(Self.file([Self.record(Self.deepID, fields: #"{"x":\#(Self.arrays(600))}"#)]).prefix(400))
        #expect(Self.invalidJSONReason(cut) == JSONParseError.truncatedReason)
    }

    @Test("a deep unknown top-level member is ignored; a known one that deep breaks its rule")
    func deepTopLevel() throws {
        let unknown = Self.file([Self.record(Self.plainID)], top: #","x-extra":\#(Self.arrays(700))"#)
        for reading in try Self.readings(unknown) {
            #expect(reading.versions.map(\.id.rawValue) == [Self.plainID])
            #expect(reading.problems.isEmpty)
        }
        let known = Array(
            #"{"format":1,"device":\#(Self.arrays(700)),"generation":1,"records":[\#(Self.record(Self.plainID))]}"#.utf8)
        #expect(throws: SnapshotFileProblem.self) { try SnapshotReader.read(bytes: known, fileName: "a.json") }
        #expect(throws: SnapshotFileProblem.self) { try SnapshotReader.readPlain(bytes: known, fileName: "a.json") }
    }

    @Test("validation without a depth limit keeps its stack on the heap: a million levels")
    func millionLevels() throws {
        let depth = 1_000_000
        try StrictJSON.validate(Array(Self.arrays(depth).utf8))
        let objects = String(repeating: #"{"a":"#, count: depth) + "1" + String(repeating: "}", count: depth)
        try StrictJSON.validate(Array(objects.utf8))
        #expect(throws: JSONParseError.self) { try StrictJSON.validate(Array(Self.arrays(depth).utf8.dropLast())) }
        let duplicate = String(repeating: "[", count: depth) + #"{"a":1,"a":1}"# + String(repeating: "]", count: depth)
        #expect(throws: JSONParseError(offset: depth + 7, reason: #"duplicate key "a""#)) {
            try StrictJSON.validate(Array(duplicate.utf8))
        }
        // A file with a record that deep: its other record still merges, and nothing overflows.
        let bytes = Self.file([Self.record(Self.deepID, fields: #"{"x":\#(Self.arrays(depth))}"#), Self.record(Self.plainID)])
        let reading = try SnapshotReader.read(bytes: bytes, fileName: "a.json")
        #expect(reading.versions.map(\.id.rawValue) == [Self.plainID])
        #expect(reading.problems.map(\.recordID) == [Self.deepID])
    }

    @Test("validation agrees with the parser on every document the parser reads or refuses below the limit")
    func validationAgreesWithParser() throws {
        var random = SplitMix64(seed: 77)
        var refused = 0
        for _ in 0..<3_000 {
            var text = ""
            RandomJSON.value(depth: 0, into: &text, using: &random)
            var bytes = Array(text.utf8)
            // Break some documents: a byte dropped or doubled somewhere.
            if Int.random(in: 0..<3, using: &random) == 0, !bytes.isEmpty {
                let at = Int.random(in: 0..<bytes.count, using: &random)
                if Bool.random(using: &random) { bytes.remove(at: at) } else { bytes.insert(bytes[at], at: at) }
                text = String(decoding: bytes, as: UTF8.self)
            }
            let parsed = Result { () throws(JSONParseError) in try StrictJSON.parse(bytes) }
            let validated = Result { () throws(JSONParseError) in try StrictJSON.validate(bytes) }
            switch (parsed, validated) {
            case (.success, .success): break
            case (.failure(let a), .failure(let b)):
                #expect(a == b, "\(text)")
                refused += 1
            default: Issue.record("parse \(parsed), validate \(validated): \(text)")
            }
        }
        #expect(refused > 300)
    }
}
