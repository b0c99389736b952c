import Foundation
import SnapshotFormat
import Testing
import TestSupport

private func canonical(_ text: String) throws -> String {
    try StrictJSON.parse(Array(text.utf8)).canonicalString
}

@Suite("RFC 8785 canonical JSON")
struct CanonicalJSONTests {
    @Test("every jcs/input vector canonicalizes to its jcs/output bytes", arguments: Vectors.fileNames(in: "jcs/input"))
    func vector(name: String) throws {
        let input = try Vectors.bytes("jcs/input", name)
        let expected = try Vectors.bytes("jcs/output", name)
        let value = try StrictJSON.parse(input)
        let output = value.canonicalBytes
        #expect(output == expected, """
            \(name)
            got:      \(String(decoding: output, as: UTF8.self))
            expected: \(String(decoding: expected, as: UTF8.self))
            """)
        // The canonical form means the same value and is its own canonical form. (Read it as canonical
        // text: RFC 8785 writes an integral double beyond 2^53 without exponent, which I-JSON refuses.)
        let reparsed = try StrictJSON.parseCanonical(String(decoding: output, as: UTF8.self))
        #expect(reparsed == value)
        #expect(reparsed.canonicalBytes == output)
    }

    @Test("numbers are written as ECMAScript's Number.prototype.toString writes them", arguments: [
        (0.0, "0"), (-0.0, "0"), (1.0, "1"), (-1.0, "-1"), (100, "100"), (1.5, "1.5"), (-1.25, "-1.25"),
        (0.1 + 0.2, "0.30000000000000004"), (0.3, "0.3"), (123.456, "123.456"),
        (9_007_199_254_740_991, "9007199254740991"), (-9_007_199_254_740_991, "-9007199254740991"),
        (9_007_199_254_740_992, "9007199254740992"), (1e16, "10000000000000000"),
        (1e20, "100000000000000000000"), (1e21, "1e+21"), (-1e21, "-1e+21"), (1.2345e21, "1.2345e+21"),
        (1.2345678901234568e20, "123456789012345680000"), (999_999_999_999_999_900_000, "999999999999999900000"),
        (1e-6, "0.000001"), (1e-7, "1e-7"), (1.5e-7, "1.5e-7"), (-2.5e-5, "-0.000025"), (0.000001234, "0.000001234"),
        (5e-324, "5e-324"), (-5e-324, "-5e-324"), (2.2250738585072014e-308, "2.2250738585072014e-308"),
        (1.7976931348623157e308, "1.7976931348623157e+308"), (1e308, "1e+308"), (1e23, "1e+23"),
        (333_333_333.333_333_3, "333333333.3333333"), (-3.3333333333333333e-06, "-0.0000033333333333333333"),
        (4.35, "4.35"), (0.5, "0.5"), (1_000_000.125, "1000000.125"), (Double("9007199254740993000")!, "9007199254740993000"),
    ] as [(Double, String)])
    func numberFormat(value: Double, expected: String) {
        #expect(CanonicalJSON.numberString(value) == expected)
        #expect(JSONValue.number(value).canonicalString == expected)
    }

    @Test("random doubles are written in a form that reads back as the same double")
    func numbersRoundTrip() throws {
        var state: UInt64 = 0x1234_5678
        for _ in 0..<50_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let value = Double(bitPattern: state)
            guard value.isFinite else { continue }
            let text = CanonicalJSON.numberString(value)
            let back = try #require(Double(text), "\(text)")
            #expect(back == value, "\(value) written as \(text)")
            #expect(try StrictJSON.parseCanonical(text) == .number(value), "\(text)")
        }
    }

    /// ECMAScript's Number.prototype.toString, from C's printf instead of Swift's `description`:
    /// the fewest significant digits that read back as `value`, the closest such decimal, placed by
    /// the specification's rule. At each count of digits printf gives the nearest decimal; at a
    /// power of two the doubles that read back reach farther above the value than below it, so
    /// the decimals on either side of the nearest are tried too.
    static func ecmaScriptReference(_ value: Double) -> String {
        guard value != 0 else { return "0" }
        let magnitude = value.magnitude
        for precision in 1...17 {
            let text = String(format: "%.\(precision - 1)e", magnitude)
            let exponent = Int(text.split(separator: "e")[1])!
            let nearest = UInt64(text.split(separator: "e")[0].filter { $0 != "." })!
            let scale = exponent - precision + 1  // value ≈ significand × 10^scale
            guard
                let significand = [nearest, nearest + 1, nearest - 1].first(where: { candidate in
                    candidate > 0 && Double("\(candidate)e\(scale)") == magnitude
                })
            else { continue }
            var digits = Array(String(significand))
            let n = digits.count + scale
            while digits.count > 1, digits.last == "0" { digits.removeLast() }
            let k = digits.count
            let sign = value < 0 ? "-" : ""
            let all = String(digits)
            if k <= n, n <= 21 { return sign + all + String(repeating: "0", count: n - k) }
            if 0 < n, n <= 21 { return sign + all.prefix(n) + "." + all.dropFirst(n) }
            if -6 < n, n <= 0 { return sign + "0." + String(repeating: "0", count: -n) + all }
            let tail = k > 1 ? "." + all.dropFirst() : ""
            return sign + all.prefix(1) + tail + "e" + (n - 1 < 0 ? "-" : "+") + String((n - 1).magnitude)
        }
        preconditionFailure("17 digits always read back")
    }

    @Test("random doubles of every magnitude are written as ECMAScript writes them (checked against printf)")
    func numbersAgainstPrintf() {
        var random = SplitMix64(seed: 3)
        for round in 0..<40_000 {
            let exponent = Int.random(in: -9...23, using: &random)
            let digits = Int.random(in: 1...17, using: &random)
            let significand = Double(UInt64.random(in: 1...99_999_999_999_999_999, using: &random) % UInt64(pow(10.0, Double(digits))))
            var value = significand * pow(10.0, Double(exponent - digits))
            if round % 2 == 1 { value = -value }
            if round % 5 == 0 { value = Double(bitPattern: UInt64.random(in: 0...0x7FEF_FFFF_FFFF_FFFF, using: &random)) }
            guard value.isFinite else { continue }
            #expect(CanonicalJSON.numberString(value) == Self.ecmaScriptReference(value), "\(value)")
        }
        // Every power of two, where the doubles that read back are not centred on the value
        // (2^-24 is 5.960464477539063e-8, not the nearest 17 digits 5.9604644775390625e-8).
        for exponent in -1074...1023 {
            let value = Double(sign: .plus, exponent: exponent, significand: 1)
            #expect(CanonicalJSON.numberString(value) == Self.ecmaScriptReference(value), "2^\(exponent)")
        }
        #expect(Self.ecmaScriptReference(0x1p-24) == "5.960464477539063e-8")
    }

    @Test("strings escape only quote, backslash and controls below U+0020, using the short forms")
    func stringEscaping() {
        let short: [UInt8: String] = [0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0C: "\\f", 0x0D: "\\r"]
        for byte in UInt8(0)..<0x20 {
            let hex = String(byte, radix: 16)
            let expected = short[byte] ?? "\\u00" + (hex.count == 1 ? "0" + hex : hex)
            let value = JSONValue.string(String(decoding: [byte], as: UTF8.self))
            #expect(value.canonicalString == "\"\(expected)\"", "U+00\(hex)")
        }
        #expect(JSONValue.string("\"\\/").canonicalString == #""\"\\/""#)
        let literal = "\u{7F}\u{80}\u{9F}\u{A0}é\u{2028}\u{2029}€😀\u{FEFF}\u{FFFF}e\u{301}"
        #expect(JSONValue.string(literal).canonicalBytes == [0x22] + Array(literal.utf8) + [0x22])
        #expect(JSONValue.string("").canonicalString == #""""#)
        #expect(JSONValue.string("a\u{0}b\u{1F}c").canonicalString == #""a\u0000b\u001fc""#)
    }

    @Test("a character to escape is found at every offset of a long string, among plain ASCII and multi-byte characters")
    func escapesAtEveryOffset() {
        // Written eight bytes at a time: each offset within a word, and in the tail after the words.
        let plain: [Character] = ["a", "é", "€", "😀", "\u{7F}", " "]
        let special: [Character] = ["\"", "\\", "\n", "\u{1}", "\u{1F}"]
        func expected(_ text: String) -> String {
            "\"" + text.map { character -> String in
                switch character {
                case "\"": "\\\""
                case "\\": "\\\\"
                case "\n": "\\n"
                case "\u{1}": "\\u0001"
                case "\u{1F}": "\\u001f"
                default: String(character)
                }
            }.joined() + "\""
        }
        for length in 0..<26 {
            for (index, filler) in plain.enumerated() {
                let base = (0..<length).map { plain[($0 + index) % plain.count] == "\u{7F}" ? filler : plain[($0 + index) % plain.count] }
                #expect(JSONValue.string(String(base)).canonicalString == expected(String(base)))
                for offset in 0..<length {
                    for mark in special {
                        var text = base
                        text[offset] = mark
                        #expect(JSONValue.string(String(text)).canonicalString == expected(String(text)), "\(length) \(offset)")
                    }
                }
            }
        }
    }

    @Test("object members are sorted by the UTF-16 code units of their keys")
    func memberOrder() throws {
        #expect(try canonical(#"{"b":1,"a":2,"aa":3,"":4,"B":5}"#) == #"{"":4,"B":5,"a":2,"aa":3,"b":1}"#)
        // U+E000…U+FFFF sort after supplementary characters in UTF-16, though before them by code point.
        #expect(try canonical(#"{"\uffff":1,"\ud83d\ude00":2,"\ue000":3,"\ud800\udc00":4,"\ud7ff":5}"#)
            == "{\"\u{D7FF}\":5,\"\u{10000}\":4,\"😀\":2,\"\u{E000}\":3,\"\u{FFFF}\":1}")
        #expect(CanonicalJSON.keyPrecedes("a", "ab"))
        #expect(!CanonicalJSON.keyPrecedes("ab", "a"))
        #expect(!CanonicalJSON.keyPrecedes("a", "a"))
        #expect(CanonicalJSON.keyPrecedes("😀", "\u{FB33}"))
        #expect(CanonicalJSON.keyPrecedes("\u{10000}", "\u{10001}"))
        #expect(CanonicalJSON.keyPrecedes("e\u{301}", "\u{E9}"))
    }

    @Test("keys that differ only by normalization are both written, in UTF-16 order")
    func normalizationVariants() throws {
        #expect(try canonical(#"{"\u00e9":1,"e\u0301":2}"#) == "{\"e\u{301}\":2,\"\u{E9}\":1}")
    }

    @Test("nested values are written without whitespace")
    func nested() throws {
        let text = #" { "b" : [ 1 , { "d" : [ ] , "c" : { } } , "x" ] , "a" : [ null , true , false , -0.0 , 1.0e1 ] } "#
        #expect(try canonical(text) == #"{"a":[null,true,false,0,10],"b":[1,{"c":{},"d":[]},"x"]}"#)
    }

    @Test("top-level scalars are written alone")
    func topLevelScalars() {
        #expect(JSONValue.null.canonicalString == "null")
        #expect(JSONValue.bool(true).canonicalString == "true")
        #expect(JSONValue.bool(false).canonicalString == "false")
        #expect(JSONValue.number(42).canonicalString == "42")
        #expect(JSONValue.string("x").canonicalString == #""x""#)
        #expect(JSONValue.array([]).canonicalString == "[]")
        #expect(JSONValue.object(JSONObject()).canonicalString == "{}")
    }

    @Test("writeCanonical appends to what the buffer holds")
    func writeAppends() {
        var buffer: [UInt8] = Array("x\n".utf8)
        JSONValue.array([.number(1), .string("é")]).writeCanonical(into: &buffer)
        JSONValue.null.writeCanonical(into: &buffer)
        #expect(String(decoding: buffer, as: UTF8.self) == "x\n[1,\"é\"]null")
    }

    @Test("JSONObject keeps order, looks up by UTF-8 bytes, replaces in place, appends and removes")
    func objectAPI() {
        for size in [3, 30] {
            var object = JSONObject((0..<size).map { (key: "k\($0)", value: JSONValue.number(Double($0))) })
            #expect(object.count == size)
            #expect(object["k1"] == .number(1))
            #expect(object["missing"] == nil)
            object["k1"] = .string("one")
            #expect(object.keys[1] == "k1")
            #expect(object["k1"] == .string("one"))
            object["\u{E9}"] = .bool(true)
            object["e\u{301}"] = .bool(false)
            #expect(object.count == size + 2)
            #expect(object.keys.suffix(2).map { Array($0.utf8) } == [[0xC3, 0xA9], [0x65, 0xCC, 0x81]])
            #expect(object["\u{E9}"] == .bool(true))
            object["k0"] = nil
            object["absent"] = nil
            #expect(object.count == size + 1)
            #expect(object["k0"] == nil)
            #expect(object["k2"] == .number(2))
            #expect(object["e\u{301}"] == .bool(false))
            #expect(object.members.first?.key == "k1")
            #expect(Array(object).count == object.members.count)
            var copy = JSONObject()
            copy.members = object.members.reversed()
            #expect(copy == object)
            #expect(copy.hashValue == object.hashValue)
            copy["k2"] = .null
            #expect(copy != object)
        }
    }
}
