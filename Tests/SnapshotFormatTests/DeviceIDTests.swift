import Foundation
import SnapshotFormat
import Testing

@Suite("Device IDs")
struct DeviceIDTests {
    @Test("Valid device IDs are accepted as written", arguments: [
        "laptop", "a", "9lives", "0", "pi.kitchen", "tablet_1", "my-phone", "a.", "a-", "a_", "x..y",
        String(repeating: "x", count: 64), "0123456789abcdefghijklmnopqrstuvwxyz._-",
    ])
    func valid(text: String) throws {
        let id = try #require(DeviceID(text))
        #expect(id.rawValue == text)
        #expect(id.description == text)
        #expect(DeviceID.validationProblem(text) == nil)
        #expect(Array(text.utf8).withUnsafeBufferPointer { DeviceID(utf8: $0) } == id)
    }

    @Test("Invalid device IDs are refused with a sentence for a person", arguments: [
        ("", "is empty"),
        (String(repeating: "x", count: 65), "is longer than 64 characters"),
        (String(repeating: "é", count: 65), "is longer than 64 characters"),
        (".laptop", "must start with a letter or digit"),
        ("-dash", "must start with a letter or digit"),
        ("_x", "must start with a letter or digit"),
        (".", "must start with a letter or digit"),
        ("Laptop", "has 'L': device IDs use only a-z 0-9 . _ - (lower case)"),
        ("lapTop", "has 'T': device IDs use only a-z 0-9 . _ - (lower case)"),
        ("-Laptop", "has 'L': device IDs use only a-z 0-9 . _ - (lower case)"),
        ("bad name", "has U+0020: device IDs use only a-z 0-9 . _ - (lower case)"),
        ("tab\there", "has U+0009: device IDs use only a-z 0-9 . _ - (lower case)"),
        ("läptop", "has 'ä' (U+00E4): device IDs use only a-z 0-9 . _ - (lower case)"),
        ("laptop/x", "has '/': device IDs use only a-z 0-9 . _ - (lower case)"),
        ("ｌaptop", "has 'ｌ' (U+FF4C): device IDs use only a-z 0-9 . _ - (lower case)"),
        ("a\u{200B}b", "has U+200B: device IDs use only a-z 0-9 . _ - (lower case)"),
    ])
    func invalid(text: String, problem: String) {
        #expect(DeviceID(text) == nil)
        #expect(DeviceID.validationProblem(text) == problem)
        #expect(Array(text.utf8).withUnsafeBufferPointer { DeviceID(utf8: $0) } == nil)
    }

    @Test("64 characters is the longest device ID; 65 is too long")
    func lengthLimit() {
        #expect(DeviceID(String(repeating: "a", count: 63) + "9") != nil)
        #expect(DeviceID(String(repeating: "a", count: 64) + "9") == nil)
        for (count, valid) in [(64, true), (65, false)] {
            #expect(Array(repeating: UInt8(ascii: "a"), count: count).withUnsafeBufferPointer { DeviceID(utf8: $0) != nil } == valid)
        }
        // A combining mark counts on its own, so it cannot slip past the limit.
        #expect(DeviceID.validationProblem(String(repeating: "a", count: 64) + "\u{301}") == "is longer than 64 characters")
    }

    @Test("Device IDs order by their UTF-8 bytes")
    func ordering() throws {
        let texts = ["b", "a_b", "a.b", "a-b", "a", "9", "a0", "aa"]
        let ids = try texts.map { try #require(DeviceID($0)) }
        #expect(ids.sorted().map(\.rawValue) == ["9", "a", "a-b", "a.b", "a0", "a_b", "aa", "b"])
        #expect(try #require(DeviceID("a")) < #require(DeviceID("a-")))
        #expect(!(try #require(DeviceID("a")) < #require(DeviceID("a"))))
    }

    @Test("A device ID encodes as a bare string and decodes only when valid")
    func codable() throws {
        let id = try #require(DeviceID("pi.kitchen"))
        let data = try JSONEncoder().encode([id])
        #expect(String(decoding: data, as: UTF8.self) == #"["pi.kitchen"]"#)
        #expect(try JSONDecoder().decode([DeviceID].self, from: data) == [id])

        let error = #expect(throws: DecodingError.self) {
            try JSONDecoder().decode([DeviceID].self, from: Data(#"["Laptop"]"#.utf8))
        }
        guard case .dataCorrupted(let context)? = error else {
            Issue.record("expected dataCorrupted, got \(String(describing: error))")
            return
        }
        #expect(context.debugDescription.contains("'Laptop' is not a valid device ID: has 'L'"))
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([DeviceID].self, from: Data("[42]".utf8)) }
    }

    @Test("Equal IDs hash alike")
    func hashing() throws {
        let ids: Set<DeviceID> = [try #require(DeviceID("laptop")), try #require(DeviceID("laptop")), try #require(DeviceID("phone"))]
        #expect(ids.count == 2)
    }

    @Test("precedesInUTF8Order is byte order: as utf8.lexicographicallyPrecedes, unlike String's <")
    func utf8Order() {
        let samples = [
            "", "a", "b", "ab", "a.json", "a.0F.json", "a.0f.json", "laptop", "laptop.json", "laptop-2",
            "z", "é", "e\u{301}", "\u{FFFD}", "\u{10000}", "\u{E000}", "Ω", "日本", "日", "a\u{0}", "A",
        ]
        for left in samples {
            for right in samples {
                #expect(
                    left.precedesInUTF8Order(right) == left.utf8.lexicographicallyPrecedes(right.utf8),
                    "\(Array(left.utf8)) against \(Array(right.utf8))")
            }
        }
        // Where Unicode's order and byte order differ: é precomposed (C3 A9) and e + U+0301.
        #expect("e\u{301}".precedesInUTF8Order("é"))
        #expect(!("e\u{301}" < "é") && !("é" < "e\u{301}"))
    }

    @Test("indicesInUTF8Order sorts by UTF-8 bytes, equal strings in index order")
    func utf8OrderOfMany() {
        let alphabet = ["a", "b", "A", ".", "0", "F", "é", "e\u{301}", "日", "\u{10000}", "\u{0}", "json"]
        var generator = SystemRandomNumberGenerator()
        var names: [String] = ["", "", "a", "a"]
        for _ in 0..<2_000 {
            names.append((0..<Int.random(in: 0...6, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }.joined())
        }
        let order = names.indicesInUTF8Order()
        #expect(order.sorted() == Array(names.indices))
        let expected = names.indices.sorted { left, right in
            names[left].utf8.elementsEqual(names[right].utf8)
                ? left < right : names[left].utf8.lexicographicallyPrecedes(names[right].utf8)
        }
        #expect(order == expected)
        #expect([String]().indicesInUTF8Order().isEmpty)
        #expect(["b", "a", "b", "a"].indicesInUTF8Order() == [1, 3, 0, 2])
    }
}
