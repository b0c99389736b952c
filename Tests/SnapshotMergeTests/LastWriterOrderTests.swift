import SnapshotFormat
import SnapshotMerge
import Testing

/// The last-writer order and what "the same version" means.
@Suite("Last-writer order and version identity")
struct LastWriterOrderTests {
    /// Asserts `lower` sorts strictly before `higher`, both ways round, and that merging them as
    /// vector-less versions keeps `higher`.
    func expectOrder(_ lower: ReadOnly.Version, _ higher: ReadOnly.Version, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(LastWriterOrder.compare(lower, higher) == -1, sourceLocation: sourceLocation)
        #expect(LastWriterOrder.compare(higher, lower) == 1, sourceLocation: sourceLocation)
        #expect(LastWriterOrder.precedes(lower, higher) && !LastWriterOrder.precedes(higher, lower), sourceLocation: sourceLocation)
        #expect(LastWriterOrder.greatest([lower, higher]) == higher && LastWriterOrder.greatest([higher, lower]) == higher,
                sourceLocation: sourceLocation)
        #expect(ContractReading.order(lower, higher) == -1, "the test's own reading disagrees", sourceLocation: sourceLocation)
    }

    @Test("No lastModified is least; otherwise the later millisecond wins whatever else differs")
    func lastModifiedFirst() {
        expectOrder(Make.version(at: nil, by: "zz", deleted: true), Make.version(at: -62_000_000_000_000, by: "a"))
        expectOrder(Make.version(at: 1, by: "zzz", deleted: true, fields: #"{"z":9}"#), Make.version(at: 2, by: "a"))
    }

    @Test("At equal timestamps, modifiedBy decides by UTF-8 bytes; none is least; a prefix sorts first",
          arguments: [(nil, "a"), ("a", "a-b"), ("a-b", "a.b"), ("a.b", "a0"), ("a0", "a_b"), ("a_b", "ab"), ("ab", "b")] as [(String?, String)])
    func modifiedByBytes(_ lower: String?, _ higher: String) {
        expectOrder(Make.version(at: 5, by: lower, deleted: true, fields: #"{"z":1}"#), Make.version(at: 5, by: higher))
    }

    @Test("At equal timestamp and modifiedBy, a tombstone beats a live version")
    func deletedBeatsLive() {
        expectOrder(Make.version(at: 5, by: "a", vector: ["a": 9], fields: #"{"z":1}"#), Make.version(at: 5, by: "a", vector: ["a": 1], deleted: true))
        expectOrder(Make.version(at: nil, fields: #"{"z":1}"#), Make.version(at: nil, deleted: true))
    }

    @Test("Last, the JCS bytes of the normal form decide")
    func jcsBytes() {
        // {"n":1} beats {"n":10}: '}' (0x7D) > '0' (0x30)
        expectOrder(Make.version(at: 5, by: "a", fields: #"{"n":10}"#), Make.version(at: 5, by: "a", fields: #"{"n":1}"#))
        // "Bananas" beats "Apples"
        expectOrder(Make.version(at: 5, by: "a", fields: #"{"s":"Apples"}"#), Make.version(at: 5, by: "a", fields: #"{"s":"Bananas"}"#))
        // a vector-less version beats a vectored one: its form ends where the other has ,"versionVector"
        expectOrder(Make.version(at: 5, by: "a", vector: ["a": 1]), Make.version(at: 5, by: "a"))
        // an unknown key takes part like any other key: here the bare form's '}' beats ',"zz"'
        expectOrder(Make.version(at: 5, by: "a", unknown: #"{"zz":1}"#), Make.version(at: 5, by: "a"))
        expectOrder(Make.version(at: 5, by: "a", unknown: #"{"x":1}"#), Make.version(at: 5, by: "a", unknown: #"{"x":2}"#))
    }

    @Test("The same version however spelled compares equal; conflicts are ordered greatest first")
    func equalAndGreatestFirst() throws {
        // Given one version spelled with defaults, a lower-case id, an offset, 2.0 and nulls
        let spelled = try ReadOnly.Version(validating: Make.object("""
            {"id":"3f2504e0-4f89-41d3-9a0c-0305e82c3301","type":"Note","schemaVersion":2.0,"deleted":false,
             "lastModified":"2026-11-22T11:00:00.0001+01:00","modifiedBy":"a","versionVector":{"a":1.0},
             "fields":{"n":-0},"conflicts":[],"x":null}
            """))
        let bare = Make.version(schemaVersion: 2, at: 0, by: "a", vector: ["a": 1], fields: #"{"n":0}"#)
        #expect(spelled == bare && spelled.hashValue == bare.hashValue)
        #expect(LastWriterOrder.compare(spelled, bare) == 0)
        #expect(spelled.canonicalBytes == bare.canonicalBytes)

        let versions = (0..<6).map { Make.version(at: Int64($0 % 3), by: ["a", "b"][$0 % 2], vector: ["d\($0)": 1]) }
        let sorted = LastWriterOrder.greatestFirst(versions.reversed())
        #expect(zip(sorted, sorted.dropFirst()).allSatisfy { LastWriterOrder.compare($0, $1) == 1 })
    }

    @Test("Version equality is byte-exact: an NFC and an NFD type (or field) are different versions")
    func byteExactEquality() {
        // Given "Café" in NFC (U+00E9) and NFD (e + U+0301): equal as Swift Strings, different bytes
        let nfc = "Caf\u{E9}", nfd = "Cafe\u{301}"
        #expect(nfc == nfd && Array(nfc.utf8) != Array(nfd.utf8))
        let a = Make.version(type: nfc, at: 5, by: "a")
        let b = Make.version(type: nfd, at: 5, by: "a")
        let c = Make.version(at: 5, by: "a", fields: #"{"s":"Caf\u00e9"}"#)
        let d = Make.version(at: 5, by: "a", fields: #"{"s":"Cafe\u0301"}"#)

        // Then they are different versions, with different content and a strict order
        #expect(a != b && c != d)
        #expect(Set([a, b, c, d]).count == 4)
        #expect(!a.hasSameContent(as: b) && !c.hasSameContent(as: d))
        #expect(LastWriterOrder.compare(a, b) != 0 && LastWriterOrder.compare(c, d) != 0)
        // and merging them as concurrent versions keeps both; as vector-less ones, the greater by bytes
        let concurrent = RecordMerge.merge([
            Make.version(type: nfc, at: 5, by: "a", vector: ["a": 1]), Make.version(type: nfd, at: 5, by: "a", vector: ["b": 1]),
        ])
        #expect(concurrent?.conflicts.count == 1)
        #expect(RecordMerge.merge([a, b])?.version == a, "NFC's 0xC3 byte sorts after NFD's 'e'")
        #expect(RecordMerge.merge([b, a]) == RecordMerge.merge([a, b]))
        // and identical vectors keep only the greater, whichever comes first
        let x = Make.version(at: 5, by: "a", vector: ["a": 1], fields: #"{"s":"Caf\u00e9"}"#)
        let y = Make.version(at: 5, by: "a", vector: ["a": 1], fields: #"{"s":"Cafe\u0301"}"#)
        #expect(RecordMerge.merge([x, y]) == ReadOnly.Record(version: x))
        #expect(RecordMerge.merge([y, x]) == ReadOnly.Record(version: x))
    }
}
