// Fuzz target `timestamp`: reading RFC 3339 date-times as milliseconds, and the written form.
//
// For any input: the string and byte readers agree, and agree with a plain reference reading of
// the contract written here (fixed positions, a day count by a different formula); an accepted
// timestamp is within years 0000-9999 and its written form (24 bytes) reads back as the same
// milliseconds. The input's first 8 bytes, as a millisecond count, are written (never crashing,
// whatever the count) and, folded into the valid range, read back as themselves.

@_cdecl("SnapshotFormatFuzz_timestamp")
func fuzzTimestamp(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    TimestampFuzzTarget.check(fuzzBytes(data, size))
    return 0
}

enum TimestampFuzzTarget {
    static func check(_ input: [UInt8]) {
        let parsed = input.withUnsafeBufferPointer { Timestamp(parsingUTF8: $0) }
        if let text = String(validating: input, as: UTF8.self) {
            let fromString = Timestamp(parsing: text)
            fuzzCheck(fromString == parsed, "the string and byte readers disagree on \(fuzzShown(input))")
        }
        let reference = ReferenceTimestamp.milliseconds(input)
        fuzzCheck(
            parsed?.milliseconds == reference,
            "\(fuzzShown(input)) reads as \(String(describing: parsed?.milliseconds)), the reference says \(String(describing: reference))"
        )
        if let parsed { checkWrittenForm(parsed, input: input) }
        checkMilliseconds(input)
    }

    private static func checkWrittenForm(_ timestamp: Timestamp, input: [UInt8]) {
        fuzzCheck(timestamp.isWithinValidRange, "\(fuzzShown(input)) reads as \(timestamp.milliseconds), out of range")
        let written = timestamp.written
        fuzzCheck(written.utf8.count == 24, "written form \(written) is not 24 bytes")
        var appended: [UInt8] = [UInt8(ascii: "\"")]
        fuzzCheck(
            timestamp.appendWritten(to: &appended) && appended == [UInt8(ascii: "\"")] + Array(written.utf8),
            "the written form appended to bytes is not \(written) after them")
        fuzzCheck(
            Timestamp(parsing: written) == timestamp,
            "written form \(written) of \(fuzzShown(input)) reads back as \(String(describing: Timestamp(parsing: written)))")
    }

    private static func checkMilliseconds(_ input: [UInt8]) {
        var raw: UInt64 = 0
        for (index, byte) in input.prefix(8).enumerated() { raw |= UInt64(byte) << (8 * UInt64(index)) }
        let any = Timestamp(milliseconds: Int64(bitPattern: raw))
        let anyWritten = any.written
        fuzzCheck(!anyWritten.isEmpty, "no written form for \(any.milliseconds)")
        if !any.isWithinValidRange {
            fuzzCheck(Timestamp(parsing: anyWritten) == nil, "\(anyWritten), out of range, is read")
        }
        let span = UInt64(Timestamp.latest.milliseconds - Timestamp.earliest.milliseconds + 1)
        let folded = Timestamp(milliseconds: Timestamp.earliest.milliseconds + Int64(raw % span))
        let written = folded.written
        fuzzCheck(
            Timestamp(parsing: written) == folded,
            "\(folded.milliseconds) written as \(written) reads back as \(String(describing: Timestamp(parsing: written)))")
        fuzzCheck(ReferenceTimestamp.milliseconds(Array(written.utf8)) == folded.milliseconds, "the reference misreads \(written)")
    }
}

/// The contract's timestamp rules read as plainly as possible, to compare with ``Timestamp``.
enum ReferenceTimestamp {
    static func milliseconds(_ b: [UInt8]) -> Int64? {
        func number(_ range: Range<Int>) -> Int64? {
            guard range.upperBound <= b.count else { return nil }
            var value: Int64 = 0
            for i in range {
                guard (48...57).contains(b[i]) else { return nil }
                value = value * 10 + Int64(b[i] - 48)
            }
            return value
        }
        // yyyy-mm-ddThh:mm:ss at fixed places.
        guard b.count >= 20, let year = number(0..<4), b[4] == 45, let month = number(5..<7), b[7] == 45,
            let day = number(8..<10), b[10] == 84 || b[10] == 116, let hour = number(11..<13), b[13] == 58,
            let minute = number(14..<16), b[16] == 58, let second = number(17..<19)
        else { return nil }
        let leap = year % 400 == 0 || (year % 4 == 0 && year % 100 != 0)
        let monthLengths: [Int64] = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard month >= 1, month <= 12, day >= 1, day <= monthLengths[Int(month - 1)], hour < 24, minute < 60,
            second <= 60
        else { return nil }
        // An optional fraction: its first three digits count, the rest are dropped.
        var at = 19
        var fraction: Int64 = 0
        if b[at] == 46 {
            at += 1
            var digits = 0
            while at < b.count, (48...57).contains(b[at]) {
                if digits < 3 { fraction += Int64(b[at] - 48) * [100, 10, 1][digits] }
                digits += 1
                at += 1
            }
            guard digits > 0 else { return nil }
        }
        // Z, or ±hh:mm, and nothing after.
        guard at < b.count else { return nil }
        var offsetMinutes: Int64 = 0
        if b[at] == 90 || b[at] == 122 {
            guard at + 1 == b.count else { return nil }
        } else {
            guard b[at] == 43 || b[at] == 45, at + 6 == b.count, b[at + 3] == 58, let oh = number(at + 1..<at + 3),
                let om = number(at + 4..<at + 6), oh < 24, om < 60
            else { return nil }
            offsetMinutes = (b[at] == 43 ? 1 : -1) * (oh * 60 + om)
        }
        // Days from 0000-01-01 (a leap year) to the date; 1970-01-01 is day 719,528.
        let daysBeforeYear = 365 * year + (year + 3) / 4 - (year + 99) / 100 + (year + 399) / 400
        let daysBeforeMonth = monthLengths.prefix(Int(month - 1)).reduce(0, +)
        let days = daysBeforeYear + daysBeforeMonth + day - 1 - 719_528
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offsetMinutes * 60
        let ms = seconds * 1000 + fraction
        guard ms >= -62_167_219_200_000, ms <= 253_402_300_799_999 else { return nil }
        return ms
    }
}
