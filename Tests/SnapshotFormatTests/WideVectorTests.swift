@testable import SnapshotFormat
import Testing

/// A version vector of very many devices is read in one pass by the record scanner, whose check
/// for a device named twice used to compare each device with every one before it (a vector of
/// 100,000 devices took 35 s; docs/hostile-input.md). The tests assert what is read and by which
/// path; the times are in docs/fuzzing.md.
@Suite("wide version vectors")
struct WideVectorTests {
    static let width = 100_000
    static let id = "3F2504E0-4F89-41D3-9A0C-0305E82C3301"

    /// Devices `d0` … `d<width - 1>`, from the last to the first (not in the vector's order).
    static let devices = (0..<width).reversed().map { "d\($0)" }

    /// The record, each device with a count of its number plus one.
    static func record(_ devices: [String]) -> [UInt8] {
        var text = #"{"id":"\#(id)","type":"Note","versionVector":{"#
        text += devices.map { #""\#($0)":\#(Int($0.dropFirst())! + 1)"# }.joined(separator: ",")
        text += "}}"
        return Array(text.utf8)
    }

    static func file(_ devices: [String]) -> [UInt8] {
        Array(#"{"format":2,"device":"pi","generation":1,"records":[\#n"#.utf8) + record(devices) + Array("\n]}\n".utf8)
    }

    @Test("a vector of 100,000 devices is read by the scanner, every device with its count")
    func wideVector() throws {
        // Given a record whose vector names 100,000 devices
        let record = Self.record(Self.devices)

        // When the record scanner reads it
        var versions: [ReadOnly.Version] = []
        let isRegular = try record.withUnsafeBufferPointer { input in
            var parser = StrictJSONParser(input)
            return try parser.scanRecord(into: &versions, depth: 2)
        }

        // Then the scanner reads it itself (the tree is not needed), with every count in device order
        #expect(isRegular)
        let entries = try #require(versions.first).versionVector.entries
        #expect(entries.count == Self.width)
        #expect(entries.map(\.device.rawValue) == Self.devices.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
        #expect(entries.allSatisfy { $0.count == Int64($0.device.rawValue.dropFirst())! + 1 })
        // And the whole file reads the same by the fast path and by the tree
        let fast = try #require(try SnapshotReader.readFast(bytes: Self.file(Self.devices), fileName: "pi.json"))
        let plain = try SnapshotReader.readPlain(bytes: Self.file(Self.devices), fileName: "pi.json")
        #expect(fast.versions == versions && plain.versions == versions)
    }

    @Test("a device named twice among 100,000 makes the file invalid JSON, as a duplicate key anywhere does")
    func repeatedDevice() throws {
        // Given a vector of 100,000 devices that names d4242 a second time, at its end
        let bytes = Self.file(Self.devices + ["d4242"])

        // When the file is read as syncd reads it (the fast path first), and by the tree alone
        let read = Result { () throws(SnapshotFileProblem) in try SnapshotReader.read(bytes: bytes, fileName: "pi.json") }
        let plain = Result { () throws(SnapshotFileProblem) in
            try SnapshotReader.readPlain(bytes: bytes, fileName: "pi.json")
        }

        // Then both skip it as invalid JSON, for the same duplicate key
        guard case .failure(.invalidJSON(let error)) = read, case .failure(.invalidJSON(let plainError)) = plain else {
            Issue.record("expected invalid JSON both ways, got \(read) and \(plain)")
            return
        }
        #expect(error.reason.contains("duplicate key"))
        #expect(plainError.reason.contains("duplicate key"))
    }
}
