/// A record's identity across all devices: a hyphenated UUID, held in upper case.
///
/// Readers accept any case; the normal form and every file this device writes use upper case,
/// so `3f25…` and `3F25…` are one record.
public struct RecordID: Hashable, Comparable, Sendable, CustomStringConvertible {
    // The 128 bits of the UUID: hashing, comparing and storing one is two integers, never a
    // 36-character heap string (a merge handles every id of every file several times).
    private let high: UInt64
    private let low: UInt64

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
        guard bytes.count == 36 else { return nil }
        var high: UInt64 = 0
        var low: UInt64 = 0
        var digits = 0
        for index in 0..<36 {
            let byte = bytes[index]
            if index == 8 || index == 13 || index == 18 || index == 23 {
                guard byte == UInt8(ascii: "-") else { return nil }
                continue
            }
            let value: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = byte - UInt8(ascii: "0")
            case UInt8(ascii: "A")...UInt8(ascii: "F"): value = byte - UInt8(ascii: "A") + 10
            case UInt8(ascii: "a")...UInt8(ascii: "f"): value = byte - UInt8(ascii: "a") + 10
            default: return nil
            }
            if digits < 16 {
                high = high << 4 | UInt64(value)
            } else {
                low = low << 4 | UInt64(value)
            }
            digits += 1
        }
        return (high, low)
    }

    private static func write(high: UInt64, low: UInt64, into buffer: UnsafeMutableBufferPointer<UInt8>) {
        let hex: StaticString = "0123456789ABCDEF"
        var at = 0
        for digit in 0..<32 {
            if digit == 8 || digit == 12 || digit == 16 || digit == 20 {
                buffer[at] = UInt8(ascii: "-")
                at += 1
            }
            let word = digit < 16 ? high : low
            let shift = UInt64(60 - 4 * (digit % 16))
            buffer[at] = hex.utf8Start[Int((word >> shift) & 0xF)]
            at += 1
        }
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
