import Foundation
import SnapshotFormat
import Testing
import TestSupport

/// One case of `timestamps.json`.
struct TimestampVector: Sendable, CustomTestStringConvertible {
    /// The input: a string, or anything else, which a reader must refuse.
    enum Input: Sendable {
        case text(String)
        case notAString(String)
    }

    let input: Input
    let valid: Bool
    let ms: Int64?
    let written: String?
    let note: String

    var testDescription: String {
        switch input {
        case .text(let text): return "\"\(text)\" (\(note))"
        case .notAString(let value): return "\(value) (\(note))"
        }
    }

    static func all() throws -> [TimestampVector] {
        try Fixtures.jsonObjects("timestamps.json").map { object in
            let input: Input
            if let text = object["input"] as? String {
                input = .text(text)
            } else {
                input = .notAString(String(describing: object["input"] ?? "nothing"))
            }
            guard let valid = object["valid"] as? Bool else {
                throw FixtureError.malformed("timestamps.json", "a case without 'valid': \(object)")
            }
            return TimestampVector(
                input: input, valid: valid, ms: Fixtures.int64(object["ms"]),
                written: object["written"] as? String, note: object["note"] as? String ?? "no note")
        }
    }
}

@Suite("Timestamps")
struct TimestampTests {
    @Test("Every case of timestamps.json reads as the vectors say", arguments: try TimestampVector.all())
    func vector(_ vector: TimestampVector) throws {
        guard case .text(let text) = vector.input else {
            // Only strings are timestamps; the model never hands anything else to the parser.
            #expect(!vector.valid, "a non-string input must be invalid")
            return
        }
        let parsed = Timestamp(parsing: text)
        guard vector.valid else {
            #expect(parsed == nil, "should be invalid, read as \(parsed?.milliseconds ?? 0) ms")
            return
        }
        let timestamp = try #require(parsed, "should be valid")
        #expect(timestamp.milliseconds == vector.ms)
        #expect(timestamp.written == vector.written)
        #expect(timestamp.description == vector.written)
        #expect(timestamp.isWithinValidRange)
        #expect(Timestamp(parsing: timestamp.written) == timestamp, "the written form reads back")
    }

    @Test("The vectors hold 78 cases, 35 of them invalid")
    func vectorCount() throws {
        let vectors = try TimestampVector.all()
        #expect(vectors.count == 78)
        #expect(vectors.filter { !$0.valid }.count == 35)
    }

    @Test("The written form reads back as the same milliseconds, across the valid range")
    func roundTrip() {
        var random = SplitMix64(seed: 0x5EED_2026)
        let range = Timestamp.earliest.milliseconds...Timestamp.latest.milliseconds
        for _ in 0..<20_000 {
            let timestamp = Timestamp(milliseconds: Int64.random(in: range, using: &random))
            let written = timestamp.written
            #expect(written.utf8.count == 24, "\(written)")
            #expect(Timestamp(parsing: written) == timestamp, "\(timestamp.milliseconds) wrote \(written)")
        }
    }

    @Test("Every day of selected years is written and read like a simple calendar says")
    func calendarWalk() {
        let spans: [ClosedRange<Int>] = [0...4, 1599...1601, 1899...1901, 1968...1972, 1999...2001, 2099...2101, 9996...9999]
        for years in spans {
            var expectedMs = Timestamp(parsing: "\(pad(years.lowerBound, 4))-01-01T00:00:00Z")!.milliseconds
            for year in years {
                let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
                let monthLengths = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
                for (index, length) in monthLengths.enumerated() {
                    for day in 1...length {
                        let date = "\(pad(year, 4))-\(pad(index + 1, 2))-\(pad(day, 2))"
                        let written = "\(date)T00:00:00.000Z"
                        #expect(Timestamp(milliseconds: expectedMs).written == written)
                        #expect(Timestamp(parsing: written)?.milliseconds == expectedMs)
                        expectedMs += 86_400_000
                    }
                    #expect(Timestamp(parsing: "\(pad(year, 4))-\(pad(index + 1, 2))-\(pad(length + 1, 2))T00:00:00Z") == nil)
                }
            }
        }
    }

    @Test("Before 1970 extra digits floor the instant", arguments: [
        ("1969-12-31T23:59:59.9999Z", Int64(-1)),
        ("1969-12-31T23:59:59.0001Z", -1000),
        ("1969-12-31T23:59:59.0009999Z", -1000),
        ("1969-12-31T23:59:58.5555555Z", -1445),
        ("1970-01-01T00:59:59.9999+01:00", -1),
        ("1970-01-01T00:00:00.0009Z", 0),
    ])
    func floorBeforeEpoch(text: String, ms: Int64) {
        #expect(Timestamp(parsing: text)?.milliseconds == ms)
    }

    @Test("Negative milliseconds are written as the instant before the epoch")
    func writtenBeforeEpoch() {
        #expect(Timestamp(milliseconds: -1).written == "1969-12-31T23:59:59.999Z")
        #expect(Timestamp(milliseconds: -1000).written == "1969-12-31T23:59:59.000Z")
        #expect(Timestamp(milliseconds: -1001).written == "1969-12-31T23:59:58.999Z")
        #expect(Timestamp(milliseconds: -86_400_000).written == "1969-12-31T00:00:00.000Z")
    }

    @Test("The valid range is years 0000 through 9999 in UTC, ends included")
    func validRangeEnds() {
        #expect(Timestamp.earliest.written == "0000-01-01T00:00:00.000Z")
        #expect(Timestamp.latest.written == "9999-12-31T23:59:59.999Z")
        #expect(Timestamp(parsing: Timestamp.earliest.written) == .earliest)
        #expect(Timestamp(parsing: Timestamp.latest.written) == .latest)
        #expect(Timestamp.earliest.isWithinValidRange && Timestamp.latest.isWithinValidRange)

        let before = Timestamp(milliseconds: Timestamp.earliest.milliseconds - 1)
        let after = Timestamp(milliseconds: Timestamp.latest.milliseconds + 1)
        #expect(!before.isWithinValidRange && !after.isWithinValidRange)
        #expect(before.written == "-0001-12-31T23:59:59.999Z")
        #expect(after.written == "10000-01-01T00:00:00.000Z")
        #expect(Timestamp(parsing: before.written) == nil && Timestamp(parsing: after.written) == nil)

        #expect(Timestamp(parsing: "9999-12-31T23:59:60.999Z") == nil, "a leap second into 10000")
        #expect(Timestamp(parsing: "9999-12-31T23:58:60.999Z")?.written == "9999-12-31T23:59:00.999Z")
        #expect(Timestamp(parsing: "0000-01-01T00:00:00.000+00:01") == nil)
        #expect(Timestamp(parsing: "0000-01-01T00:00:00.000-00:00") == .earliest)
    }

    @Test("Any Int64 is written without trapping")
    func extremes() {
        #expect(!Timestamp(milliseconds: .min).written.isEmpty)
        #expect(!Timestamp(milliseconds: .max).written.isEmpty)
        #expect(Timestamp(milliseconds: 0).written == "1970-01-01T00:00:00.000Z")
    }

    @Test("Timestamps order and compare by their milliseconds")
    func ordering() {
        let parsed = ["2026-11-22T11:59:58.124+02:00", "2026-11-22T09:59:58.1239Z", "1969-12-31T23:59:59.9999Z"]
            .compactMap(Timestamp.init(parsing:))
        #expect(parsed.map(\.milliseconds) == [1_795_341_598_124, 1_795_341_598_123, -1])
        #expect(parsed.sorted() == [parsed[2], parsed[1], parsed[0]])
        #expect(Timestamp(parsing: "2026-11-22T11:59:58.123+02:00") == Timestamp(parsing: "2026-11-22T09:59:58.123Z"))
        #expect(Set(parsed + parsed).count == 3)
    }

    @Test("A fraction may have any number of digits")
    func longFraction() {
        let digits = String(repeating: "9", count: 500)
        #expect(Timestamp(parsing: "2026-11-22T09:59:58.\(digits)Z")?.milliseconds == 1_795_341_598_999)
    }

    @Test("Near misses are refused", arguments: [
        "2026-11-22T09:59:58.123\u{2212}02:00",  // minus sign, not hyphen-minus
        "2026-11-22T09:59:58.123Z\n",
        "\u{FEFF}2026-11-22T09:59:58Z",
        "2026-11-22T09:59:58.-1Z",
        "2026-11-22T09:59:58.1.2Z",
        "2026-11-22T09:59:58+2:00",
        "2026-11-22T09:59:58+02:0",
        "2026-11-22T09:59:58+02:000",
        "2026-11-22T09:59:58-",
        "2026-11-22T09:59:58.123\u{301}Z",
        "2026-1-22T09:59:58Z",
        "2026-11-2T09:59:58Z",
        "2026/11/22T09:59:58Z",
        "2026-11-22T09-59-58Z",
        "2026-11-22X09:59:58Z",
    ])
    func nearMisses(text: String) {
        #expect(Timestamp(parsing: text) == nil)
    }
}


private func pad(_ value: Int, _ width: Int) -> String {
    let digits = String(value)
    return String(repeating: "0", count: max(0, width - digits.count)) + digits
}
