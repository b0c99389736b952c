/// ECMAScript number formatting for RFC 8785.
extension CanonicalJSON {
    /// `number` as ECMAScript's `Number.prototype.toString` writes it (RFC 8785 section 3.2.2.3).
    public static func numberString(_ number: Double) -> String {
        var buffer: [UInt8] = []
        writeNumber(number, into: &buffer)
        return String(decoding: buffer, as: UTF8.self)
    }

    /// Appends `number` as ECMAScript's `Number.prototype.toString` writes it; it must be finite.
    ///
    /// With `largeIntegersWithExponent`, an integral number beyond ±(2^53−1) is written in the
    /// exponent form (`1e+20`) instead of plain digits, so that I-JSON readers accept it.
    public static func writeNumber(
        _ number: Double, into buffer: inout [UInt8], largeIntegersWithExponent: Bool = false
    ) {
        precondition(number.isFinite, "RFC 8785 cannot serialize the number \(number)")
        if number == 0 {
            buffer.append(UInt8(ascii: "0"))  // -0 too, as ECMAScript writes it.
            return
        }
        if number.magnitude < 9_007_199_254_740_992, Double(Int64(number)) == number {
            // Common case: an integer below 2^53 has at most 16 digits, always written in full.
            writeInteger(Int64(number), into: &buffer)
            return
        }
        // Swift prints the shortest digits that round-trip (its `description`), in plain decimal
        // from 10^-4 up to 2^53 and with an exponent outside that: below 2^53 (where every number
        // left is not an integer), one printed without an exponent is printed as ECMAScript
        // prints it, in plain decimal (it uses an exponent only below 10^-6 or from 10^21).
        // Printed straight into `buffer` (``PrintedBytes``), then rewritten if need be.
        let start = buffer.count
        var printed = PrintedBytes()
        swap(&printed.bytes, &buffer)
        number.write(to: &printed)
        swap(&printed.bytes, &buffer)
        if number.magnitude < 9_007_199_254_740_992, !buffer[start...].contains(UInt8(ascii: "e")) { return }
        // The shortest digits are gathered where they were printed, and the number is written
        // after them from there; then what was printed goes. No array of digits per number.
        let (digits, n) = gatherShortestDigits(in: &buffer, from: start)
        let printedEnd = buffer.count
        // Appends digits `range` (0-based among the digits), one by one from the same buffer.
        func appendDigits(_ range: Range<Int>) {
            for i in range { buffer.append(buffer[digits.lowerBound + i]) }
        }
        if number < 0 { buffer.append(UInt8(ascii: "-")) }
        // ECMAScript's rule with k = digits.count and n = the point's position: value = 0.d1d2…dk × 10^n.
        let k = digits.count
        let forceExponent = largeIntegersWithExponent && k <= n && number.magnitude > 9_007_199_254_740_991
        if !forceExponent, k <= n, n <= 21 {
            appendDigits(0..<k)
            buffer.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: n - k))
        } else if !forceExponent, 0 < n, n <= 21 {
            appendDigits(0..<n)
            buffer.append(UInt8(ascii: "."))
            appendDigits(n..<k)
        } else if !forceExponent, -6 < n, n <= 0 {
            buffer.append(contentsOf: "0.".utf8)
            buffer.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: -n))
            appendDigits(0..<k)
        } else {
            // `d.ddd` then `e±x`, as ECMAScript writes very large and very small numbers.
            appendDigits(0..<1)
            if k > 1 {
                buffer.append(UInt8(ascii: "."))
                appendDigits(1..<k)
            }
            buffer.append(UInt8(ascii: "e"))
            buffer.append(n - 1 < 0 ? UInt8(ascii: "-") : UInt8(ascii: "+"))
            writeInteger(Int64((n - 1).magnitude), into: &buffer)
        }
        buffer.removeSubrange(start..<printedEnd)
    }

    /// The shortest digits that round-trip to a number (no leading or trailing zeros) and the
    /// position of the decimal point relative to them, taken from its Swift `description` printed
    /// in `buffer` from `start` on, which holds exactly those digits (e.g. `1e-07`, `1.2345e+21`,
    /// `0.001`, `123.0`; a minus sign is skipped). The digits are moved within the printed bytes
    /// (never past where they were read) and their range in `buffer` returned.
    private static func gatherShortestDigits(in buffer: inout [UInt8], from start: Int)
        -> (digits: Range<Int>, pointPosition: Int)
    {
        var end = start  // where the next digit goes
        var integerDigits = 0
        var seenPoint = false
        var exponent = 0
        var exponentNegative = false
        var inExponent = false
        var seenDigit = false
        for at in start..<buffer.count {
            let byte = buffer[at]
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                seenDigit = true
                if inExponent {
                    exponent = exponent * 10 + Int(byte - UInt8(ascii: "0"))
                } else {
                    buffer[end] = byte
                    end += 1
                    if !seenPoint { integerDigits += 1 }
                }
            case UInt8(ascii: "."): seenPoint = true
            case UInt8(ascii: "e"), UInt8(ascii: "E"): inExponent = true
            case UInt8(ascii: "-"): if seenDigit { exponentNegative = true }  // else the number's sign
            default: break  // "+"
            }
        }
        var first = start
        while first < end, buffer[first] == UInt8(ascii: "0") { first += 1 }
        while end > first, buffer[end - 1] == UInt8(ascii: "0") { end -= 1 }
        let pointPosition = integerDigits + (exponentNegative ? -exponent : exponent) - (first - start)
        return (first..<end, pointPosition)
    }

    /// Appends the decimal digits of `value`, with a minus sign when negative.
    private static func writeInteger(_ value: Int64, into buffer: inout [UInt8]) {
        // Written from the end of 24 bytes on the stack (a sign and 19 digits fit), then appended
        // at once: reversing the digits in `buffer` in place copied them to a new array.
        var text: (UInt64, UInt64, UInt64) = (0, 0, 0)
        withUnsafeMutableBytes(of: &text) { bytes in
            var at = bytes.count
            var magnitude = value.magnitude
            repeat {
                at -= 1
                bytes[at] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            if value < 0 {
                at -= 1
                bytes[at] = UInt8(ascii: "-")
            }
            buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[at...]))
        }
    }
}

/// Where `Double.write(to:)` prints a number: its ASCII comes through `_writeASCII`, a
/// requirement of the standard library's `TextOutputStream` (underscored, but public), as bytes,
/// without the String that `description` allocates for every number longer than 15 characters.
/// A first merge of 60,000 records of 20 numbers each spent a sixth of its time writing numbers.
private struct PrintedBytes: TextOutputStream {
    var bytes: [UInt8] = []

    mutating func write(_ string: String) {
        bytes.append(contentsOf: string.utf8)
    }

    mutating func _writeASCII(_ buffer: UnsafeBufferPointer<UInt8>) {
        bytes.append(contentsOf: buffer)
    }
}
