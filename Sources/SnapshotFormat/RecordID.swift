/// A record's identity across all devices: a hyphenated UUID, held in upper case.
///
/// Readers accept any case; the normal form and every file this device writes use upper case,
/// so `3f25…` and `3F25…` are one record.
public struct RecordID: Hashable, Comparable, Sendable, CustomStringConvertible {
    // The 128 bits of the UUID: hashing, comparing and storing one is two integers, never a
    // 36-character heap string (a merge handles every id of every file several times).
    let high: UInt64
    let low: UInt64

    /// The ID as written: 36 characters, hyphenated, upper-case hexadecimal.
    public var rawValue: String {
        String(unsafeUninitializedCapacity: 36) { buffer in
            Self.write(high: high, low: low, into: buffer)
            return 36
        }
    }

    /// Calls `body` with the ID as written (``rawValue``'s 36 bytes), without making a string.
    public func withWrittenBytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 36) { buffer in
            Self.write(high: high, low: low, into: buffer)
            return try body(UnsafeBufferPointer(buffer))
        }
    }

    /// Reads a UUID written as 8-4-4-4-12 hexadecimal digits, in any case; nil otherwise.
    public init?(_ text: String) {
        var text = text
        guard let parsed = text.withUTF8({ Self.parse($0) }) else { return nil }
        (high, low) = parsed
    }

    /// Reads a UUID from its UTF-8 bytes, as ``init(_:)`` does.
    public init?(utf8 bytes: UnsafeBufferPointer<UInt8>) {
        guard let parsed = Self.parse(bytes) else { return nil }
        (high, low) = parsed
    }

    private init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    private static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> (UInt64, UInt64)? {
        guard bytes.count == 36, let raw = UnsafeRawPointer(bytes.baseAddress) else { return nil }
        guard bytes[8] == UInt8(ascii: "-"), bytes[13] == UInt8(ascii: "-"), bytes[18] == UInt8(ascii: "-"),
            bytes[23] == UInt8(ascii: "-"),
            let a = hex8(raw), let b = hex4(raw + 9), let c = hex4(raw + 14), let d = hex4(raw + 19),
            let e = hex4(raw + 24), let f = hex8(raw + 28)
        else { return nil }
        return (a << 32 | b << 16 | c, d << 48 | e << 32 | f)
    }

    /// The value of 8 hexadecimal digits (either case), nil if any is not one: all eight at once,
    /// in one 64-bit word (ids are parsed for every record of every file read).
    private static func hex8(_ pointer: UnsafeRawPointer) -> UInt64? {
        let word = UInt64(littleEndian: pointer.loadUnaligned(as: UInt64.self))
        // Per byte: a digit is 0x30...0x39; a letter, once lower-cased, 0x61...0x66.
        let lower = word | 0x2020_2020_2020_2020
        let isDigit = inRange(word, 0x30, 0x39)
        let isLetter = inRange(lower, 0x61, 0x66)
        guard (isDigit | isLetter) == 0x8080_8080_8080_8080 else { return nil }
        // Each byte's value: its low nibble, plus 9 for a letter.
        var values = (word & 0x0F0F_0F0F_0F0F_0F0F) &+ ((isLetter >> 7) &* 9)
        // Pack the eight nibbles, the first byte's the most significant.
        values = ((values & 0x0F00_0F00_0F00_0F00) >> 8) | ((values & 0x000F_000F_000F_000F) << 4)
        values = ((values & 0x00FF_0000_00FF_0000) >> 16) | ((values & 0x0000_00FF_0000_00FF) << 8)
        values = ((values & 0x0000_FFFF_0000_0000) >> 32) | ((values & 0x0000_0000_0000_FFFF) << 16)
        return values
    }

    /// The value of 4 hexadecimal digits.
    private static func hex4(_ pointer: UnsafeRawPointer) -> UInt64? {
        var bytes: (UInt32, UInt32) = (pointer.loadUnaligned(as: UInt32.self), 0x3030_3030)
        return withUnsafeBytes(of: &bytes) { hex8($0.baseAddress!) }.map { $0 >> 16 }
    }

    /// 0x80 in each byte of `word` that is within `low...high` (all bytes below 0x80), 0 in the others.
    private static func inRange(_ word: UInt64, _ low: UInt8, _ high: UInt8) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highBits: UInt64 = 0x8080_8080_8080_8080
        // Bytes of 0x80 or more are never digits; the others stay below 0x80 in both sums.
        let ascii = ~word & highBits
        let clean = word & ~highBits
        let aboveLow = (clean &+ ones &* UInt64(0x80 - low)) & highBits
        let belowHigh = ~(clean &+ ones &* UInt64(0x7F - high)) & highBits
        return ascii & aboveLow & belowHigh
    }

    /// Writes the 36 bytes of the written form, eight digits at a time (a merge writes one per
    /// record it stores and publishes).
    private static func write(high: UInt64, low: UInt64, into buffer: UnsafeMutableBufferPointer<UInt8>) {
        precondition(buffer.count >= 36)
        let raw = UnsafeMutableRawPointer(buffer.baseAddress!)
        // 8-4-4-4-12: the first 32 bits; the next two groups; the two after; the last 32 bits.
        raw.storeBytes(of: hexDigits(UInt32(truncatingIfNeeded: high >> 32)).littleEndian, as: UInt64.self)
        let middle = hexDigits(UInt32(truncatingIfNeeded: high)).littleEndian
        raw.storeBytes(of: UInt32(truncatingIfNeeded: middle), toByteOffset: 9, as: UInt32.self)
        raw.storeBytes(of: UInt32(truncatingIfNeeded: middle >> 32), toByteOffset: 14, as: UInt32.self)
        let fourth = hexDigits(UInt32(truncatingIfNeeded: low >> 32)).littleEndian
        raw.storeBytes(of: UInt32(truncatingIfNeeded: fourth), toByteOffset: 19, as: UInt32.self)
        raw.storeBytes(of: UInt32(truncatingIfNeeded: fourth >> 32), toByteOffset: 24, as: UInt32.self)
        raw.storeBytes(of: hexDigits(UInt32(truncatingIfNeeded: low)).littleEndian, toByteOffset: 28, as: UInt64.self)
        buffer[8] = UInt8(ascii: "-")
        buffer[13] = UInt8(ascii: "-")
        buffer[18] = UInt8(ascii: "-")
        buffer[23] = UInt8(ascii: "-")
    }

    /// The eight upper-case hexadecimal digits of `value`, the most significant in the lowest
    /// byte (so that, stored little-endian, they read in order).
    private static func hexDigits(_ value: UInt32) -> UInt64 {
        var nibbles = UInt64(value)
        // Spread the nibbles one per byte, reversing their order: halves, then bytes, then nibbles.
        nibbles = (nibbles >> 16) | ((nibbles & 0xFFFF) << 32)
        nibbles = ((nibbles >> 8) & 0x0000_00FF_0000_00FF) | ((nibbles & 0x0000_00FF_0000_00FF) << 16)
        nibbles = ((nibbles >> 4) & 0x000F_000F_000F_000F) | ((nibbles & 0x000F_000F_000F_000F) << 8)
        // "0" + n, and 7 more for a letter (n of 10 or more: n + 6 carries into bit 4).
        let isLetter = ((nibbles &+ 0x0606_0606_0606_0606) >> 4) & 0x0101_0101_0101_0101
        return nibbles &+ 0x3030_3030_3030_3030 &+ isLetter &* 7
    }

    /// Appends the written form (36 bytes) to `buffer`.
    public func append(to buffer: inout [UInt8]) {
        let count = buffer.count
        buffer.append(contentsOf: repeatElement(0, count: 36))
        buffer.withUnsafeMutableBufferPointer { all in
            Self.write(high: high, low: low, into: UnsafeMutableBufferPointer(rebasing: all[count..<count + 36]))
        }
    }


    /// A new random (version 4) record ID.
    public static func random() -> RecordID {
        var generator = SystemRandomNumberGenerator()
        return random(using: &generator)
    }

    /// A new random (version 4) record ID from the given generator.
    public static func random(using generator: inout some RandomNumberGenerator) -> RecordID {
        var bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        let hex = bytes.map { byte -> String in
            let digits = Array("0123456789ABCDEF")
            return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
        }.joined()
        let characters = Array(hex)
        let text =
            String(characters[0..<8]) + "-" + String(characters[8..<12]) + "-"
            + String(characters[12..<16]) + "-" + String(characters[16..<20]) + "-"
            + String(characters[20..<32])
        return RecordID(text)!
    }

    public var description: String { rawValue }

    // Upper-case hexadecimal digits sort as their values, so this is the written form's byte order.
    public static func < (lhs: RecordID, rhs: RecordID) -> Bool { (lhs.high, lhs.low) < (rhs.high, rhs.low) }
}
