import Foundation
import SnapshotFormat
import Testing

/// `RecordsHalves`: two readers find a big file's elements, each in one half, and together give
/// exactly what one reader finds, whether the second reader's guess at an element's start was
/// right or not.
@Suite("Format: the elements of a big file found in two halves at once")
struct RecordsHalvesTests {
    static func id(_ n: Int) -> String { String(format: "%08X-0000-4000-8000-%012d", n &* 2_654_435_761 & 0xFFFF_FFFF, n) }

    /// A record whose fields hold arrays of objects (`},{` inside a record) and, for some, a
    /// string that spells what a record's start looks like.
    static func record(_ n: Int, indent: String?) -> String {
        let fields =
            n % 7 == 0
            ? #"{"note": "looks like a record: },{\"id\":\"\#(id(n + 1))\", and [{ \" ]", "n": \#(n)}"#
            : #"{"history": [{"by": "a", "n": \#(n)},{"by": "b"}], "tags": ["x", {"y": [1, 2]}]}"#
        let members = [
            #""id": "\#(id(n))""#, #""type": "Item""#, #""lastModified": "2026-01-01T00:00:00.000Z""#,
            #""modifiedBy": "tool""#, #""versionVector": {"tool": 1}"#, #""fields": \#(fields)"#,
        ]
        guard let indent else { return "{" + members.joined(separator: ",") + "}" }
        return "{\n" + members.map { indent + indent + $0 }.joined(separator: ",\n") + "\n" + indent + "}"
    }

    static func document(count: Int, indent: String?, recordsLast: Bool = true) -> [UInt8] {
        let records = (0..<count).map { record($0, indent: indent) }
        let separator = indent.map { ",\n" + $0 } ?? ","
        let array = "[" + (indent.map { "\n" + $0 } ?? "") + records.joined(separator: separator) + "]"
        let header = #""format": 1, "device": "tool", "generation": 3, "x-big": [\#(String(repeating: "[1,{}],", count: 200))0]"#
        let text = recordsLast ? "{\(header), \"records\": \(array)}" : "{\"records\": \(array), \(header)}"
        return Array(text.utf8)
    }

    /// The elements found in halves (nil when not cut), and as one reader finds them.
    static func both(_ bytes: [UInt8]) -> (halves: [Range<Int>]?, single: [Range<Int>]?, cut: Bool) {
        let single = SnapshotReader.split(bytes)?.elements
        guard let halves = bytes.withUnsafeBufferPointer({ RecordsHalves.find(in: $0, minimumBytes: 0) }) else {
            return (nil, single, false)
        }
        let first = bytes.withUnsafeBufferPointer { halves.firstHalf(of: $0) }
        let second = bytes.withUnsafeBufferPointer { halves.secondHalf(of: $0) }
        guard let joined = halves.joined(first, second) else { return (nil, single, true) }
        let split = SnapshotReader.split(bytes, found: (halves.arrayOpen, joined))
        #expect(split?.ids == SnapshotReader.split(bytes)?.ids)
        return (split?.elements, single, true)
    }

    @Test("compact and indented files, records first or last: the same elements as one reader", arguments: [
        (nil, true), (nil, false), ("  ", true), ("\t", false),
    ] as [(String?, Bool)])
    func sameElements(indent: String?, recordsLast: Bool) {
        for count in [2, 3, 50, 701] {
            let bytes = Self.document(count: count, indent: indent, recordsLast: recordsLast)
            let (halves, single, cut) = Self.both(bytes)
            #expect(single?.count == count)
            // (Two records and a long header after them: the middle is past the array, no cut.)
            #expect(cut || count < 50)
            if cut { #expect(halves == single) }
        }
    }

    @Test("a guess that lands inside a string or a nested array is caught: the first half reads on alone")
    func wrongGuess() {
        // Every record spells a record's start inside a string, so the guess past the middle is
        // often inside one; the halves must agree with one reader all the same.
        var wrongGuesses = 0
        for count in 20..<60 {
            let records = (0..<count).map {
                #"{"id": "\#(Self.id($0))", "fields": {"a": [{"id": "x"},{"id": "y"}], "s": ",{\"id\": \"z\"}"}}"#
            }
            let bytes = Array(#"{"format": 1, "device": "tool", "records": [\#(records.joined(separator: ","))]}"#.utf8)
            let cut = bytes.withUnsafeBufferPointer { RecordsHalves.find(in: $0, minimumBytes: 0) }
            let first = cut.flatMap { cut in bytes.withUnsafeBufferPointer { cut.firstHalf(of: $0) } }
            if first?.reachedCut == false { wrongGuesses += 1 }
            let (halves, single, _) = Self.both(bytes)
            #expect(single?.count == count)
            #expect(halves == single)
        }
        #expect(wrongGuesses > 0, "no guess was wrong: the test does not test the check")
    }

    @Test("a truncated or broken file gives nothing in halves, as it gives nothing to one reader")
    func broken() {
        let bytes = Self.document(count: 40, indent: nil)
        for cut in [bytes.count - 2, bytes.count / 2, bytes.count * 3 / 4] {
            var broken = Array(bytes[..<cut])
            let (halves, single, _) = Self.both(broken)
            #expect(single == nil)
            #expect(halves == nil)
            broken = bytes
            broken[cut] = UInt8(ascii: "]")
            let again = Self.both(broken)
            #expect(again.halves == again.single)
        }
    }

    @Test("a small file, or one without a records array, is not cut")
    func notCut() {
        let bytes = Self.document(count: 40, indent: nil)
        #expect(bytes.withUnsafeBufferPointer { RecordsHalves.find(in: $0) } == nil)  // under 8 MiB
        let noRecords = Array(#"{"format": 1, "device": "tool", "other": [{"id": 1},{"id": 2}]}"#.utf8)
        #expect(noRecords.withUnsafeBufferPointer { RecordsHalves.find(in: $0, minimumBytes: 0) } == nil)
        let oneRecord = Self.document(count: 1, indent: nil)
        #expect(oneRecord.withUnsafeBufferPointer { RecordsHalves.find(in: $0, minimumBytes: 0) } == nil)
    }
}
