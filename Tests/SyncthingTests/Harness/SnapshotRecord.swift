import Foundation

/// A record as `syncctl get`/`list --json` print it (the normal form with its conflicts),
/// read with Foundation only: the tests depend on nothing of the package but its executables.
struct SnapshotRecord: CustomStringConvertible {
    let object: [String: Any]

    init(object: [String: Any]) { self.object = object }

    init(json: String) throws {
        guard let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any] else {
            throw HarnessError("not a record: \(json)")
        }
        self.object = object
    }

    /// Every record of a `list --json` output.
    static func list(json: String) throws -> [SnapshotRecord] {
        guard let array = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]] else {
            throw HarnessError("not a list of records: \(json)")
        }
        return array.map(SnapshotRecord.init(object:))
    }

    var id: String { object["id"] as? String ?? "" }
    var modifiedBy: String? { object["modifiedBy"] as? String }
    var lastModified: String? { object["lastModified"] as? String }
    var deleted: Bool { object["deleted"] as? Bool ?? false }
    var fields: [String: Any] { object["fields"] as? [String: Any] ?? [:] }
    /// A string field (`fields.text` for the tests' notes).
    var text: String? { fields["text"] as? String }
    var versionVector: [String: Int] {
        (object["versionVector"] as? [String: Any] ?? [:]).compactMapValues { ($0 as? NSNumber)?.intValue }
    }
    var conflicts: [SnapshotRecord] {
        (object["conflicts"] as? [[String: Any]] ?? []).map(SnapshotRecord.init(object:))
    }
    /// `lastModified` as milliseconds since the epoch.
    var lastModifiedMilliseconds: Int64? { lastModified.flatMap(Timestamps.milliseconds(of:)) }

    var description: String {
        String(
            decoding: (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data(),
            as: UTF8.self)
    }
}

/// The contract's timestamps: `2026-11-22T09:59:58.123Z`, UTC, three fractional digits.
enum Timestamps {
    /// The written form of `milliseconds` since the epoch.
    static func written(_ milliseconds: Int64) -> String {
        let date = Date(timeIntervalSince1970: TimeInterval(milliseconds / 1000))
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", c.year!, c.month!, c.day!, c.hour!, c.minute!, c.second!,
            Int(milliseconds % 1000))
    }

    /// Milliseconds since the epoch of a written UTC timestamp (the form writers emit).
    static func milliseconds(of text: String) -> Int64? {
        let parts = text.dropLast().split(separator: ".")
        guard text.hasSuffix("Z"), parts.count == 2, let fraction = Int64(parts[1].prefix(3)) else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let numbers = parts[0].split(whereSeparator: { "-T:".contains($0) }).compactMap { Int($0) }
        guard numbers.count == 6,
            let date = calendar.date(
                from: DateComponents(
                    year: numbers[0], month: numbers[1], day: numbers[2], hour: numbers[3], minute: numbers[4],
                    second: numbers[5]))
        else { return nil }
        return Int64(date.timeIntervalSince1970.rounded()) * 1000 + fraction
    }

    /// Now, in milliseconds since the epoch.
    static var now: Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }
}
