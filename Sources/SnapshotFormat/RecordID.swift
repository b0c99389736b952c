/// A record's identity across all devices: a hyphenated UUID, held in upper case.
///
/// Readers accept any case; the normal form and every file this device writes use upper case,
/// so `3f25…` and `3F25…` are one record.
public struct RecordID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The upper-case, hyphenated text (36 ASCII characters).
    public let rawValue: String

    /// Reads a UUID string in any case; nil unless it is 8-4-4-4-12 hexadecimal digits.
    public init?(_ text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count == 36 else { return nil }
        var upper = [UInt8]()
        upper.reserveCapacity(36)
        for (index, byte) in bytes.enumerated() {
            if index == 8 || index == 13 || index == 18 || index == 23 {
                guard byte == UInt8(ascii: "-") else { return nil }
                upper.append(byte)
                continue
            }
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "A")...UInt8(ascii: "F"):
                upper.append(byte)
            case UInt8(ascii: "a")...UInt8(ascii: "f"):
                upper.append(byte - 32)
            default:
                return nil
            }
        }
        rawValue = String(decoding: upper, as: UTF8.self)
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

    // ASCII only, so String's ordering is byte order here.
    public static func < (lhs: RecordID, rhs: RecordID) -> Bool { lhs.rawValue < rhs.rawValue }
}
