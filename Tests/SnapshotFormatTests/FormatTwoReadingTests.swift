import SnapshotFormat
import Testing

@Suite("Format 2: parts, keys and signature placement")
struct FormatTwoReadingTests {
    static let idIn3F = "3F2504E0-4F89-41D3-9A0C-0305E82C3301"
    static let idIn7C = "7C9E6679-7425-40DE-944B-E07FC1F90AE7"
    static let key = "ed25519:" + String(repeating: "B", count: 43) + "="
    static let signature = "ed25519:" + String(repeating: "A", count: 86) + "=="

    static func record(_ id: String) -> String {
        #"{"id":"\#(id)","type":"Note","lastModified":"2026-11-22T10:00:00.000Z","modifiedBy":"laptop","versionVector":{"laptop":1}}"#
    }

    static func file(format: Int = 2, device: String = "laptop", part: String? = nil, records: [String], tail: String = "")
        -> [UInt8]
    {
        let partMember = part.map { #","part":"\#($0)""# } ?? ""
        return Array(
            (#"{"format":\#(format),"device":"\#(device)"\#(partMember),"generation":3,"records":["#
                + records.joined(separator: ",") + "]" + tail + "}").utf8)
    }

    @Test("a prefix reads 1 to 4 upper-case hex digits and nothing else", arguments: ["3", "3F", "ABCD", "0000"])
    func validPrefixes(text: String) {
        #expect(PartPrefix(text)?.rawValue == text)
    }

    @Test("a prefix refuses lower case, other letters, nothing and five digits", arguments: ["3f", "G", "", "12345", " 3"])
    func invalidPrefixes(text: String) {
        #expect(PartPrefix(text) == nil)
    }

    @Test("a prefix holds exactly the ids that start with it, in any case")
    func containment() throws {
        let id = try #require(RecordID(Self.idIn3F.lowercased()))
        #expect(PartPrefix("3")!.contains(id))
        #expect(PartPrefix("3F25")!.contains(id))
        #expect(!PartPrefix("3E")!.contains(id))
        #expect(PartPrefix.whole.contains(id))
        #expect(PartPrefix(of: id, digits: 2) == PartPrefix("3F"))
    }

    @Test("prefixes sort as the ids they hold: a parent right before its children")
    func order() {
        let prefixes = ["4", "3F", "3", "30", "", "3FF"].map { $0.isEmpty ? PartPrefix.whole : PartPrefix($0)! }
        #expect(prefixes.sorted().map(\.rawValue) == ["", "3", "30", "3F", "3FF", "4"])
        #expect(PartPrefix("3F")!.children.count == 16)
        #expect(PartPrefix("3F")!.children.first?.parent == PartPrefix("3F"))
        #expect(PartPrefix("ABCD")!.children.isEmpty)
        #expect(PartPrefix("3F")!.isWithin(PartPrefix("3")!))
        #expect(!PartPrefix("3")!.isWithin(PartPrefix("3F")!))
    }

    @Test("a part's records are read, and a record outside the part is rejected on its own")
    func recordOutsidePart() throws {
        // Given part 3F of laptop holding a record of 3F and one of 7C
        let bytes = Self.file(part: "3F", records: [Self.record(Self.idIn3F), Self.record(Self.idIn7C)])

        // When it is read under its part name
        let reading = try SnapshotReader.read(bytes: bytes, fileName: "laptop.3F.json")

        // Then the 3F record merges and the 7C one is rejected, with its reason
        #expect(reading.part == PartPrefix("3F"))
        #expect(reading.role == .own)
        #expect(reading.versions.map(\.id.rawValue) == [Self.idIn3F])
        #expect(reading.problems.count == 1)
        #expect(reading.problems.first?.description.contains("not in part 3F") == true)
    }

    @Test("a part is accepted only under its part name or a copy of it")
    func partNames() throws {
        let part = Self.file(part: "3F", records: [Self.record(Self.idIn3F)])
        #expect(try SnapshotReader.read(bytes: part, fileName: "laptop.3F.sync-conflict-20261122-101010-ABCDEFG.json").role == .copy)
        #expect(try SnapshotReader.read(bytes: part, fileName: "laptop.3F (1).json").role == .copy)
        for name in ["laptop.json", "laptop.3E.json", "laptop.3f.json", "laptop (1).json"] {
            #expect(throws: SnapshotFileProblem.self) { try SnapshotReader.read(bytes: part, fileName: name) }
        }
        // A file without a part is not accepted under a part's name.
        let whole = Self.file(records: [Self.record(Self.idIn3F)])
        #expect(throws: SnapshotFileProblem.self) { try SnapshotReader.read(bytes: whole, fileName: "laptop.3F.json") }
    }

    @Test("format 1 reads part, key and signature as unknown keys, ignored")
    func formatOneIgnoresFormatTwoKeys() throws {
        let bytes = Self.file(
            format: 1, device: "pi", part: "3F", records: [Self.record(Self.idIn7C)],
            tail: #", "signature": 1, "key": false"#)
        let reading = try SnapshotReader.read(bytes: bytes, fileName: "pi.json")
        #expect(reading.format == 1)
        #expect(reading.part == .whole)
        #expect(reading.key == nil && reading.signature == nil)
        #expect(reading.versions.count == 1)
    }

    @Test("a signature exactly at the end is found, with the bytes it signs")
    func signaturePlacement() throws {
        let body = Self.file(records: [Self.record(Self.idIn3F)], tail: #","key":"\#(Self.key)""#)
        // "...}" without its closing brace, then the signature member, then one line feed.
        let signed = Array(body.dropLast()) + Array(#","signature":"\#(Self.signature)"}"#.utf8) + [0x0A]
        let reading = try SnapshotReader.read(bytes: signed, fileName: "laptop.json")
        #expect(reading.key?.bytes.count == 32)
        #expect(reading.signature?.signedCount == body.count - 1)
        #expect(reading.signature?.bytes == [UInt8](repeating: 0, count: 64))
    }

    @Test(
        "a signature anywhere else, written another way, or without a key makes the file invalid",
        arguments: [
            #","signature":"SIG","key":"KEY"}"#,  // not last
            #", "signature":"SIG","key":"KEY"}"#.replacingOccurrences(of: ",\"key\":\"KEY\"", with: ""),  // a space
            #","signature": "SIG"}"#,  // a space after the colon
            #","signature":"SIG"}"#,  // no key
            #","key":"KEY","signature":"ed25519:AAAA"}"#,  // too short
            #","key":"KEY","signature":"SIG"}"# + "\n\n",  // two line feeds
            #","key":"ed25519:AAAA","signature":"SIG"}"#,  // a key of 3 bytes
        ])
    func misplacedSignatures(tail: String) {
        let text =
            #"{"format":2,"device":"laptop","generation":3,"records":[]"#
            + tail.replacingOccurrences(of: "SIG", with: Self.signature).replacingOccurrences(of: "KEY", with: Self.key)
        #expect(throws: SnapshotFileProblem.self) { try SnapshotReader.read(bytes: Array(text.utf8), fileName: "laptop.json") }
    }

    @Test("\"signature\": null and \"key\": null are no signature and no key, as null is no value elsewhere: the file is unsigned", arguments: [
        #","signature":null"#, #", "key": null, "signature": null"#, #", "signature": null, "key": null"#,
    ])
    func nullSignature(tail: String) throws {
        let text = #"{"format":2,"device":"laptop","generation":3,"records":[\#(Self.record(Self.idIn3F))]"# + tail + "}"
        let reading = try SnapshotReader.read(bytes: Array(text.utf8), fileName: "laptop.json")
        #expect(reading.key == nil && reading.signature == nil)
        #expect(reading.versions.count == 1)
    }

    @Test("a newer format names the formats this version reads")
    func newerFormat() {
        let bytes = Self.file(format: 3, records: [])
        #expect(throws: SnapshotFileProblem.newerFormat(3)) { try SnapshotReader.read(bytes: bytes, fileName: "laptop.json") }
        #expect(SnapshotFileProblem.newerFormat(3).description.contains("1 and 2"))
    }

    @Test("a written part reads back as the same part")
    func writtenPart() throws {
        let id = try #require(RecordID(Self.idIn3F))
        let version = ReadOnly.Version(id: id, type: "Note", modifiedBy: DeviceID("laptop"))
        var snapshot = ReadOnly.Snapshot(
            device: DeviceID("laptop")!, generation: 9, writtenAt: Timestamp(milliseconds: 0),
            records: [ReadOnly.Record(version: version)])
        snapshot.part = PartPrefix("3F")!
        let reading = try SnapshotReader.read(bytes: SnapshotWriter.bytes(of: snapshot), fileName: "laptop.3F.json")
        #expect(reading.part == PartPrefix("3F"))
        #expect(reading.format == 2)
        #expect(reading.versions == [version])
    }
}

@Suite("Splitting a file into its record elements")
struct SplitTests {
    static func snapshot(_ count: Int) -> [UInt8] {
        let records = (0..<count).map { n in
            ReadOnly.Record(
                version: ReadOnly.Version(
                    id: RecordID(String(format: "%08X-0000-4000-8000-%012d", n * 7919, n))!, type: "Note",
                    fields: JSONObject([("text", .string("line \(n)\nwith a break and \"quotes\""))])))
        }
        return SnapshotWriter.bytes(
            of: ReadOnly.Snapshot(device: DeviceID("laptop")!, generation: 1, writtenAt: nil, records: records))
    }

    @Test("a file SnapshotSync wrote is split at its line feeds exactly where its structure says", arguments: [0, 1, 2, 50])
    func linesAgreeWithStructure(count: Int) throws {
        let bytes = Self.snapshot(count)
        let structural = try #require(SnapshotReader.split(bytes))
        let byLines = try #require(SnapshotReader.split(bytes, findingIDs: false))
        #expect(byLines.elements == structural.elements)
        #expect(structural.ids.allSatisfy { $0 != nil } && byLines.ids.allSatisfy { $0 == nil })
    }

    @Test(
        "a file of any other layout is split by its structure",
        arguments: [
            #"{"format":1,"device":"laptop","generation":1,"records":[{"id":"00000000-0000-4000-8000-000000000001","type":"N",\#n"fields":{}},{"id":"00000000-0000-4000-8000-000000000002","type":"N"}]}"#,
            #"{"format":1,"device":"laptop","generation":1,"records":[\#n{"id":"00000000-0000-4000-8000-000000000001","type":"N",\#n"fields":{}}\#n]}"#,
            #"{"format":1,"device":"laptop","generation":1,"records":[\#n{"id":"00000000-0000-4000-8000-000000000001","type":"N"} ,\#n{"id":"00000000-0000-4000-8000-000000000002","type":"N"}\#n]}"#,
        ])
    func otherLayouts(text: String) throws {
        let bytes = Array(text.utf8)
        let structural = try #require(SnapshotReader.split(bytes))
        #expect(SnapshotReader.split(bytes, findingIDs: false)?.elements == structural.elements)
        #expect(structural.elements.count == (text.contains("000000000002") ? 2 : 1))
    }
}
