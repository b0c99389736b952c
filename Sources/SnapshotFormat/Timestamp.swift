/// A point in time as integer milliseconds since 1970-01-01T00:00:00Z (never through Double).
public struct Timestamp: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Milliseconds since 1970-01-01T00:00:00Z; negative before it.
    public let milliseconds: Int64

    /// Wraps a millisecond count as it is, without checking the valid range.
    public init(milliseconds: Int64) {
        self.milliseconds = milliseconds
    }

    /// The earliest valid instant: 0000-01-01T00:00:00.000Z.
    public static let earliest = Timestamp(milliseconds: -62_167_219_200_000)

    /// The latest valid instant: 9999-12-31T23:59:59.999Z.
    public static let latest = Timestamp(milliseconds: 253_402_300_799_999)

    /// Whether the instant falls in years 0000 through 9999 in UTC.
    public var isWithinValidRange: Bool {
        milliseconds >= Self.earliest.milliseconds && milliseconds <= Self.latest.milliseconds
    }

    /// Orders timestamps by their milliseconds.
    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
        lhs.milliseconds < rhs.milliseconds
    }

    /// The written form (same as `written`).
    public var description: String { written }
}

// MARK: - Reading

extension Timestamp {
    /// Parses an RFC 3339 date-time as the contract reads it; nil when invalid.
    public init?(parsing text: String) {
        var text = text
        guard let ms = text.withUTF8({ Self.parseMilliseconds($0) }) else { return nil }
        self.init(milliseconds: ms)
    }

    /// Reads a timestamp from the UTF-8 bytes of its text, as ``init(parsing:)`` does.
    init?(parsingUTF8 bytes: UnsafeBufferPointer<UInt8>) {
        guard let ms = Self.parseMilliseconds(bytes) else { return nil }
        self.init(milliseconds: ms)
    }

    private static func parseMilliseconds(_ bytes: UnsafeBufferPointer<UInt8>) -> Int64? {
        var cursor = ByteCursor(bytes: bytes)

        guard let year = cursor.digits(4), cursor.take(UInt8(ascii: "-")),
            let month = cursor.digits(2), cursor.take(UInt8(ascii: "-")),
            let day = cursor.digits(2)
        else { return nil }
        guard (1...12).contains(month), (1...daysInMonth(year: year, month: month)).contains(day)
        else { return nil }

        guard cursor.take(UInt8(ascii: "T")) || cursor.take(UInt8(ascii: "t")) else { return nil }

        guard let hour = cursor.digits(2), cursor.take(UInt8(ascii: ":")),
            let minute = cursor.digits(2), cursor.take(UInt8(ascii: ":")),
            let second = cursor.digits(2)
        else { return nil }
        // Second 60 is a leap second; the arithmetic below carries it into the next minute.
        guard hour <= 23, minute <= 59, second <= 60 else { return nil }

        var fractionMs: Int64 = 0
        if cursor.take(UInt8(ascii: ".")) {
            var count = 0
            while let digit = cursor.digit() {
                // Only the first three digits count: dropping the rest is a floor, because
                // the fraction is always added to a whole second, also before 1970.
                if count < 3 { fractionMs = fractionMs * 10 + digit }
                count += 1
            }
            guard count > 0 else { return nil }
            if count < 3 {
                for _ in count..<3 { fractionMs *= 10 }
            }
        }

        var offsetSeconds: Int64 = 0
        if cursor.take(UInt8(ascii: "Z")) || cursor.take(UInt8(ascii: "z")) {
            offsetSeconds = 0
        } else {
            let sign: Int64
            if cursor.take(UInt8(ascii: "+")) {
                sign = 1
            } else if cursor.take(UInt8(ascii: "-")) {
                sign = -1
            } else {
                return nil
            }
            guard let offsetHour = cursor.digits(2), cursor.take(UInt8(ascii: ":")),
                let offsetMinute = cursor.digits(2), offsetHour <= 23, offsetMinute <= 59
            else { return nil }
            offsetSeconds = sign * (offsetHour * 3600 + offsetMinute * 60)
        }
        guard cursor.isAtEnd else { return nil }

        let days = daysFromCivil(year: year, month: month, day: day)
        let localSeconds = days * 86_400 + hour * 3600 + minute * 60 + second
        let ms = (localSeconds - offsetSeconds) * 1000 + fractionMs
        guard ms >= earliest.milliseconds, ms <= latest.milliseconds else { return nil }
        return ms
    }
}

/// Reads ASCII fields out of UTF-8 bytes, one step at a time.
private struct ByteCursor {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0

    var isAtEnd: Bool { index == bytes.count }

    /// Consumes `byte` when it is next.
    mutating func take(_ byte: UInt8) -> Bool {
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    /// Consumes one ASCII digit, if next.
    mutating func digit() -> Int64? {
        guard index < bytes.count else { return nil }
        let byte = bytes[index]
        guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
        index += 1
        return Int64(byte - UInt8(ascii: "0"))
    }

    /// Consumes exactly `count` ASCII digits as a number.
    mutating func digits(_ count: Int) -> Int64? {
        var value: Int64 = 0
        for _ in 0..<count {
            guard let digit = digit() else { return nil }
            value = value * 10 + digit
        }
        return value
    }
}

// MARK: - Writing

extension Timestamp {
    /// The written form: UTC, exactly three fractional digits, "Z": 2026-11-22T09:59:58.123Z
    public var written: String {
        var bytes: [UInt8] = []
        guard appendWritten(to: &bytes) else { return writtenSlowly }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the written form's 24 bytes for years 0000–9999 to `bytes`, built without
    /// strings or a buffer of its own (a merge writes one per version it stores); returns false,
    /// appending nothing, outside those years.
    func appendWritten(to bytes: inout [UInt8]) -> Bool {
        let (seconds, ms) = floorDivide(milliseconds, 1000)
        let (days, secondOfDay) = floorDivide(seconds, 86_400)
        let (year, month, day) = civilFromDays(days)
        guard (0...9999).contains(year) else { return false }
        // Written in place in a 24-byte value, then appended at once (appending a repeated zero
        // 24 times and overwriting it went through the generic path of `append(contentsOf:)`).
        var text: (UInt64, UInt64, UInt64) = (0, 0, 0)
        withUnsafeMutableBytes(of: &text) { written in
            func put(_ value: Int64, _ width: Int, at offset: Int) {
                var value = value
                for index in stride(from: offset + width - 1, through: offset, by: -1) {
                    written[index] = UInt8(ascii: "0") + UInt8(value % 10)
                    value /= 10
                }
            }
            put(year, 4, at: 0)
            written[4] = UInt8(ascii: "-")
            put(month, 2, at: 5)
            written[7] = UInt8(ascii: "-")
            put(day, 2, at: 8)
            written[10] = UInt8(ascii: "T")
            put(secondOfDay / 3600, 2, at: 11)
            written[13] = UInt8(ascii: ":")
            put(secondOfDay / 60 % 60, 2, at: 14)
            written[16] = UInt8(ascii: ":")
            put(secondOfDay % 60, 2, at: 17)
            written[19] = UInt8(ascii: ".")
            put(ms, 3, at: 20)
            written[23] = UInt8(ascii: "Z")
        }
        withUnsafeBytes(of: text) { bytes.append(contentsOf: $0) }
        return true
    }

    private var writtenSlowly: String {
        let (seconds, ms) = floorDivide(milliseconds, 1000)
        let (days, secondOfDay) = floorDivide(seconds, 86_400)
        let (year, month, day) = civilFromDays(days)
        let hour = secondOfDay / 3600
        let minute = secondOfDay / 60 % 60
        let second = secondOfDay % 60

        // Outside 0000–9999 the form is not valid on the wire; it is still unambiguous.
        let yearText = year < 0 ? "-" + pad(-year, 4) : pad(year, 4)
        return "\(yearText)-\(pad(month, 2))-\(pad(day, 2))T"
            + "\(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2)).\(pad(ms, 3))Z"
    }
}

private func pad(_ value: Int64, _ width: Int) -> String {
    let digits = String(value)
    return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
}

// MARK: - Calendar arithmetic (proleptic Gregorian, on integers)

/// Quotient and remainder rounded toward negative infinity; the remainder is never negative.
private func floorDivide(_ value: Int64, _ divisor: Int64) -> (quotient: Int64, remainder: Int64) {
    let quotient = value / divisor
    let remainder = value % divisor
    return remainder < 0 ? (quotient - 1, remainder + divisor) : (quotient, remainder)
}

private func isLeapYear(_ year: Int64) -> Bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

private func daysInMonth(year: Int64, month: Int64) -> Int64 {
    switch month {
    case 2: return isLeapYear(year) ? 29 : 28
    case 4, 6, 9, 11: return 30
    default: return 31
    }
}

/// Days since 1970-01-01 of a civil date (Howard Hinnant's days_from_civil).
private func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
    // Count years from March so that the leap day is the last day of the year.
    let y = month <= 2 ? year - 1 : year
    let era = floorDivide(y, 400).quotient
    let yearOfEra = y - era * 400
    let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    return era * 146_097 + dayOfEra - 719_468
}

/// The civil date of a day count since 1970-01-01 (Howard Hinnant's civil_from_days).
private func civilFromDays(_ days: Int64) -> (year: Int64, month: Int64, day: Int64) {
    let z = days + 719_468
    let era = floorDivide(z, 146_097).quotient
    let dayOfEra = z - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let monthFromMarch = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1
    let month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
    let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    return (year, month, day)
}
