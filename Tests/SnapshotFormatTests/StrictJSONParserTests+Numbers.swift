import SnapshotFormat
import Testing
import TestSupport

private func refusal(_ text: String) -> JSONParseError? {
    do throws(JSONParseError) {
        _ = try StrictJSON.parse(Array(text.utf8))
        return nil
    } catch {
        return error
    }
}

private func parsed(_ text: String) throws -> JSONValue { try StrictJSON.parse(Array(text.utf8)) }

/// Expects `text` to parse to exactly `expected`, bit for bit (`-0` is not `0`).
private func expectParses(
    _ text: String, as expected: Double, sourceLocation: SourceLocation = #_sourceLocation
) throws {
    guard case .number(let value) = try parsed(text) else {
        Issue.record("\(text) is not a number", sourceLocation: sourceLocation)
        return
    }
    #expect(
        value.bitPattern == expected.bitPattern, "\(text) → \(value), expected \(expected)",
        sourceLocation: sourceLocation)
}

/// Numbers: the RFC 8259 grammar is in the main suite; here the values and the I-JSON limits.
extension StrictJSONParserTests {
    @Test("integers within ±(2^53−1) are accepted, beyond it refused unless written with a fraction or exponent")
    func integerLimits() throws {
        #expect(try parsed("9007199254740991") == .number(9_007_199_254_740_991))
        #expect(try parsed("-9007199254740991") == .number(-9_007_199_254_740_991))
        for text in ["9007199254740992", "-9007199254740992", "9007199254740993", "18446744073709551616",
                     "100000000000000000000000000000000000000000000000000000000000000"] {
            let error = try #require(refusal("[\(text)]"), "\(text) was accepted")
            let shown = text.count > 40 ? String(text.prefix(40)) + "…" : text
            #expect(error == JSONParseError(
                offset: 1, reason: "integer \(shown) is beyond ±(2^53−1); write it with a fraction or exponent"))
        }
        #expect(try parsed("9007199254740992.0") == .number(9_007_199_254_740_992))
        #expect(try parsed("9.007199254740992e15") == .number(9_007_199_254_740_992))
        #expect(try parsed("-9007199254740993.0") == .number(-9_007_199_254_740_992))
        #expect(try parsed("1e300") == .number(1e300))
    }

    @Test("numbers with an integral value parse to that value", arguments: [
        "1", "1.0", "1e0", "1E0", "1e+0", "10e-1", "0.1e1", "1.000000000000000000000000000", "100e-2", "0.00001e5",
    ])
    func integralValues(text: String) throws {
        #expect(try parsed(text) == .number(1))
    }

    @Test("numbers are rounded correctly")
    func correctRounding() throws {
        let cases: [(String, Double)] = [
            ("0.1", 0.1), ("-2.5e-3", -0.0025), ("0.30000000000000004", 0.1 + 0.2), ("1e23", 1e23),
            ("1.7976931348623157e308", .greatestFiniteMagnitude), ("1.7976931348623158e308", .greatestFiniteMagnitude),
            ("5e-324", .leastNonzeroMagnitude), ("2.2250738585072014e-308", .leastNormalMagnitude),
            ("123456789012345678901234567890.0", 1.2345678901234568e29), ("-0", -0.0), ("-0.0e5", -0.0),
            ("9007199254740993.0", 9_007_199_254_740_992), ("9007199254740995.0", 9_007_199_254_740_996),
            ("0.1000000000000000055511151231257827", 0.1), ("1e-400", 0), ("-1e-400", -0.0),
            ("2.4703282292062328e-324", .leastNonzeroMagnitude), ("0e999999999999", 0),
        ]
        for (text, expected) in cases { try expectParses(text, as: expected) }
    }

    @Test("random decimal literals parse to the double Swift's strtod gives")
    func randomNumbersMatchStrtod() throws {
        var random = SplitMix64(seed: 0x5EED)
        for _ in 0..<20_000 {
            let integerDigits = Int.random(in: 1...20, using: &random)
            var text = Int.random(in: 0...1, using: &random) == 0 ? "-" : ""
            text += String(Int.random(in: 1...9, using: &random))
            text += (1..<integerDigits).map { _ in String(Int.random(in: 0...9, using: &random)) }.joined()
            text += "." + (0..<Int.random(in: 1...20, using: &random)).map { _ in String(Int.random(in: 0...9, using: &random)) }.joined()
            if Bool.random(using: &random) { text += "e\(Int.random(in: -330...280, using: &random))" }
            try expectParses(text, as: try #require(Double(text)))
        }
    }

    /// The literals the extended-precision path takes (up to 18 significant digits, a decimal
    /// exponent within ±27), including those that fall exactly or nearly halfway between two
    /// doubles, where rounding twice could go wrong.
    @Test("literals of up to 18 digits parse as strtod parses them, halfway cases too")
    func extendedPathMatchesStrtod() throws {
        var random = SplitMix64(seed: 0xF80)
        var texts: [String] = []
        // What shortest round-trip printers write: 15 to 17 digits, plain or with an exponent.
        for _ in 0..<20_000 {
            let magnitude = Double.random(in: 1...10, using: &random)
                * Double(sign: .plus, exponent: Int.random(in: -40...50, using: &random), significand: 1)
            texts.append("\(magnitude)")
        }
        // Integers between 2^53 and 2^63 at, just below and just above the midpoint of two
        // neighbouring doubles, written with a fraction and scaled by powers of ten.
        for _ in 0..<10_000 {
            let base = Double(UInt64.random(in: (1 << 53)..<(1 << 59), using: &random))
            let midpoint = UInt64(base) + UInt64(base.ulp) / 2
            for text in ["\(midpoint).0", "\(midpoint - 1).9", "\(midpoint).1", "\(midpoint)e-3", "0.\(midpoint)e5"] {
                texts.append(text)
            }
        }
        // Random digit strings with the point anywhere and small exponents.
        for _ in 0..<20_000 {
            let count = Int.random(in: 14...18, using: &random)
            var digits = String(Int.random(in: 1...9, using: &random))
            digits += (1..<count).map { _ in String(Int.random(in: 0...9, using: &random)) }.joined()
            let point = Int.random(in: 1...count, using: &random)
            var text = String(digits.prefix(point)) + "." + (point < count ? String(digits.dropFirst(point)) : "0")
            if Bool.random(using: &random) { text += "e\(Int.random(in: -20...20, using: &random))" }
            texts.append(text)
        }
        for text in texts { try expectParses(text, as: try #require(Double(text), "\(text)")) }
    }

    /// The interchange path copies a literal that is already in ECMAScript's form and formats the
    /// others; the tree path always formats. Both must write the same bytes.
    @Test("a number's literal is copied only when it is exactly what formatting writes")
    func copiedLiteralsAreInterchange() throws {
        var texts = [
            "0", "-0", "0.0", "-0.0", "0e0", "1", "-1", "10", "1.5", "1.50", "1.0", "0.5", "-0.25", "0.000001",
            "0.0000001", "0.0000010", "0.00000123", "123456789012345", "1234567890123456", "0.123456789012345",
            "0.1234567890123456", "999999999999999.9", "12.340", "1e5", "1E5", "5e-7", "1e21", "100", "120.5",
            "9007199254740991", "0.30000000000000004",
        ]
        var random = SplitMix64(seed: 0xC0B7)
        for _ in 0..<20_000 {
            let count = Int.random(in: 1...18, using: &random)
            var digits = (0..<count).map { _ in String(Int.random(in: 0...9, using: &random)) }.joined()
            if digits.count > 1, digits.first == "0" { digits = "1" + digits.dropFirst() }
            var text = Bool.random(using: &random) ? "-" : ""
            switch Int.random(in: 0...2, using: &random) {
            case 0: text += digits  // an integer
            case 1:  // a fraction of a nonzero integer
                let point = Int.random(in: 1...count, using: &random)
                text += digits.prefix(point) + "." + (point < count ? String(digits.dropFirst(point)) : "0")
            default:  // 0.000ddd
                text += "0." + String(repeating: "0", count: Int.random(in: 0...8, using: &random)) + digits
            }
            guard count <= 15 || text.contains(".") else { continue }  // longer integers are refused
            texts.append(text)
        }
        for text in texts {
            let document = Array("[\(text)]".utf8)
            #expect(try StrictJSON.interchangeBytes(of: document) == StrictJSON.parse(document).interchangeBytes, "\(text)")
        }
    }

    @Test("numbers beyond the double range are refused", arguments: [
        "1e400", "-1e400", "1.8e308", "1e309", "123e99999999999999999999", "0.000001e315",
    ])
    func overflow(text: String) {
        #expect(refusal("[\(text)]") == JSONParseError(
            offset: 1, reason: "number \(text) is outside the IEEE 754 double range"))
    }
}

