@testable import SnapshotFormat
import Testing

/// ``SnapshotReader/split(_:findingIDs:)`` without ids splits a file laid out as SnapshotSync writes
/// it at its line feeds (the engine's way for every pass but a first merge). The `reader` fuzz
/// target found that it took a comma after the last record's line (`{…},\n]}`), which is not JSON,
/// so syncd merged a file that `SnapshotReader.read` skips (docs/fuzzing.md).
@Suite("splitting a file at its line feeds")
struct LineSplitTests {
    static let header = #"{"format":2,"device":"pi","generation":1,"records":["#
    static let first = #"{"id":"00000000-0000-4000-8000-000000000001","type":"T"}"#
    static let second = #"{"id":"00000000-0000-4000-8000-000000000002","type":"T"}"#

    @Test("a comma after the last record's line makes the file invalid JSON, however it is split")
    func trailingComma() throws {
        // Given a file in SnapshotSync's layout, but with a comma after its last record
        let bytes = Array((Self.header + "\n" + Self.first + ",\n" + Self.second + ",\n]}\n").utf8)

        // When it is split, with ids and without, and read
        let byLines = SnapshotReader.split(bytes, findingIDs: false)
        let byStructure = SnapshotReader.split(bytes, findingIDs: true)
        let read = Result { () throws(SnapshotFileProblem) in try SnapshotReader.read(bytes: bytes, fileName: "pi.json") }

        // Then neither split takes it, and the file is skipped as invalid JSON at the `]`
        #expect(byLines == nil)
        #expect(byStructure == nil)
        guard case .failure(.invalidJSON(let error)) = read else {
            Issue.record("expected invalid JSON, got \(read)")
            return
        }
        #expect(error.reason.contains("']'"))
    }

    @Test("the layout SnapshotSync writes is split at its line feeds, one element per record line")
    func writtenLayout() throws {
        // Given files as SnapshotWriter lays them out: two records, one record, none
        let files = [
            (Self.header + "\n" + Self.first + ",\n" + Self.second + "\n]}\n", 2),
            (Self.header + "\n" + Self.first + "\n]}\n", 1),
            (Self.header + "\n]}\n", 0),
        ]
        for (text, count) in files {
            let bytes = Array(text.utf8)

            // When each is split without ids
            let split = try #require(SnapshotReader.split(bytes, findingIDs: false))

            // Then each record line is an element, and the file reads as it does whole
            #expect(split.elements.count == count)
            let lines = split.elements.map { String(decoding: bytes[$0], as: UTF8.self) }
            #expect(lines == Array([Self.first, Self.second].prefix(count)))
            #expect(try SnapshotReader.read(bytes: bytes, fileName: "pi.json").versions.count == count)
        }
    }
}
