import Foundation
import SnapshotFormat
import Testing

/// The error `StrictJSON.parse` throws for `bytes`, or nil when it accepts them.
private func refusal(_ bytes: [UInt8]) -> JSONParseError? {
    do throws(JSONParseError) {
        _ = try StrictJSON.parse(bytes)
        return nil
    } catch {
        return error
    }
}

private func refusal(_ text: String) -> JSONParseError? { refusal(Array(text.utf8)) }

private func parsed(_ text: String) throws -> JSONValue { try StrictJSON.parse(Array(text.utf8)) }

private let truncatedReason = "unexpected end of input (the file is truncated)"

@Suite("Strict I-JSON parser")
struct StrictJSONParserTests {
    @Test("every jcs/invalid vector is refused with a reason naming its problem",
          arguments: Vectors.fileNames(in: "jcs/invalid"))
    func invalidVector(name: String) throws {
        let bytes = try Vectors.bytes("jcs/invalid", name)
        let error = try #require(refusal(bytes), "\(name) was accepted")
        let expected =
            name.contains("surrogate") ? "lone surrogate"
            : name.contains("overflow") ? "outside the IEEE 754 double range"
            : name.contains("integer") ? "is beyond ±(2^53−1)"
            : name.contains("duplicate") ? "duplicate key" : ""
        #expect(!error.reason.isEmpty && error.reason.contains(expected), "\(name): \(error)")
    }

    @Test("a leading UTF-8 byte order mark is ignored, anywhere else it is refused")
    func byteOrderMark() throws {
        #expect(try StrictJSON.parse([0xEF, 0xBB, 0xBF] + Array(#"{"a":1}"#.utf8)) == .object(JSONObject([("a", .number(1))])))
        #expect(try StrictJSON.parse("\u{FEFF}[true]") == .array([.bool(true)]))
        #expect(try parsed("\"\u{FEFF}\"") == .string("\u{FEFF}"))
        #expect(refusal([0xEF, 0xBB, 0xBF])?.reason.contains("end of input") == true)
        #expect(refusal(" \u{FEFF}1")?.reason == "unexpected character '\u{FEFF}' (U+FEFF)")
        #expect(refusal("\u{FEFF}\u{FEFF}1")?.offset == 3)
    }

    @Test("every proper prefix of a document is refused as truncated, at the end of the input")
    func truncatedPrefixes() {
        let document = Array(#"{"a":[1,-2.5e3,true,false,null,"é\u00e9\ud83d\ude00😀\n"],"b":{"c":{}}}"#.utf8)
        #expect(refusal(document) == nil)
        for length in 1..<document.count {
            let error = refusal(Array(document[..<length]))
            #expect(error == JSONParseError(offset: length, reason: truncatedReason), "prefix of \(length) bytes")
        }
    }

    @Test("empty or blank input is refused")
    func emptyInput() {
        for text in ["", " ", "\n\t\r "] {
            #expect(refusal(text)?.reason == "unexpected end of input (there is no JSON value)")
        }
    }

    @Test("duplicate keys are refused at any depth, at the offset of the second key",
          arguments: [
              (#"{"a":1,"a":2}"#, 7, "a"),
              (#"{"a":1, "a":1}"#, 8, "a"),
              (#"{"x":[{"k":1,"j":2,"k":3}]}"#, 19, "k"),
              (#"{"a":{"b":{"c":1,"c":[]}}}"#, 17, "c"),
              (#"[{"a":1},{"a":1,"a":null}]"#, 16, "a"),
              (#"{"a":1,"\u0061":2}"#, 7, "a"),
              (#"{"é":1,"\u00e9":2}"#, 8, "é"),
              (#"{"\n":1,"\n":2}"#, 8, "\n"),
              (#"{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k3":10}"#, 71, "k3"),
          ])
    func duplicateKeys(document: String, offset: Int, key: String) {
        let shown = key == "\n" ? #""\u000A""# : "\"\(key)\""
        #expect(refusal(document) == JSONParseError(offset: offset, reason: "duplicate key \(shown)"))
    }

    @Test("the same key in different objects is not a duplicate")
    func sameKeyInDifferentObjects() throws {
        #expect(refusal(#"[{"a":1},{"a":2}]"#) == nil)
        #expect(refusal(#"{"a":{"a":{"a":1}},"b":{"a":2}}"#) == nil)
    }

    @Test("keys that differ only by Unicode normalization (NFC vs NFD é) are both kept")
    func normalizationVariantsAreDistinctKeys() throws {
        for filler in [0, 20] {
            let extra = (0..<filler).map { #","f\#($0)":0"# }.joined()
            let value = try parsed(#"{"\u00e9":1,"e\u0301":2"# + extra + "}")
            guard case .object(let object) = value else {
                Issue.record("not an object: \(value)")
                return
            }
            #expect(object.count == 2 + filler)
            #expect(object["\u{E9}"] == .number(1))
            #expect(object["e\u{301}"] == .number(2))
            #expect(object.keys.prefix(2).map { Array($0.utf8) } == [[0xC3, 0xA9], [0x65, 0xCC, 0x81]])
        }
    }

    @Test("members keep document order")
    func memberOrder() throws {
        guard case .object(let object) = try parsed(#"{"z":1,"a":2,"m":3}"#) else {
            Issue.record("not an object")
            return
        }
        #expect(object.keys == ["z", "a", "m"])
        #expect(object.map(\.value) == [.number(1), .number(2), .number(3)])
    }

    @Test("JSONValue equality and hashing ignore member order but not array order")
    func equalityIgnoresMemberOrder() throws {
        let a = try parsed(#"{"a":1,"b":[1,2],"c":{"x":null,"y":true}}"#)
        let b = try parsed(#"{"c":{"y":true,"x":null},"b":[1,2],"a":1}"#)
        #expect(a == b)
        #expect(a.hashValue == b.hashValue)
        #expect(Set([a, b]).count == 1)
        #expect(try parsed("[1,2]") != parsed("[2,1]"))
        #expect(try parsed(#"{"a":1}"#) != parsed(#"{"a":1,"b":1}"#))
        #expect(try parsed(#"{"a":1}"#) != parsed(#"{"a":2}"#))
        #expect(try parsed(#"{"a":1}"#) != parsed(#"{"b":1}"#))
        let keys = (0..<40).map { #""k\#($0)":\#($0)"# }
        let forward = try parsed("{" + keys.joined(separator: ",") + "}")
        let backward = try parsed("{" + keys.reversed().joined(separator: ",") + "}")
        #expect(forward == backward)
        #expect(forward.hashValue == backward.hashValue)
    }

    @Test("JSONValue strings compare byte for byte, numbers as doubles")
    func equalityIsByteExact() {
        #expect("\u{E9}" == "e\u{301}")  // Swift's String equality, which JSONValue must not use.
        #expect(JSONValue.string("\u{E9}") != .string("e\u{301}"))
        #expect(Set([JSONValue.string("\u{E9}"), .string("e\u{301}")]).count == 2)
        #expect(JSONValue.object(JSONObject([("\u{E9}", .null)])) != .object(JSONObject([("e\u{301}", .null)])))
        #expect(JSONValue.number(0) == .number(-0.0))
        #expect(JSONValue.number(0).hashValue == JSONValue.number(-0.0).hashValue)
        #expect(JSONValue.number(1) != .bool(true))
        #expect(JSONValue.null != .string("null"))
    }

    @Test("nesting of 512 levels is accepted, 513 is refused")
    func depthLimit() {
        func arrays(_ depth: Int, inner: String = "") -> String {
            String(repeating: "[", count: depth) + inner + String(repeating: "]", count: depth)
        }
        func objects(_ depth: Int) -> String {
            String(repeating: #"{"a":"#, count: depth) + "1" + String(repeating: "}", count: depth)
        }
        let tooDeep = "arrays and objects are nested deeper than 512 levels"
        #expect(refusal(arrays(512)) == nil)
        #expect(refusal(arrays(513)) == JSONParseError(offset: 512, reason: tooDeep))
        #expect(refusal(objects(512)) == nil)
        #expect(refusal(objects(513)) == JSONParseError(offset: 512 * 5, reason: tooDeep))
        #expect(refusal(arrays(511, inner: "{}")) == nil)
        #expect(refusal(arrays(512, inner: "{}"))?.reason == tooDeep)
        #expect(refusal(String(repeating: "[", count: 1_000_000))?.reason == tooDeep)
    }

    @Test("grammar errors are refused with a reason and the offset of the problem",
          arguments: [
              ("01", "numbers must not have leading zeros", 0),
              ("[-01]", "numbers must not have leading zeros", 1),
              ("[+1]", "unexpected character '+'", 1),
              ("[.5]", "unexpected character '.'", 1),
              ("[1.]", "a decimal point must be followed by a digit", 3),
              ("[1.e5]", "a decimal point must be followed by a digit", 3),
              ("[-]", "a minus sign must be followed by a digit", 2),
              ("[- 1]", "a minus sign must be followed by a digit", 2),
              ("[-Infinity]", "a minus sign must be followed by a digit", 2),
              ("[1e]", "an exponent must have at least one digit", 3),
              ("[1E+]", "an exponent must have at least one digit", 4),
              ("[0x10]", "unexpected character 'x' (expected ',' or ']')", 2),
              ("[1,]", "unexpected character ']'", 3),
              ("[,1]", "unexpected character ','", 1),
              ("[1 2]", "unexpected character '2' (expected ',' or ']')", 3),
              (#"["a" : 1]"#, "unexpected character ':' (expected ',' or ']')", 5),
              (#"{"a":1,}"#, "unexpected character '}' (expected a key in double quotes)", 7),
              ("{,}", "unexpected character ',' (expected a key in double quotes)", 1),
              ("{'a':1}", "unexpected character ''' (expected a key in double quotes)", 1),
              ("{a:1}", "unexpected character 'a' (expected a key in double quotes)", 1),
              (#"{"a" 1}"#, "unexpected character '1' (expected ':')", 5),
              (#"{"a"}"#, "unexpected character '}' (expected ':')", 4),
              (#"{"a":1 "b":2}"#, "unexpected character '\"' (expected ',' or '}')", 7),
              ("[NaN]", "unexpected character 'N'", 1),
              ("[Infinity]", "unexpected character 'I'", 1),
              ("[True]", "unexpected character 'T'", 1),
              ("[tru]", "invalid literal (expected true, and only in lower case)", 1),
              ("[nul1]", "invalid literal (expected null, and only in lower case)", 1),
              ("[falsey]", "unexpected character 'y' (expected ',' or ']')", 6),
              ("1 2", "unexpected character '2' after the end of the document", 2),
              ("[] []", "unexpected character '[' after the end of the document", 3),
              ("{}}", "unexpected character '}' after the end of the document", 2),
              ("[1]\u{0}", "unexpected character U+0000 after the end of the document", 3),
              ("/* c */ 1", "unexpected character '/'", 0),
              ("[\u{A0}1]", "unexpected character '\u{A0}' (U+00A0)", 1),
              ("[\u{0B}1]", "unexpected character U+000B", 1),
              ("[\u{0C}1]", "unexpected character U+000C", 1),
              ("\"\t\"", "control character U+0009 must be escaped in a string", 1),
              ("\"a\nb\"", "control character U+000A must be escaped in a string", 2),
              ("\"\\n\u{1F}\"", "control character U+001F must be escaped in a string", 3),
              (#""\x""#, "invalid escape sequence \\x in a string", 1),
              (#""ab\U0041""#, "invalid escape sequence \\U in a string", 3),
              (#""\'""#, "invalid escape sequence \\' in a string", 1),
              (#""\u12G4""#, "invalid \\u escape: expected four hexadecimal digits", 1),
              (#""\u004""#, "invalid \\u escape: expected four hexadecimal digits", 1),
          ])
    func grammarError(document: String, reason: String, offset: Int) {
        let error = refusal(document)
        #expect(error?.reason.hasPrefix(reason) == true, "\(String(describing: error))")
        #expect(error?.offset == offset, "\(String(describing: error))")
    }

    @Test("lone surrogates in \\u escapes are refused, in strings and keys",
          arguments: [
              (#"["\ud800"]"#, "lone surrogate \\uD800 in a string", 2),
              (#"["\udc00"]"#, "lone surrogate \\uDC00 in a string", 2),
              (#"["\udc00\ud800"]"#, "lone surrogate \\uDC00 in a string", 2),
              (#"["ab\uDBFFx"]"#, "lone surrogate \\uDBFF in a string", 4),
              (#"["\ud800\n"]"#, "lone surrogate \\uD800 in a string", 2),
              (#"["\ud800\u0041"]"#, "lone surrogate \\uD800 in a string", 2),
              (#"["\ud800\ud800"]"#, "lone surrogate \\uD800 in a string", 2),
              (#"["\ud800😀"]"#, "lone surrogate \\uD800 in a string", 2),
              (#"{"\udbff":1}"#, "lone surrogate \\uDBFF in an object key", 2),
              (#"{"a":1,"x\udfff":1}"#, "lone surrogate \\uDFFF in an object key", 9),
          ])
    func loneSurrogate(document: String, reason: String, offset: Int) {
        let error = refusal(document)
        #expect(error?.reason.hasPrefix(reason) == true, "\(String(describing: error))")
        #expect(error?.offset == offset)
    }

    @Test("escapes decode, surrogate pairs included")
    func escapes() throws {
        #expect(try parsed(#""\"\\\/\b\f\n\r\t\u0000\u001F\u00e9\u00E9\ud83d\ude00\uD83D\uDE00\uFFFF""#)
            == .string("\"\\/\u{8}\u{C}\n\r\t\u{0}\u{1F}éé😀😀\u{FFFF}"))
        #expect(try parsed(#"{"\u0061\n":"x"}"#) == .object(JSONObject([("a\n", .string("x"))])))
    }

    @Test("every \\u escape decodes to its character's UTF-8, in either case of hex digits; only hex digits are taken")
    func everyEscape() throws {
        // Every scalar of the Basic Multilingual Plane, and the edges of the others as pairs:
        // the one, two, three and four byte forms and every boundary between them.
        var scalars = (0...0xFFFF).filter { !(0xD800...0xDFFF).contains($0) }.map { Unicode.Scalar($0)! }
        scalars += [0x10000, 0x10001, 0x1F600, 0xFFFFF, 0x100000, 0x10FFFE, 0x10FFFF].map { Unicode.Scalar($0)! }
        func escaped(_ scalar: Unicode.Scalar, upper: Bool) -> String {
            String(scalar).utf16.map { unit in
                let hex = String(unit, radix: 16, uppercase: upper)
                return "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            }.joined()
        }
        for upper in [false, true] {
            let document = "[" + scalars.map { "\"" + escaped($0, upper: upper) + "\"" }.joined(separator: ",") + "]"
            guard case .array(let values) = try parsed(document) else {
                Issue.record("not an array")
                continue
            }
            #expect(values.count == scalars.count)
            let wrong = zip(scalars, values).first { JSONValue.string(String($0)) != $1 }
            #expect(wrong == nil, "U+\(String(wrong?.0.value ?? 0, radix: 16)) read as \(String(describing: wrong?.1)) (upper case: \(upper))")
        }
        // Each byte next to a range of hex digits, in each of the four places.
        for bad in ["/", ":", "@", "G", "`", "g", " ", "\u{7F}", "é"] {
            for place in 0..<4 {
                var digits = Array("00e9")
                digits.replaceSubrange(place...place, with: Array(bad))
                let error = refusal("[\"a\\u" + String(digits) + "\"]")
                #expect(error?.reason == "invalid \\u escape: expected four hexadecimal digits", "\(bad) at \(place)")
                #expect(error?.offset == 3)
            }
        }
    }

    @Test("invalid UTF-8 is refused wherever it appears",
          arguments: [
              [0x22, 0xC0, 0xAF, 0x22], [0x22, 0xC1, 0xBF, 0x22], [0x22, 0xE0, 0x80, 0xAF, 0x22],
              [0x22, 0xF0, 0x80, 0x80, 0xAF, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22], [0x22, 0xED, 0xBF, 0xBF, 0x22],
              [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], [0x22, 0xF5, 0x80, 0x80, 0x80, 0x22], [0x22, 0xFF, 0x22],
              [0x22, 0xFE, 0x22], [0x22, 0x80, 0x22], [0x22, 0xC3, 0x28, 0x22], [0x22, 0xE2, 0x82, 0x22],
              [0x22, 0x5C, 0x6E, 0xC0, 0xAF, 0x22], [0x7B, 0x22, 0xC3, 0x22, 0x3A, 0x31, 0x7D],
              [0x5B, 0xC0, 0x5D], [0x5B, 0x31, 0x5D, 0xFF],
          ] as [[UInt8]])
    func invalidUTF8(bytes: [UInt8]) throws {
        let error = try #require(refusal(bytes))
        #expect(error.reason == "invalid UTF-8")
        let firstBad = bytes.firstIndex { $0 >= 0x80 }
        #expect(error.offset == firstBad)
    }

    @Test("the edges of well-formed UTF-8 are accepted, noncharacters included")
    func validUTF8Edges() throws {
        let samples: [[UInt8]] = [
            [0xC2, 0x80], [0xDF, 0xBF], [0xE0, 0xA0, 0x80], [0xED, 0x9F, 0xBF], [0xEE, 0x80, 0x80],
            [0xEF, 0xBF, 0xBF], [0xF0, 0x90, 0x80, 0x80], [0xF4, 0x8F, 0xBF, 0xBF], [0x7F],
        ]
        for sample in samples {
            let value = try StrictJSON.parse([0x22] + sample + [0x22])
            #expect(value == .string(String(decoding: sample, as: UTF8.self)))
        }
    }

    @Test("strings are read eight bytes at a time: every kind of byte at every offset reads as one at a time would")
    func wordAtATimeStrings() throws {
        // The bytes the word test must stop at, or pass over (DEL and the space are plain).
        let kinds: [(bytes: [UInt8], decoded: [UInt8]?)] = [
            ([0x5C, 0x6E], [0x0A]), ([0x5C, 0x22], [0x22]), ([0x5C, 0x5C], [0x5C]), ([0x5C, 0x75, 0x30, 0x30, 0x65, 0x39], [0xC3, 0xA9]),
            ([0xC3, 0xA9], [0xC3, 0xA9]), ([0xF0, 0x9F, 0x98, 0x80], [0xF0, 0x9F, 0x98, 0x80]), ([0x7F], [0x7F]),
            ([0x20], [0x20]), ([0x21], [0x21]), ([0x1F], nil), ([0x00], nil), ([0x09], nil), ([0x80], nil), ([0xFF], nil),
            ([0xC3], nil), ([0xE2, 0x82], nil),
        ]
        for length in [0, 1, 7, 8, 9, 15, 16, 17, 23, 24, 31] {
            for offset in 0...length {
                for kind in kinds {
                    let filler = (0..<length).map { UInt8(ascii: "a") + UInt8($0 % 26) }
                    let content = Array(filler[..<offset]) + kind.bytes + Array(filler[offset...])
                    let document = [UInt8(ascii: "[")] + [0x22] + content + [0x22] + [UInt8(ascii: "]")]
                    let keyed = [UInt8(ascii: "{"), 0x22] + content + [0x22, UInt8(ascii: ":"), UInt8(ascii: "1"), UInt8(ascii: "}")]
                    if let decoded = kind.decoded {
                        let expected = String(decoding: Array(filler[..<offset]) + decoded + Array(filler[offset...]), as: UTF8.self)
                        #expect(try StrictJSON.parse(document) == .array([.string(expected)]), "\(content)")
                        #expect(try StrictJSON.interchangeBytes(of: document) == StrictJSON.parse(document).interchangeBytes)
                        #expect(try StrictJSON.parse(keyed) == .object(JSONObject([(expected, .number(1))])), "\(content)")
                        #expect(try StrictJSON.interchangeBytes(of: keyed) == StrictJSON.parse(keyed).interchangeBytes)
                    } else {
                        let error = try #require(refusal(document), "\(content)")
                        #expect(error.offset == 2 + offset, "\(content): \(error)")
                        #expect((try? StrictJSON.interchangeBytes(of: document)) == nil)
                        #expect(refusal(keyed)?.offset == 2 + offset)
                    }
                }
            }
        }
        // A string that ends with the input, at every length: refused as truncated by both paths.
        for length in 0..<20 {
            let text = [UInt8(ascii: "[")] + [0x22] + Array(repeating: UInt8(ascii: "x"), count: length)
            #expect(refusal(text) != nil)
            #expect((try? StrictJSON.interchangeBytes(of: text)) == nil)
        }
    }

    @Test("members out of order are written in UTF-16 key order, as the tree writes them: keys sharing 8-byte beginnings, shorter than 8 bytes, holding NUL, U+E000 and up, or supplementary characters")
    func membersSortedByKey() throws {
        // A fixed sequence (SplitMix64), so that a failure repeats
        var state: UInt64 = 0x5EED
        func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        let low = ["", "a", "b", "\\u0000", "é", "z", "namespace.", "namespace.long.", "1234567", "12345678", "A", "~", "\\u007f"]
        let high = low + ["\\uE000", "\\uFFFF", "😀", "\\ud83d\\ude00"]
        // Keys of low pieces only (every comparison by the 8-byte beginnings first), and with high ones
        // and keys that all begin alike (the order decided past that beginning)
        for (pieces, count, beginning) in [low, high].flatMap({ pieces in
            [2, 3, 9, 50, 300].flatMap { count in ["", "org.example.settings.", "é"].map { (pieces, count, $0) } }
        }) {
            for _ in 0..<10 {
                var keys = Set<String>()
                var texts: [String] = []
                while keys.count < count {
                    let text = beginning + (0..<Int(next() % 5)).map { _ in pieces[Int(next() % UInt64(pieces.count))] }.joined()
                    let key = try StrictJSON.parse("\"" + text + "\"")
                    guard case .string(let decoded) = key, keys.insert(decoded).inserted else { continue }
                    texts.append(text)
                }
                let document = "{" + texts.enumerated().map { "\"\($0.element)\": \($0.offset)" }.joined(separator: ", ") + "}"
                let bytes = Array(document.utf8)
                let streamed = try StrictJSON.interchangeBytes(of: bytes)
                #expect(try streamed == StrictJSON.parse(bytes).interchangeBytes, "\(document)")
                guard case .object(let written) = try StrictJSON.parse(streamed) else { Issue.record("not an object"); continue }
                let order = written.map(\.key)
                #expect(zip(order, order.dropFirst()).allSatisfy { Array($0.utf16).lexicographicallyPrecedes(Array($1.utf16)) }, "\(order)")
            }
        }
    }

    @Test("the four JSON whitespace characters are allowed around every token")
    func whitespace() throws {
        let value = try parsed(" \t\n\r{ \t\n\r\"a\" \t\n\r: \t\n\r[ \t\n\r1 \t\n\r, \t\n\rnull \t\n\r] \t\n\r} \t\n\r")
        #expect(value == .object(JSONObject([("a", .array([.number(1), .null]))])))
    }

    @Test("the description reads 'at byte N: reason'")
    func errorDescription() {
        #expect(refusal(#"{"a":1,"a":2}"#)?.description == #"at byte 7: duplicate key "a""#)
    }

    @Test("text, raw memory and byte array inputs parse alike")
    func inputForms() throws {
        let text = #"{"é":[1,2.5,"x\u0000"],"b":null}"#
        let fromBytes = try StrictJSON.parse(Array(text.utf8))
        #expect(try StrictJSON.parse(text) == fromBytes)
        let data = Data(text.utf8)
        let fromRaw = try data.withUnsafeBytes { (raw) throws(JSONParseError) -> JSONValue in try StrictJSON.parse(raw) }
        #expect(fromRaw == fromBytes)
    }

    @Test("large inputs parse in linear time: many keys, many elements, a long string")
    func largeInputs() throws {
        let keys = (0..<100_000).map { #""key\#($0)":\#($0)"# }
        guard case .object(let object) = try parsed("{" + keys.joined(separator: ",") + "}") else {
            Issue.record("not an object")
            return
        }
        #expect(object.count == 100_000)
        #expect(object["key99999"] == .number(99_999))
        #expect(refusal("{" + keys.joined(separator: ",") + #","key0":1}"#)?.reason == #"duplicate key "key0""#)
        let numbers = "[" + (0..<200_000).map { "\($0).5" }.joined(separator: ",") + "]"
        guard case .array(let elements) = try parsed(numbers) else {
            Issue.record("not an array")
            return
        }
        #expect(elements.count == 200_000)
        let long = String(repeating: "ab\\n€", count: 1_000_000)
        #expect(try parsed("\"\(long)\"") == .string(String(repeating: "ab\n€", count: 1_000_000)))
    }
}
