/// Which records a snapshot file holds (format 2): those whose id, in upper case, starts with
/// this prefix of 0 to 4 hexadecimal digits.
///
/// A part file says `"part": "3F"` and is named `<device>.3F.json`; the empty prefix is the whole
/// snapshot in one file, `<device>.json`, which says no `part`. The prefixes a device publishes
/// at one time are the leaves of a tree of hex digits: together they cover every id once.
public struct PartPrefix: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The digits as a number (the first digit in the highest place).
    public let value: UInt16
    /// How many hex digits: 0 (the whole snapshot) to ``maximumDigits``.
    public let digits: Int

    /// The most digits a prefix has.
    public static let maximumDigits = 4

    /// The empty prefix: every id, the snapshot in one file.
    public static let whole = PartPrefix(value: 0, digits: 0)

    /// The prefix of `digits` digits whose value is `value` (its low `4 × digits` bits).
    public init(value: UInt16, digits: Int) {
        precondition((0...Self.maximumDigits).contains(digits), "a prefix has 0 to 4 digits")
        self.value = digits == 0 ? 0 : value & UInt16(truncatingIfNeeded: (1 << (4 * digits)) - 1)
        self.digits = digits
    }

    /// Reads a `part` value: 1 to 4 of `0-9A-F` (upper case only); nil otherwise.
    public init?(_ text: String) {
        let bytes = Array(text.utf8)
        guard (1...Self.maximumDigits).contains(bytes.count) else { return nil }
        var value: UInt16 = 0
        for byte in bytes {
            let digit: UInt16
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt16(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt16(byte - UInt8(ascii: "A") + 10)
            default: return nil
            }
            value = value << 4 | digit
        }
        self.init(value: value, digits: bytes.count)
    }

    /// The prefix of `digits` hex digits that `id` starts with.
    public init(of id: RecordID, digits: Int) {
        precondition((0...Self.maximumDigits).contains(digits), "a prefix has 0 to 4 digits")
        self.init(value: digits == 0 ? 0 : UInt16(truncatingIfNeeded: id.leadingBits >> (64 - 4 * digits)), digits: digits)
    }

    /// The digits as written in a file and its name: upper case, "" for the whole snapshot.
    public var rawValue: String {
        let symbols = Array("0123456789ABCDEF".utf8)
        var text: [UInt8] = []
        for place in stride(from: digits - 1, through: 0, by: -1) {
            text.append(symbols[Int(value >> (4 * place) & 0xF)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    public var description: String { digits == 0 ? "(whole)" : rawValue }

    /// Whether this is the whole snapshot (no `part`).
    public var isWhole: Bool { digits == 0 }

    /// Whether `id` starts with this prefix.
    public func contains(_ id: RecordID) -> Bool {
        digits == 0 || UInt16(truncatingIfNeeded: id.leadingBits >> (64 - 4 * digits)) == value
    }

    /// Whether every id this prefix holds is also held by `other` (it is `other` or longer).
    public func isWithin(_ other: PartPrefix) -> Bool {
        other.digits <= digits && value >> (4 * (digits - other.digits)) == other.value
    }

    /// The 16 prefixes one digit longer; empty at ``maximumDigits``.
    public var children: [PartPrefix] {
        guard digits < Self.maximumDigits else { return [] }
        return (0..<16).map { PartPrefix(value: value << 4 | UInt16($0), digits: digits + 1) }
    }

    /// The prefix one digit shorter; nil for the whole snapshot.
    public var parent: PartPrefix? {
        digits == 0 ? nil : PartPrefix(value: value >> 4, digits: digits - 1)
    }

    /// The file's name for `device`: `<device>.json`, or `<device>.<prefix>.json` for a part.
    public func fileName(for device: DeviceID) -> String {
        digits == 0 ? device.rawValue + ".json" : device.rawValue + "." + rawValue + ".json"
    }

    /// Orders prefixes as their ids are ordered: a prefix comes right before its children.
    public static func < (lhs: PartPrefix, rhs: PartPrefix) -> Bool {
        let common = min(lhs.digits, rhs.digits)
        let left = lhs.value >> (4 * (lhs.digits - common))
        let right = rhs.value >> (4 * (rhs.digits - common))
        return left != right ? left < right : lhs.digits < rhs.digits
    }
}

extension RecordID {
    /// The id's first 64 bits (its first 16 hex digits).
    var leadingBits: UInt64 { high }
}
