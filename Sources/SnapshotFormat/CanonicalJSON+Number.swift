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
        let (digits, pointPosition) = shortestDigits(of: buffer[start...])
        buffer.removeSubrange(start...)
        if number < 0 { buffer.append(UInt8(ascii: "-")) }
        // ECMAScript's rule with k = digits.count and n = pointPosition: value = 0.d1d2…dk × 10^n.
        let k = digits.count
        let n = pointPosition
        let forceExponent = largeIntegersWithExponent && k <= n && number.magnitude > 9_007_199_254_740_991
        if forceExponent {
            writeExponentForm(digits, pointPosition: n, into: &buffer)
        } else if k <= n, n <= 21 {
            buffer.append(contentsOf: digits)
            buffer.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: n - k))
        } else if 0 < n, n <= 21 {
            buffer.append(contentsOf: digits[..<n])
            buffer.append(UInt8(ascii: "."))
            buffer.append(contentsOf: digits[n...])
        } else if -6 < n, n <= 0 {
            buffer.append(contentsOf: "0.".utf8)
            buffer.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: -n))
            buffer.append(contentsOf: digits)
        } else {
            writeExponentForm(digits, pointPosition: n, into: &buffer)
        }
    }

    /// `d.ddd` then `e±x`, as ECMAScript writes very large and very small numbers.
    private static func writeExponentForm(_ digits: [UInt8], pointPosition n: Int, into buffer: inout [UInt8]) {
        buffer.append(digits[0])
        if digits.count > 1 {
            buffer.append(UInt8(ascii: "."))
            buffer.append(contentsOf: digits[1...])
        }
        buffer.append(UInt8(ascii: "e"))
        buffer.append(n - 1 < 0 ? UInt8(ascii: "-") : UInt8(ascii: "+"))
        writeInteger(Int64((n - 1).magnitude), into: &buffer)
    }

    /// The shortest digits that round-trip to a number (no leading or trailing zeros) and the
    /// position of the decimal point relative to them, taken from its Swift `description`, which
    /// prints exactly those digits (e.g. `1e-07`, `1.2345e+21`, `0.001`, `123.0`; a minus sign is
    /// skipped).
    private static func shortestDigits(of printed: ArraySlice<UInt8>) -> (digits: [UInt8], pointPosition: Int) {
        var digits: [UInt8] = []
        digits.reserveCapacity(17)
        var integerDigits = 0
        var seenPoint = false
        var exponent = 0
        var exponentNegative = false
        var inExponent = false
        var seenDigit = false
        for byte in printed {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                seenDigit = true
                if inExponent {
                    exponent = exponent * 10 + Int(byte - UInt8(ascii: "0"))
                } else {
                    digits.append(byte)
                    if !seenPoint { integerDigits += 1 }
                }
            case UInt8(ascii: "."): seenPoint = true
            case UInt8(ascii: "e"), UInt8(ascii: "E"): inExponent = true
            case UInt8(ascii: "-"): if seenDigit { exponentNegative = true }  // else the number's sign
            default: break  // "+"
            }
        }
        var pointPosition = integerDigits + (exponentNegative ? -exponent : exponent)
        let leadingZeros = digits.prefix { $0 == UInt8(ascii: "0") }.count
        digits.removeFirst(leadingZeros)
        pointPosition -= leadingZeros
        while digits.last == UInt8(ascii: "0") { digits.removeLast() }
        return (digits, pointPosition)
    }

    /// Appends the decimal digits of `value`, with a minus sign when negative (written in place,
    /// lowest digit first, then reversed: no buffer of its own for the one per vector entry).
    private static func writeInteger(_ value: Int64, into buffer: inout [UInt8]) {
        if value < 0 { buffer.append(UInt8(ascii: "-")) }
        let start = buffer.count
        var magnitude = value.magnitude
        repeat {
            buffer.append(UInt8(ascii: "0") + UInt8(magnitude % 10))
            magnitude /= 10
        } while magnitude > 0
        buffer[start...].reverse()
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
