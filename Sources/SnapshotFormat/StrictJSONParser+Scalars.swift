/// Strings, numbers and UTF-8 validation for ``StrictJSONParser``.
extension StrictJSONParser {
    /// Parses the string whose opening quote is at `position`.
    mutating func parseString(isKey: Bool) throws(JSONParseError) -> String {
        if let plain = try decodeString(isKey: isKey) { return String(decoding: plain, as: UTF8.self) }
        return String(decoding: scratch, as: UTF8.self)
    }

    /// Validates the string whose opening quote is at `position` and moves past it. Returns its
    /// bytes in the input when it has no escapes; otherwise nil, its decoded UTF-8 in `scratch`.
    mutating func decodeString(isKey: Bool) throws(JSONParseError) -> UnsafeBufferPointer<UInt8>? {
        position += 1
        let start = position
        // Fast path: no escapes, so the string is the input's bytes once they are known to be valid.
        let i = try skippingPlainText(from: start)
        if i < input.count, input[i] == UInt8(ascii: "\"") {
            position = i + 1
            return UnsafeBufferPointer(rebasing: input[start..<i])
        }
        scratch.removeAll(keepingCapacity: true)
        var runEnd = i
        while true {
            // The plain text up to the next quote, backslash or control byte, in one piece (a
            // string with escapes is mostly such runs: appended byte by byte, they took a fifth
            // of a first merge of a folder written with escapes everywhere).
            scratch.append(contentsOf: UnsafeBufferPointer(rebasing: input[position..<runEnd]))
            position = runEnd
            guard position < input.count else { throw truncated() }
            let byte = input[position]
            switch byte {
            case UInt8(ascii: "\""):
                position += 1
                return nil
            case UInt8(ascii: "\\"):
                // The usual `\uXXXX` (not half of a surrogate pair) here; every other escape, and
                // every error, in parseEscape.
                if let scalar = Self.unicodeEscapeOutsideSurrogates(in: input, at: position) {
                    appendUTF8(of: scalar)
                    position += 6
                } else {
                    try parseEscape(isKey: isKey)
                }
            default:
                // The only other byte a run stops at (it throws at malformed UTF-8 itself).
                throw JSONParseError(
                    offset: position,
                    reason: "control character U+\(JSONParseError.hex4(UInt32(byte))) must be escaped in a string")
            }
            runEnd = try Self.skippingPlainText(in: input, from: position)
        }
    }

    /// Decodes the escape whose backslash is at `position` into `scratch`.
    private mutating func parseEscape(isKey: Bool) throws(JSONParseError) {
        let escapeStart = position
        position += 1
        guard position < input.count else { throw truncated() }
        let decoded: UInt8
        switch input[position] {
        case UInt8(ascii: "\""): decoded = UInt8(ascii: "\"")
        case UInt8(ascii: "\\"): decoded = UInt8(ascii: "\\")
        case UInt8(ascii: "/"): decoded = UInt8(ascii: "/")
        case UInt8(ascii: "b"): decoded = 0x08
        case UInt8(ascii: "f"): decoded = 0x0C
        case UInt8(ascii: "n"): decoded = 0x0A
        case UInt8(ascii: "r"): decoded = 0x0D
        case UInt8(ascii: "t"): decoded = 0x09
        case UInt8(ascii: "u"):
            position += 1
            try appendUnicodeEscape(escapeStart: escapeStart, isKey: isKey)
            return
        default:
            let shown =
                position < input.count && input[position] >= 0x21 && input[position] < 0x7F
                ? "\\\(Character(Unicode.Scalar(input[position])))" : "\\ followed by this character"
            throw JSONParseError(offset: escapeStart, reason: "invalid escape sequence \(shown) in a string")
        }
        scratch.append(decoded)
        position += 1
    }

    /// Decodes `\uXXXX` (and the low half of a surrogate pair) after the `u` at `position`.
    private mutating func appendUnicodeEscape(escapeStart: Int, isKey: Bool) throws(JSONParseError) {
        let unit = try hex4(escapeStart: escapeStart)
        var scalarValue = unit
        func lone(_ unit: UInt32, _ detail: String) -> JSONParseError {
            JSONParseError(
                offset: escapeStart,
                reason:
                    "lone surrogate \\u\(JSONParseError.hex4(unit)) in \(isKey ? "an object key" : "a string") (\(detail))"
            )
        }
        switch unit {
        case 0xD800...0xDBFF:
            let needsLow = "a high surrogate must be followed by a \\u escape of a low surrogate"
            guard position < input.count else { throw truncated() }
            guard input[position] == UInt8(ascii: "\\") else { throw lone(unit, needsLow) }
            guard position + 1 < input.count else { throw truncated() }
            guard input[position + 1] == UInt8(ascii: "u") else { throw lone(unit, needsLow) }
            let lowStart = position
            position += 2
            let low = try hex4(escapeStart: lowStart)
            guard (0xDC00...0xDFFF).contains(low) else {
                throw lone(unit, needsLow)
            }
            scalarValue = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
        case 0xDC00...0xDFFF:
            throw lone(unit, "a low surrogate without a high surrogate before it")
        default:
            break
        }
        appendUTF8(of: scalarValue)
    }

    /// The value of the `\uXXXX` escape at `at` (its backslash) when it is complete, its digits
    /// are hexadecimal and it is not half of a surrogate pair; nil otherwise.
    @inline(__always)
    private static func unicodeEscapeOutsideSurrogates(in input: UnsafeBufferPointer<UInt8>, at: Int) -> UInt32? {
        guard at + 6 <= input.count, input[at + 1] == UInt8(ascii: "u") else { return nil }
        var value: UInt32 = 0
        for k in 2..<6 {
            guard let digit = hexDigit(input[at + k]) else { return nil }
            value = value << 4 | digit
        }
        return value & 0xF800 == 0xD800 ? nil : value
    }

    /// The value of the hexadecimal digit `byte` (0-9, a-f, A-F); nil for any other byte.
    @inline(__always)
    private static func hexDigit(_ byte: UInt8) -> UInt32? {
        let digit = byte &- UInt8(ascii: "0")
        if digit < 10 { return UInt32(digit) }
        let letter = (byte | 0x20) &- UInt8(ascii: "a")  // A-F as a-f
        return letter < 6 ? UInt32(letter + 10) : nil
    }

    /// Appends the UTF-8 bytes of the scalar `scalarValue` (not a surrogate) to `scratch`, one by
    /// one: through `UTF8.encode`'s buffer they were 2 % of a first merge of a folder written
    /// with escapes everywhere.
    @inline(__always)
    private mutating func appendUTF8(of scalarValue: UInt32) {
        switch scalarValue {
        case ..<0x80:
            scratch.append(UInt8(truncatingIfNeeded: scalarValue))
        case ..<0x800:
            scratch.append(0xC0 | UInt8(truncatingIfNeeded: scalarValue >> 6))
            scratch.append(0x80 | UInt8(truncatingIfNeeded: scalarValue) & 0x3F)
        case ..<0x1_0000:
            scratch.append(0xE0 | UInt8(truncatingIfNeeded: scalarValue >> 12))
            scratch.append(0x80 | UInt8(truncatingIfNeeded: scalarValue >> 6) & 0x3F)
            scratch.append(0x80 | UInt8(truncatingIfNeeded: scalarValue) & 0x3F)
        default:
            scratch.append(0xF0 | UInt8(truncatingIfNeeded: scalarValue >> 18))
            scratch.append(0x80 | UInt8(truncatingIfNeeded: scalarValue >> 12) & 0x3F)
            scratch.append(0x80 | UInt8(truncatingIfNeeded: scalarValue >> 6) & 0x3F)
            scratch.append(0x80 | UInt8(truncatingIfNeeded: scalarValue) & 0x3F)
        }
    }

    /// Reads four hexadecimal digits at `position`.
    private mutating func hex4(escapeStart: Int) throws(JSONParseError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard position < input.count else { throw truncated() }
            guard let digit = Self.hexDigit(input[position]) else {
                throw JSONParseError(
                    offset: escapeStart, reason: "invalid \\u escape: expected four hexadecimal digits")
            }
            value = value << 4 | digit
            position += 1
        }
        return value
    }

    /// Where the bytes of a string from `start` on stop being ones it holds as they are: the first
    /// quote, backslash or control byte (or the end of the input), past printable ASCII and
    /// well-formed UTF-8 sequences. ASCII is tested eight bytes at a time, and the first byte that
    /// ends a run is found in its word (the lowest flagged byte is exact), so that long text costs
    /// a word test per eight bytes and a string's end costs no byte-by-byte walk.
    ///
    /// - Throws: at the first byte that does not start a well-formed UTF-8 sequence.
    @inline(__always)
    func skippingPlainText(from start: Int) throws(JSONParseError) -> Int {
        try Self.skippingPlainText(in: input, from: start)
    }

    /// ``skippingPlainText(from:)`` in `input`. Static, as is what it calls, so that a mutating
    /// caller's loop does not copy the whole parser for each call (in a string's loop over its
    /// escapes, storing that copy right after an escape was a tenth of the decoding's time).
    @inline(__always)
    static func skippingPlainText(in input: UnsafeBufferPointer<UInt8>, from start: Int) throws(JSONParseError)
        -> Int
    {
        guard let base = input.baseAddress else { return start }
        let raw = UnsafeRawPointer(base)
        let count = input.count
        var at = start
        while true {
            while at + 8 <= count {
                let word = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: at, as: UInt64.self))
                // A byte of 0x80 or more (in a UTF-8 sequence) has its top bit set in the word itself.
                let special = Self.quotesBackslashesAndControls(in: word) | (word & Self.repeated(0x80))
                if special != 0 {
                    at += special.trailingZeroBitCount >> 3
                    break
                }
                at += 8
            }
            guard at < count else { return at }
            let byte = base[at]
            if byte < 0x80 {
                if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 { return at }
                at += 1  // within the last seven bytes
                continue
            }
            // The common two- and three-byte sequences here; the rest (and every error) in full.
            if byte &- 0xC2 <= 0xDF - 0xC2, at + 1 < count, base[at + 1] & 0xC0 == 0x80 {
                at += 2
            } else if byte &- 0xE1 <= 0xEC - 0xE1 || byte &- 0xEE <= 1, at + 2 < count,
                base[at + 1] & 0xC0 == 0x80, base[at + 2] & 0xC0 == 0x80
            {
                at += 3
            } else {
                at += try utf8SequenceLength(in: input, at: at)
            }
        }
    }

    /// `byte` in each of a word's eight bytes.
    @inline(__always)
    static func repeated(_ byte: UInt8) -> UInt64 { 0x0101_0101_0101_0101 &* UInt64(byte) }

    /// The top bit of each zero byte of `word`, and possibly of bytes above the lowest zero byte
    /// (a borrow): the classic word test, exact for whether there is one and for which is lowest.
    /// XORed first with ``repeated(_:)``, it finds a given byte.
    @inline(__always)
    static func zeroBytes(in word: UInt64) -> UInt64 {
        (word &- repeated(0x01)) & ~word & repeated(0x80)
    }

    /// The top bit of each byte of `word` that a string cannot hold as it is (a quote, a
    /// backslash, a control byte), with the same exactness as ``zeroBytes(in:)``.
    @inline(__always)
    static func quotesBackslashesAndControls(in word: UInt64) -> UInt64 {
        zeroBytes(in: word ^ repeated(0x22)) | zeroBytes(in: word ^ repeated(0x5C)) | bytesBelow(0x20, in: word)
    }

    /// The top bit of each byte of `word` below `limit` (at most 0x80), with the same exactness
    /// as ``zeroBytes(in:)``.
    @inline(__always)
    static func bytesBelow(_ limit: UInt8, in word: UInt64) -> UInt64 {
        (word &- repeated(limit)) & ~word & repeated(0x80)
    }

    /// The length of the well-formed UTF-8 sequence starting at `start` (Unicode Table 3-7).
    func utf8SequenceLength(at start: Int) throws(JSONParseError) -> Int {
        try Self.utf8SequenceLength(in: input, at: start)
    }

    /// ``utf8SequenceLength(at:)`` in `input`.
    static func utf8SequenceLength(in input: UnsafeBufferPointer<UInt8>, at start: Int) throws(JSONParseError) -> Int {
        let lead = input[start]
        let length: Int
        var secondRange: ClosedRange<UInt8> = 0x80...0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; secondRange = 0xA0...0xBF
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; secondRange = 0x80...0x9F
        case 0xF0: length = 4; secondRange = 0x90...0xBF
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; secondRange = 0x80...0x8F
        default: throw JSONParseError(offset: start, reason: "invalid UTF-8")
        }
        for k in 1..<length {
            guard start + k < input.count else {
                throw JSONParseError(offset: input.count, reason: JSONParseError.truncatedReason)
            }
            guard (k == 1 ? secondRange : 0x80...0xBF).contains(input[start + k]) else {
                throw JSONParseError(offset: start, reason: "invalid UTF-8")
            }
        }
        return length
    }

    /// Parses the number starting at `position` (RFC 8259 grammar, then the I-JSON limits).
    mutating func parseNumber() throws(JSONParseError) -> JSONValue {
        let start = position
        let negative = input[position] == UInt8(ascii: "-")
        if negative { position += 1 }
        var significand: UInt64 = 0
        var exactDigits = true  // false once a nonzero digit did not fit in `significand`
        var decimalExponent = 0
        func isDigit(_ at: Int) -> Bool { at < input.count && input[at] &- UInt8(ascii: "0") < 10 }
        func requireDigit(_ what: String) throws(JSONParseError) {
            guard position < input.count else { throw truncated() }
            guard isDigit(position) else { throw JSONParseError(offset: position, reason: what) }
        }

        try requireDigit("a minus sign must be followed by a digit")
        if input[position] == UInt8(ascii: "0") {
            position += 1
            if isDigit(position) { throw JSONParseError(offset: start, reason: "numbers must not have leading zeros") }
        }
        while isDigit(position) {
            if significand < 100_000_000_000_000_000 {
                significand = significand * 10 + UInt64(input[position] - UInt8(ascii: "0"))
            } else {
                if input[position] != UInt8(ascii: "0") { exactDigits = false }
                decimalExponent += 1
            }
            position += 1
        }
        var isInteger = true
        if position < input.count, input[position] == UInt8(ascii: ".") {
            isInteger = false
            position += 1
            try requireDigit("a decimal point must be followed by a digit")
            while isDigit(position) {
                if significand < 100_000_000_000_000_000 {
                    significand = significand * 10 + UInt64(input[position] - UInt8(ascii: "0"))
                    decimalExponent -= 1
                } else if input[position] != UInt8(ascii: "0") {
                    exactDigits = false
                }
                position += 1
            }
        }
        if position < input.count, input[position] | 0x20 == UInt8(ascii: "e") {
            isInteger = false
            position += 1
            var exponentNegative = false
            if position < input.count, input[position] == UInt8(ascii: "+") || input[position] == UInt8(ascii: "-") {
                exponentNegative = input[position] == UInt8(ascii: "-")
                position += 1
            }
            try requireDigit("an exponent must have at least one digit")
            var exponent = 0
            while isDigit(position) {
                // Far beyond any double's range, so clamping changes nothing but avoids overflow.
                exponent = min(exponent * 10 + Int(input[position] - UInt8(ascii: "0")), 100_000_000)
                position += 1
            }
            decimalExponent += exponentNegative ? -exponent : exponent
        }

        let literal = UnsafeBufferPointer(rebasing: input[start..<position])
        if isInteger {
            if exactDigits, decimalExponent == 0, significand <= 9_007_199_254_740_991 {
                let magnitude = Double(significand)
                return .number(negative ? -magnitude : magnitude)
            }
            // RFC 8785 writes integral doubles below 1e21 without an exponent: text this code
            // wrote canonically reads such integers back as the doubles they are.
            guard acceptsLargeIntegers else {
                throw JSONParseError(
                    offset: start,
                    reason:
                        "integer \(JSONParseError.displayedLiteral(literal)) is beyond ±(2^53−1); write it with a fraction or exponent"
                )
            }
        }
        // Clinger's fast path: both operands exact, so one IEEE operation rounds correctly.
        if exactDigits, significand <= 1 << 53, (-22...22).contains(decimalExponent) {
            var magnitude = Double(significand)
            if decimalExponent < 0 {
                magnitude /= Self.powersOfTen[-decimalExponent]
            } else {
                magnitude *= Self.powersOfTen[decimalExponent]
            }
            return .number(negative ? -magnitude : magnitude)
        }
        if exactDigits, let magnitude = Self.extendedProduct(significand, timesTenTo: decimalExponent) {
            return .number(negative ? -magnitude : magnitude)
        }
        guard let value = Double(String(decoding: literal, as: UTF8.self)), value.isFinite else {
            throw JSONParseError(
                offset: start,
                reason: "number \(JSONParseError.displayedLiteral(literal)) is outside the IEEE 754 double range")
        }
        return .number(value)
    }

    /// `significand × 10^exponent` rounded to the nearest double, when one extended-precision
    /// operation decides it; nil otherwise (the caller then asks the C library).
    ///
    /// Clinger's fast path above needs a significand of at most 2^53, so it misses the 16 and 17
    /// digits that shortest round-trip printers (Python's `repr`, JavaScript, Swift) write for
    /// most doubles. x87's 80-bit format holds any significand below 2^64 and every power of ten
    /// up to 10^27 exactly, so one multiplication or division gives the value correctly rounded
    /// to 64 bits. Rounding that to a double's 53 bits is the correct rounding of the exact value
    /// unless the 64-bit result lies exactly halfway between two doubles (its 11 dropped bits are
    /// 1 followed by zeros): the exact value is within half a 64-bit unit of it, so any other
    /// pattern leaves it on the same side of every halfway point. Those ties, and other
    /// architectures, go to the C library. The C library's `strtod` needed a String and cost
    /// about 150 ns a number; this path about 10 (a first merge of 60,000 records of 20
    /// numbers each: docs/performance.md).
    static func extendedProduct(_ significand: UInt64, timesTenTo exponent: Int) -> Double? {
        #if arch(x86_64)
            guard significand != 0, (-27...27).contains(exponent) else { return nil }
            let power = Self.extendedPowersOfTen[Int(exponent.magnitude)]
            let value = exponent < 0 ? Float80(significand) / power : Float80(significand) * power
            // The 64-bit significand's low 11 bits are the ones a double drops.
            guard value.significandBitPattern & 0x7FF != 0x400 else { return nil }
            return Double(value)
        #else
            return nil
        #endif
    }

    #if arch(x86_64)
        /// 10^0 … 10^27, each exact in 80 bits (5^27 < 2^64).
        private static let extendedPowersOfTen: [Float80] = (0...27).map { exponent in
            (0..<exponent).reduce(Float80(1)) { power, _ in power * 10 }
        }
    #endif

    private static let powersOfTen: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ]
}
