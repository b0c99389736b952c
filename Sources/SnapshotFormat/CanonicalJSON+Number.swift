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
        // The shortest digits (17 at most) in memory on the stack, not an array of their own per
        // number.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { space in
            let (count, n) = shortestDigits(of: buffer[start...], into: space)
            let digits = UnsafeBufferPointer(rebasing: space[..<count])
            buffer.removeSubrange(start...)
            if number < 0 { buffer.append(UInt8(ascii: "-")) }
            // ECMAScript's rule with k = digits.count and n = the point's position: value = 0.d1d2…dk × 10^n.
            let k = digits.count
            let forceExponent = largeIntegersWithExponent && k <= n && number.magnitude > 9_007_199_254_740_991
            if forceExponent {
                writeExponentForm(digits, pointPosition: n, into: &buffer)
            } else if k <= n, n <= 21 {
                buffer.append(contentsOf: digits)
                buffer.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: n - k))
            } else if 0 < n, n <= 21 {
                buffer.append(contentsOf: UnsafeBufferPointer(rebasing: digits[..<n]))
                buffer.append(UInt8(ascii: "."))
                buffer.append(contentsOf: UnsafeBufferPointer(rebasing: digits[n...]))
            } else if -6 < n, n <= 0 {
                buffer.append(contentsOf: "0.".utf8)
                buffer.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: -n))
                buffer.append(contentsOf: digits)
            } else {
                writeExponentForm(digits, pointPosition: n, into: &buffer)
            }
        }
    }

    /// `d.ddd` then `e±x`, as ECMAScript writes very large and very small numbers.
    private static func writeExponentForm(
        _ digits: UnsafeBufferPointer<UInt8>, pointPosition n: Int, into buffer: inout [UInt8]
    ) {
        buffer.append(digits[0])
        if digits.count > 1 {
            buffer.append(UInt8(ascii: "."))
            buffer.append(contentsOf: UnsafeBufferPointer(rebasing: digits[1...]))
        }
        buffer.append(UInt8(ascii: "e"))
        buffer.append(n - 1 < 0 ? UInt8(ascii: "-") : UInt8(ascii: "+"))
        writeInteger(Int64((n - 1).magnitude), into: &buffer)
    }

    /// The shortest digits that round-trip to a number (no leading or trailing zeros), written to
    /// `digits`, how many, and the position of the decimal point relative to them, taken from its
    /// Swift `description` `printed`, which prints exactly those digits (e.g. `1e-07`,
    /// `1.2345e+21`, `0.001`, `123.0`; a minus sign is skipped).
    private static func shortestDigits(of printed: ArraySlice<UInt8>, into digits: UnsafeMutableBufferPointer<UInt8>)
        -> (count: Int, pointPosition: Int)
    {
        var count = 0
        var integerDigits = 0
        var seenPoint = false
        var exponent = 0
        var exponentNegative = false
        var inExponent = false
        var seenDigit = false
        var leadingZeros = 0
        for byte in printed {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                seenDigit = true
                if inExponent {
                    exponent = exponent * 10 + Int(byte - UInt8(ascii: "0"))
                } else {
                    if !seenPoint { integerDigits += 1 }
                    if count == 0, byte == UInt8(ascii: "0") {
                        leadingZeros += 1
                    } else {
                        precondition(count < digits.count, "a double has at most 17 significant digits")
                        digits[count] = byte
                        count += 1
                    }
                }
            case UInt8(ascii: "."): seenPoint = true
            case UInt8(ascii: "e"), UInt8(ascii: "E"): inExponent = true
            case UInt8(ascii: "-"): if seenDigit { exponentNegative = true }  // else the number's sign
            default: break  // "+"
            }
        }
        while count > 0, digits[count - 1] == UInt8(ascii: "0") { count -= 1 }
        return (count, integerDigits + (exponentNegative ? -exponent : exponent) - leadingZeros)
    }

    /// Appends the decimal digits of `value`, with a minus sign when negative.
    private static func writeInteger(_ value: Int64, into buffer: inout [UInt8]) {
        // Written from the end of 24 bytes on the stack (a sign and 19 digits fit), then appended
        // at once: reversing the digits in `buffer` in place copied them to a new array.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 24) { bytes in
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
            buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[at...]))
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
