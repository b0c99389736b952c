import SyncEngine

/// `syncctl merge --json`: the merge report as Foundation's `JSONEncoder` writes it with
/// `[.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]`, byte for byte (`MergeReportJSONTests`
/// compares the two), written without `Codable`.
///
/// Why by hand: the first use of each `Codable` type in a process instantiates its generic
/// containers and looks up its conformances, and in this statically linked binary each lookup
/// scans the whole conformance table. A merge with nothing changed at 1,000,000 records took
/// 28 ms, 3 of them encoding its report (with JSONEncoder or with any `Encoder`: the cost is in
/// the runtime, not the encoder); this writer takes a fraction of a millisecond. Other reports,
/// printed once by commands that are not run in loops, keep `JSONEncoder`.
public enum MergeReportJSON {
    /// The report's text, without a final line feed.
    public static func text(of report: MergeReport) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(256 + report.sources.count * 160)
        PrettyJSON.object(members(of: report)).write(into: &out, indent: 0)
        return String(decoding: out, as: UTF8.self)
    }

    /// The members `MergeReport`'s synthesized `encode(to:)` writes (a nil optional is left out).
    static func members(of report: MergeReport) -> [PrettyJSON.Member] {
        let timings = report.timings
        return [
            ("added", .integer(Int64(report.added))),
            ("bytesRead", .integer(report.bytesRead)),
            ("bytesWritten", .integer(report.bytesWritten)),
            ("changed", .integer(Int64(report.changed))),
            ("conflicts", .integer(Int64(report.conflicts))),
            ("deleted", .integer(Int64(report.deleted))),
            ("ignoredNames", .strings(report.ignoredNames)),
            ("newConflicts", .integer(Int64(report.newConflicts))),
            ("ownFile", .string(report.ownFile)),
            ("publishedFiles", .strings(report.publishedFiles)),
            ("publishedGeneration", report.publishedGeneration.map(PrettyJSON.integer)),
            ("refusedRecords", .strings(report.refusedRecords)),
            ("removedFiles", .strings(report.removedFiles)),
            ("sources", .array(report.sources.map { .object(members(of: $0)) })),
            (
                "timings",
                .object([
                    ("journaled", .bool(timings.journaled)), ("merge", .integer(Int64(timings.merge))),
                    ("publish", .integer(Int64(timings.publish))), ("read", .integer(Int64(timings.read))),
                ])
            ),
            ("warnings", .strings(report.warnings)),
        ].compactMap { key, value in value.map { (key, $0) } }
    }

    static func members(of source: SourceOutcome) -> [PrettyJSON.Member] {
        [
            ("device", source.device.map(PrettyJSON.string)),
            ("generation", source.generation.map(PrettyJSON.integer)),
            ("name", .string(source.name)),
            ("problemKind", source.problemKind.map(PrettyJSON.string)),
            ("reason", source.reason.map(PrettyJSON.string)),
            ("records", source.records.map { .integer(Int64($0)) }),
            ("rejectedRecords", .strings(source.rejectedRecords)),
            ("role", source.role.map(PrettyJSON.string)),
            ("status", .string(source.status.rawValue)),
            ("warning", source.warning.map(PrettyJSON.string)),
        ].compactMap { key, value in value.map { (key, $0) } }
    }
}

/// A JSON value to write as `JSONEncoder` pretty-prints: two spaces per level, `"key" : value`,
/// an empty container as a blank line. An object's members are written in the order given, which
/// must be the byte order of their keys (`.sortedKeys`).
enum PrettyJSON {
    typealias Member = (key: String, value: PrettyJSON)

    case string(String)
    case integer(Int64)
    case bool(Bool)
    case array([PrettyJSON])
    case object([Member])

    static func strings(_ texts: [String]) -> PrettyJSON { .array(texts.map(PrettyJSON.string)) }

    func write(into out: inout [UInt8], indent: Int) {
        switch self {
        case .string(let text): Self.writeString(text, into: &out)
        case .integer(let number): out.append(contentsOf: String(number).utf8)
        case .bool(let flag): out.append(contentsOf: (flag ? "true" : "false").utf8)
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            Self.writeItems(elements, into: &out, indent: indent) { element, out in
                element.write(into: &out, indent: indent + 2)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            Self.writeItems(members, into: &out, indent: indent) { member, out in
                Self.writeString(member.key, into: &out)
                out.append(contentsOf: " : ".utf8)
                member.value.write(into: &out, indent: indent + 2)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// A container's items, one per line and indented; none is a blank line.
    private static func writeItems<Item>(
        _ items: [Item], into out: inout [UInt8], indent: Int, _ writeItem: (Item, inout [UInt8]) -> Void
    ) {
        out.append(UInt8(ascii: "\n"))
        for (index, item) in items.enumerated() {
            if index > 0 { out.append(contentsOf: ",\n".utf8) }
            out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: indent + 2))
            writeItem(item, &out)
        }
        out.append(UInt8(ascii: "\n"))
        out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: indent))
    }

    /// A string as JSONEncoder escapes it: the quote, the backslash and control characters only.
    static func writeString(_ text: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: #"\""#.utf8)
            case UInt8(ascii: "\\"): out.append(contentsOf: #"\\"#.utf8)
            case 0x08: out.append(contentsOf: #"\b"#.utf8)
            case 0x0C: out.append(contentsOf: #"\f"#.utf8)
            case 0x0A: out.append(contentsOf: #"\n"#.utf8)
            case 0x0D: out.append(contentsOf: #"\r"#.utf8)
            case 0x09: out.append(contentsOf: #"\t"#.utf8)
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out.append(contentsOf: #"\u00"#.utf8)
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0x0F)])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
