import Foundation
@testable import SnapshotFormat
import Testing
import TestSupport

/// The fast paths (``StrictJSON/interchangeBytes(of:)``, the record scanner, ``ReadOnly/Record/interchangeLine``)
/// against the plain ones they replace: same acceptance, same bytes, same versions.
@Suite("fast paths agree with the plain paths")
struct FastPathTests {
    @Test("interchange bytes without a tree equal the tree's, for every jcs vector", arguments: Vectors.fileNames(in: "jcs/input"))
    func jcsVector(name: String) throws {
        let input = try Vectors.bytes("jcs/input", name)
        #expect(try StrictJSON.interchangeBytes(of: input) == StrictJSON.parse(input).interchangeBytes)
    }

    @Test("invalid documents are refused by both, at the same offset", arguments: Vectors.fileNames(in: "jcs/invalid"))
    func jcsInvalid(name: String) throws {
        let input = try Vectors.bytes("jcs/invalid", name)
        var plain: JSONParseError?
        var fast: JSONParseError?
        do { _ = try StrictJSON.parse(input) } catch { plain = error }
        do { _ = try StrictJSON.interchangeBytes(of: input) } catch { fast = error }
        #expect(plain != nil && fast != nil)
    }

    @Test("generated documents: same acceptance and the same bytes")
    func generatedDocuments() throws {
        var random = SplitMix64(seed: 7)
        for round in 0..<3000 {
            var text = ""
            RandomJSON.value(depth: 0, into: &text, using: &random)
            var bytes = Array(text.utf8)
            if round % 3 == 0, !bytes.isEmpty {
                // Damage some: drop, duplicate or change one byte.
                let at = Int.random(in: 0..<bytes.count, using: &random)
                switch round % 4 {
                case 0: bytes.remove(at: at)
                case 1: bytes.insert(bytes[at], at: at)
                default: bytes[at] = UInt8.random(in: 0x20...0x7E, using: &random)
                }
            }
            let plain = Result { try StrictJSON.parse(bytes).interchangeBytes }
            let fast = Result { try StrictJSON.interchangeBytes(of: bytes) }
            switch (plain, fast) {
            case (.success(let a), .success(let b)):
                #expect(a == b, "\(String(decoding: bytes, as: UTF8.self))")
            case (.failure, .failure):
                break
            default:
                Issue.record("acceptance differs for \(String(decoding: bytes, as: UTF8.self)): plain \(plain), fast \(fast)")
            }
        }
    }

    @Test("generated UTF-8, well-formed or not, in long strings: every path accepts exactly what Swift's validation accepts")
    func generatedUTF8() throws {
        let valid: [[UInt8]] = [
            Array("é".utf8), Array("Σπ".utf8), Array("Хлеб".utf8), Array("寿司".utf8), Array("€".utf8), Array("😀".utf8),
            [0xC2, 0x80], [0xDF, 0xBF], [0xE0, 0xA0, 0x80], [0xED, 0x9F, 0xBF], [0xEE, 0x80, 0x80], [0xEF, 0xBF, 0xBF],
            [0xF0, 0x90, 0x80, 0x80], [0xF4, 0x8F, 0xBF, 0xBF],
        ]
        let invalid: [[UInt8]] = [
            [0x80], [0xBF], [0xC0, 0xAF], [0xC1, 0xBF], [0xC2], [0xC3, 0xC3], [0xE0, 0x80, 0x80], [0xE4, 0xB8],
            [0xED, 0xA0, 0x80], [0xEE, 0x80], [0xF0, 0x80, 0x80, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xF5], [0xFF],
        ]
        var random = SplitMix64(seed: 8)
        var accepted = 0
        var refused = 0
        for round in 0..<4000 {
            var bytes: [UInt8] = []
            for _ in 0..<Int.random(in: 1...12, using: &random) {
                switch Int.random(in: 0..<40, using: &random) {
                case 0: bytes += invalid.randomElement(using: &random)!
                case 1..<20: bytes += valid.randomElement(using: &random)!
                default:
                    bytes += (0..<Int.random(in: 0...19, using: &random)).map { _ in UInt8.random(in: 0x61...0x7A, using: &random) }
                }
            }
            let expected = String(validating: bytes, as: UTF8.self)
            let document = [UInt8(ascii: "[")] + [0x22] + bytes + [0x22] + [UInt8(ascii: "]")]
            let parsed = Result { () throws(JSONParseError) in try StrictJSON.parse(document) }
            switch parsed {
            case .success(let value):
                #expect(value == .array([.string(expected ?? "(refused by Swift)")]), "round \(round): \(bytes)")
                accepted += 1
            case .failure(let error):
                #expect(expected == nil && error.reason == "invalid UTF-8", "round \(round): \(bytes)")
                refused += 1
            }
            let fast = Result { try StrictJSON.interchangeBytes(of: document) }
            #expect((try? fast.get()) == (try? parsed.get())?.interchangeBytes, "round \(round): \(bytes)")
            // In a record: as its type (the scanner's plain strings) and in its fields (interchange).
            var record = Array(#"{"format":1,"device":"laptop","generation":3,"records":[{"id":"0000AAAA-0000-4000-8000-000000000001","type":"#.utf8)
            record += [0x22] + bytes + [0x22]
            record += Array(#","lastModified":"2026-01-01T00:00:00.000Z","modifiedBy":"laptop","fields":{"t":"#.utf8)
            record += [0x22] + bytes + [0x22] + Array("}}]}".utf8)
            try expectSameReading(record, fileName: "laptop.json")
        }
        #expect(accepted > 1000 && refused > 300)
    }

    @Test("every vector input file reads the same through the scanner and through the tree")
    func vectorFiles() throws {
        var files = 0
        for (name, bytes) in Vectors.inputFiles() {
            try expectSameReading(bytes, fileName: name)
            files += 1
        }
        #expect(files > 20)
    }

    @Test("generated snapshot files with irregular and invalid records read the same both ways")
    func generatedFiles() throws {
        var random = SplitMix64(seed: 11)
        for round in 0..<400 {
            var records: [String] = []
            for _ in 0..<Int.random(in: 0...6, using: &random) {
                records.append(RandomRecord.text(using: &random))
            }
            var text = #"{"format":1,"device":"laptop","generation":3,"records":[\#(records.joined(separator: ","))]}"#
            if round % 5 == 0 { text = text.replacingOccurrences(of: ",", with: " ,\n ") }
            try expectSameReading(Array(text.utf8), fileName: "laptop.json")
        }
    }

    @Test("a record line reads back as the record, and equals the tree's serialization")
    func lines() throws {
        var random = SplitMix64(seed: 5)
        var checked = 0
        for _ in 0..<600 {
            let text = #"{"format":1,"device":"laptop","generation":3,"records":[\#(RandomRecord.text(using: &random))]}"#
            guard let reading = try? SnapshotReader.read(bytes: Array(text.utf8), fileName: "laptop.json"),
                let first = reading.versions.first
            else { continue }
            let record = ReadOnly.Record(version: first, conflicts: Array(reading.versions.dropFirst().filter { $0.id == first.id }))
            let line = record.interchangeLine
            #expect(line == JSONValue.object(record.normalForm).interchangeBytes, "\(text)")
            #expect(try SnapshotReader.record(fromLine: line) == record)
            checked += 1
        }
        #expect(checked > 200)
    }

    @Test("a version's RFC 8785 bytes, written without a tree, are the tree's: large integers in fields and other keys, e+ in strings")
    func canonicalBytesWithoutTree() throws {
        var random = SplitMix64(seed: 8)
        var records = (0..<600).map { _ in RandomRecord.text(using: &random) }
        let version = #""id":"3F2504E0-4F89-41D3-9A0C-0305E82C3301","type":"T","lastModified":"2026-11-22T10:00:00.000Z","modifiedBy":"laptop","versionVector":{"laptop":2}"#
        for value in ["1e20", "-1e20", "9007199254740993", "9007199254740992", "1e21", "123456789012345678901234", "1.5e300",
            "1e-7", #""e+""#, #""1e+20""#, "[1e20,2]", #"{"b":1e20,"a":"x"}"#]
        {
            records.append(#"{\#(version),"fields":{"n":\#(value)}}"#)
            records.append(#"{\#(version),"extra":\#(value),"fields":{"a":1}}"#)
            records.append(#"{\#(version),"zzz":\#(value)}"#)
        }
        var checked = 0
        for record in records {
            let text = #"{"format":1,"device":"laptop","generation":3,"records":[\#(record)]}"#
            guard let reading = try? SnapshotReader.read(bytes: Array(text.utf8), fileName: "laptop.json") else { continue }
            for version in reading.versions {
                #expect(version.canonicalBytes == JSONValue.object(version.normalForm).canonicalBytes, "\(text)")
                checked += 1
            }
        }
        #expect(checked > 300)
    }

    private func expectSameReading(_ bytes: [UInt8], fileName: String) throws {
        let plain = Result { () throws(SnapshotFileProblem) in try SnapshotReader.readPlain(bytes: bytes, fileName: fileName) }
        let fast = Result { () throws(SnapshotFileProblem) in try SnapshotReader.readFast(bytes: bytes, fileName: fileName) }
        switch (plain, fast) {
        case (_, .success(nil)):
            break  // the fast path declined: the plain path reads it
        case (.success(let a), .success(let b?)):
            #expect(a.versions == b.versions, "\(fileName): \(String(decoding: bytes, as: UTF8.self))")
            #expect(a.versions.map(\.canonicalBytes) == b.versions.map(\.canonicalBytes))
            #expect(a.problems == b.problems)
            #expect(a.warnings == b.warnings)
            #expect(a.recordCount == b.recordCount)
            #expect(a.device == b.device && a.generation == b.generation && a.writtenAt == b.writtenAt)
        case (.failure(let a), .failure(let b)):
            #expect(a == b)
        default:
            Issue.record("\(fileName): plain \(plain), fast \(fast): \(String(decoding: bytes, as: UTF8.self))")
        }
        // Split into elements, each read alone, then put together: the same again.
        guard let split = SnapshotReader.split(bytes) else { return }
        let elements = bytes.withUnsafeBufferPointer { input in
            split.elements.enumerated().map { index, range in
                SnapshotReader.readElement(of: UnsafeBufferPointer(rebasing: input[range]), at: index)
            }
        }
        let assembled = Result { () throws(SnapshotFileProblem) in
            try SnapshotReader.assemble(split, fileName: fileName, elements: elements)
        }
        switch (plain, assembled) {
        case (_, .success(nil)):
            break  // an element is not valid JSON: the whole file is read by `read`
        case (.success(let a), .success(let b?)):
            #expect(a.versions == b.versions && a.problems == b.problems && a.warnings == b.warnings)
            #expect(a.recordCount == b.recordCount && a.device == b.device && a.generation == b.generation)
        case (.failure(let a), .failure(let b)):
            #expect(a == b)
        default:
            Issue.record("\(fileName): plain \(plain), split \(assembled): \(String(decoding: bytes, as: UTF8.self))")
        }
    }
}


/// JSON text of every kind the format meets: whitespace, unsorted and escaped keys (BMP, private
/// use and supplementary characters, which sort differently in UTF-16), every number form.
enum RandomJSON {
    static let keys = [
        "a", "b", "name", "amount", "Z", "é", "e\u{301}", "\u{E000}", "\u{1F600}", "\u{FFFD}", "k\\\"q", "\\u00e9",
        "\\ud83d\\ude00", "tab\\t", "", "aa", "a\\u0000",
    ]
    static let strings = [
        "x", "Bananas 🍌", "\\\"quoted\\\"", "back\\\\slash", "line\\nbreak", "\\u0001\\u001f", "\\/", "\\u00e9", "é",
        "\\ud834\\udd1e", "\u{7F}", "\u{2028}", "日本語", "",
    ]
    static let numbers = [
        "0", "-0", "1", "-1", "10", "1.0", "1.50", "1e0", "1E+2", "-2.5e-3", "0.1", "123456789012345", "9007199254740991",
        "-9007199254740991", "1234567890123456", "1e20", "1.5e300", "1e-400", "0.000001", "1e-7", "100e-2", "33.46",
        "0.0000001", "0.0000015", "0.000001234", "123456789012.345", "1234567890123.4567", "-0.0", "0.10", "-33.5",
        "999999999999999.9", "0.1000000000000000055511151231257827", "12345678901234567890.5", "100000000000000000000.5",
        "0.30000000000000004", "5e-324", "1.0e1",
    ]

    static func value(depth: Int, into text: inout String, using random: inout SplitMix64) {
        let space = [" ", "", "", "\n", "\t"][Int.random(in: 0..<5, using: &random)]
        text += space
        switch depth > 3 ? Int.random(in: 2..<6, using: &random) : Int.random(in: 0..<6, using: &random) {
        case 0:
            text += "{"
            var used = Set<String>()
            for index in 0..<Int.random(in: 0...4, using: &random) {
                let key = keys.randomElement(using: &random)!
                if used.contains(key), Int.random(in: 0..<8, using: &random) != 0 { continue }
                used.insert(key)
                text += (index > 0 && text.last != "{" ? "," : "") + space + "\"\(key)\"" + space + ":"
                value(depth: depth + 1, into: &text, using: &random)
            }
            text += space + "}"
        case 1:
            text += "["
            for index in 0..<Int.random(in: 0...4, using: &random) {
                if index > 0 { text += "," }
                value(depth: depth + 1, into: &text, using: &random)
            }
            text += "]"
        case 2: text += "\"\(strings.randomElement(using: &random)!)\""
        case 3: text += numbers.randomElement(using: &random)!
        case 4: text += ["true", "false", "null"].randomElement(using: &random)!
        default: text += "\"\(strings.randomElement(using: &random)!)\""
        }
        text += space
    }
}

/// Record objects, mostly regular, some with every irregularity the scanner hands to the tree.
enum RandomRecord {
    static let ids = [
        "3F2504E0-4F89-41D3-9A0C-0305E82C3301", "3f2504e0-4f89-41d3-9a0c-0305e82c3301", "not-a-uuid",
        "00000000-0000-4000-8000-00000000000A",
    ]

    static func text(using random: inout SplitMix64) -> String {
        let id = ids.randomElement(using: &random)!
        var members: [String] = []
        func maybe(_ odds: Int, _ member: @autoclosure () -> String) {
            if Int.random(in: 0..<odds, using: &random) == 0 { members.append(member()) }
        }
        if Int.random(in: 0..<20, using: &random) != 0 { members.append(#""id":"\#(id)""#) }
        members.append(
            pick([
                #""type":"ShoppingItem""#, #""type":"Ünïcode \"t\"""#, #""type":"""#, #""type":7"#, #""type":null"#,
                // 128 Unicode scalars is the longest type (128 é: 256 bytes; 127 寿 and an escaped é), 129 too long.
                #""type":"\#(String(repeating: "é", count: 128))""#, #""type":"\#(String(repeating: "寿", count: 129))""#,
                #""type":"\#(String(repeating: "寿", count: 127))\u00e9""#,
            ], &random))
        let schemaVersions = [
            #""schemaVersion":2"#, #""schemaVersion":1.0"#, #""schemaVersion":0"#, #""schemaVersion":null"#,
            #""schemaVersion":"2""#,
        ]
        maybe(2, pick(schemaVersions, &random))
        let times = [
            #""lastModified":"2026-11-22T10:00:00.123Z""#, #""lastModified":"2026-11-22t11:00:00.1239+01:00""#,
            #""lastModified":"yesterday""#, #""lastModified":null"#, #""lastModified":"2026-11-22T10:00:60Z""#,
        ]
        maybe(1, pick(times, &random))
        let devices = [
            #""modifiedBy":"laptop""#, #""modifiedBy":"phone""#, #""modifiedBy":"Laptop""#, #""modifiedBy":null"#,
            #""modifiedBy":"a\u0062""#,
        ]
        maybe(2, pick(devices, &random))
        let vectors = [
            #""versionVector":{"laptop":2,"phone":1}"#, #""versionVector":{}"#, #""versionVector":{"laptop":1.0}"#,
            #""versionVector":{"laptop":0}"#, #""versionVector":{"Bad":1}"#, #""versionVector":null"#,
            #""versionVector":{"laptop":1,"laptop":2}"#,
            // Escaped device keys: the same device, a duplicate once decoded, not a device ID, a lone surrogate
            #""versionVector":{"l\u0061ptop":2,"ph\u006Fne":1}"#, #""versionVector":{"laptop":1,"l\u0061ptop":2}"#,
            #""versionVector":{"L\u0061ptop":1}"#, #""versionVector":{"l\ud800":1}"#,
            #""versionVector":{"phone":1,"l\u0061ptop\u0000":1}"#,
        ]
        maybe(1, pick(vectors, &random))
        maybe(3, pick([#""deleted":true"#, #""deleted":false"#, #""deleted":"yes""#, #""deleted":null"#], &random))
        maybe(1, #""fields":\#(fields(&random))"#)
        maybe(6, pick([#""extra":{"b":1,"a":[null]}"#, #""extra":null"#, #""zzz":"kept""#], &random))
        let entry = #"{"id":"\#(id)","type":"ShoppingItem","lastModified":"2026-11-22T09:00:00.000Z","modifiedBy":"phone","versionVector":{"phone":3},"fields":\#(fields(&random))}"#
        let conflicts = [
            #""conflicts":[\#(entry)]"#, #""conflicts":[]"#,
            #""conflicts":[{"id":"\#(ids.randomElement(using: &random)!)","type":"ShoppingItem","versionVector":{"phone":1}},{"type":"ShoppingItem"}]"#,
            #""conflicts":null"#, #""conflicts":[{"id":"\#(id)","type":"T","conflicts":[]}]"#, #""conflicts":"none""#,
        ]
        maybe(3, pick(conflicts, &random))
        members.shuffle(using: &random)
        if Int.random(in: 0..<30, using: &random) == 0 { return "[\(members.joined(separator: ","))]" }
        return "{" + members.joined(separator: ",") + "}"
    }

    /// Mostly the first choice, sometimes any other.
    private static func pick(_ choices: [String], _ random: inout SplitMix64) -> String {
        Int.random(in: 0..<3, using: &random) == 0 ? choices.randomElement(using: &random)! : choices[0]
    }

    private static func fields(_ random: inout SplitMix64) -> String {
        var text = ""
        repeat {
            text = ""
            RandomJSON.value(depth: 1, into: &text, using: &random)
        } while !text.trimmingCharacters(in: .whitespacesAndNewlines).hasPrefix("{")
        return text
    }
}

/// ``StrictJSONParser/endOfElement(from:)``, which skips eight bytes at a time inside strings and numbers,
/// against the same walk one byte at a time.
@Suite("finding an element's end")
struct EndOfElementTests {
    /// The end found one byte at a time: what the word-at-a-time walk must find.
    static func reference(_ bytes: [UInt8], from start: Int) -> Int? {
        var at = start
        var depth = 0
        while at < bytes.count {
            let byte = bytes[at]
            switch byte {
            case UInt8(ascii: "\""):
                at += 1
                while at < bytes.count, bytes[at] != UInt8(ascii: "\"") { at += bytes[at] == UInt8(ascii: "\\") ? 2 : 1 }
                guard at < bytes.count else { return nil }
                at += 1
                if depth == 0 { return at }
                continue
            case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                if depth == 0 { return at }
                depth -= 1
                if depth == 0 { return at + 1 }
            case UInt8(ascii: ","): if depth == 0 { return at }
            default: if depth == 0, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { return at }
            }
            at += 1
        }
        return depth == 0 && at > start ? at : nil
    }

    static func found(_ bytes: [UInt8], from start: Int) -> Int? {
        bytes.withUnsafeBufferPointer { StrictJSONParser($0).endOfElement(from: start) }
    }

    @Test("generated values, whole and cut at every byte, from every start")
    func generated() {
        var random = SplitMix64(seed: 11)
        for _ in 0..<400 {
            var text = "["
            for index in 0..<Int.random(in: 1...3, using: &random) {
                if index > 0 { text += "," }
                RandomJSON.value(depth: 0, into: &text, using: &random)
            }
            text += "],[{\"a\":\"b\"}]"
            let bytes = Array(text.utf8)
            for start in bytes.indices {
                #expect(Self.found(bytes, from: start) == Self.reference(bytes, from: start), "\(text) from \(start)")
            }
            for cut in 1..<bytes.count {
                let prefix = Array(bytes[..<cut])
                #expect(Self.found(prefix, from: 0) == Self.reference(prefix, from: 0), "\(text) cut at \(cut)")
            }
        }
    }

    @Test("every bracket, brace, quote and backslash at every offset of a word")
    func everyOffset() {
        let specials: [UInt8] = [0x7B, 0x5B, 0x7D, 0x5D, 0x22, 0x3B, 0x1B, 0xFB, 0xDD, 0x5C, 0x2C, 0x20]
        for offset in 0..<17 {
            for special in specials {
                for inner in [[], [UInt8(ascii: "1")], Array(#""x""#.utf8)] {
                    var body = Array(repeating: UInt8(ascii: "7"), count: offset)
                    body.append(special)
                    // Balanced where the special byte opens or quotes, so that the element still ends.
                    switch special {
                    case 0x7B: body += inner + [0x7D]
                    case 0x5B: body += inner + [0x5D]
                    case 0x22: body += [0x22]
                    default: break
                    }
                    body += Array(repeating: UInt8(ascii: "8"), count: 9)
                    let bytes = [UInt8(ascii: "[")] + body + [UInt8(ascii: "]"), UInt8(ascii: ",")] + body
                    #expect(Self.found(bytes, from: 0) == Self.reference(bytes, from: 0), "\(bytes)")
                }
            }
        }
    }
}
