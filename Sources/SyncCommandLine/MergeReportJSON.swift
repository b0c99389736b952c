import SnapshotFormat
import SyncEngine

/// `syncctl merge --json`: the merge report as Foundation's `JSONEncoder` writes it with
/// `[.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]`, its empty containers compacted as
/// every report's are (``PrettyJSON``), byte for byte (`MergeReportJSONTests` compares the two),
/// written without `Codable`.
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
        var json = PrettyJSONWriter()
        json.out.reserveCapacity(512 + report.sources.count * 200)
        // Members in their keys' byte order (`.sortedKeys`); a nil optional is left out, as the
        // synthesized `encode(to:)` leaves it out.
        json.object {
            $0.member("added", report.added)
            $0.member("bytesRead", report.bytesRead)
            $0.member("bytesWritten", report.bytesWritten)
            $0.member("changed", report.changed)
            $0.member("conflicts", report.conflicts)
            $0.member("deleted", report.deleted)
            $0.member("ignoredNames", report.ignoredNames)
            $0.member("newConflicts", report.newConflicts)
            $0.member("ownFile", report.ownFile)
            if let failure = report.publishFailure { $0.member("publishFailure", failure) }
            $0.member("publishedFiles", report.publishedFiles)
            if let generation = report.publishedGeneration { $0.member("publishedGeneration", generation) }
            $0.member("refusedRecords", report.refusedRecords)
            $0.member("removedFiles", report.removedFiles)
            $0.key("sources")
            $0.array {
                for source in report.sources {
                    $0.element()
                    $0.object { write(source, into: &$0) }
                }
            }
            $0.key("timings")
            $0.object {
                $0.member("journaled", report.timings.journaled)
                $0.member("merge", report.timings.merge)
                $0.member("passes", report.timings.passes)
                $0.member("publish", report.timings.publish)
                $0.member("read", report.timings.read)
            }
            $0.member("warnings", report.warnings)
        }
        return String(decoding: json.out, as: UTF8.self)
    }

    private static func write(_ source: SourceOutcome, into json: inout PrettyJSONWriter) {
        if let device = source.device { json.member("device", device) }
        if let generation = source.generation { json.member("generation", generation) }
        json.member("name", source.name)
        if let kind = source.problemKind { json.member("problemKind", kind) }
        if let reason = source.reason { json.member("reason", reason) }
        if let records = source.records { json.member("records", records) }
        json.member("rejectedRecords", source.rejectedRecords)
        if let role = source.role { json.member("role", role) }
        json.member("status", source.status.rawValue)
        if let warning = source.warning { json.member("warning", warning) }
    }
}

/// Writes JSON as `JSONEncoder` pretty-prints it: two spaces per level, `"key" : value`, one item
/// per line; an empty container as `[]` or `{}` (``PrettyJSON/compactingEmptyContainers(_:)``).
/// Keys are written in the order given. Strings are escaped as RFC 8785 escapes them
/// (`CanonicalJSON.writeString`), which is what `JSONEncoder` does with
/// `.withoutEscapingSlashes`: the quote, the backslash and control characters only.
struct PrettyJSONWriter {
    var out: [UInt8] = []
    private var indent = 0
    /// Whether the innermost open container has no item yet.
    private var isFirst = false

    /// Starts the next item of the innermost container: its separator, line and indentation.
    mutating func element() {
        out.append(contentsOf: isFirst ? "\n".utf8 : ",\n".utf8)
        isFirst = false
        out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: indent))
    }

    mutating func key(_ key: String) {
        element()
        CanonicalJSON.writeString(key, into: &out)
        out.append(contentsOf: " : ".utf8)
    }

    mutating func object(_ members: (inout PrettyJSONWriter) -> Void) { container("{", "}", members) }

    mutating func array(_ elements: (inout PrettyJSONWriter) -> Void) { container("[", "]", elements) }

    private mutating func container(_ open: Unicode.Scalar, _ close: Unicode.Scalar, _ items: (inout PrettyJSONWriter) -> Void) {
        out.append(UInt8(ascii: open))
        let outer = isFirst
        indent += 2
        isFirst = true
        items(&self)
        indent -= 2
        if !isFirst {  // (empty: `[]`, as ``PrettyJSON/compactingEmptyContainers(_:)`` writes it)
            out.append(UInt8(ascii: "\n"))
            out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: indent))
        }
        out.append(UInt8(ascii: close))
        isFirst = outer
    }

    mutating func member(_ name: String, _ value: String) {
        key(name)
        CanonicalJSON.writeString(value, into: &out)
    }

    mutating func member(_ name: String, _ value: some BinaryInteger) {
        key(name)
        out.append(contentsOf: String(value).utf8)
    }

    mutating func member(_ name: String, _ value: Bool) {
        key(name)
        out.append(contentsOf: (value ? "true" : "false").utf8)
    }

    mutating func member(_ name: String, _ values: [String]) {
        key(name)
        array {
            for value in values {
                $0.element()
                CanonicalJSON.writeString(value, into: &$0.out)
            }
        }
    }
}

/// The pretty-printed JSON of syncctl's reports.
public enum PrettyJSON {
    /// Pretty-printed JSON with each empty array and object written `[]` and `{}`: Foundation's
    /// encoder writes them over three lines (`[`, an empty line, `]`), which scripts comparing text
    /// and people reading it both trip on. Brackets inside strings are left alone.
    public static func compactingEmptyContainers(_ json: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(json.count)
        var strings = JSONStrings()
        var index = json.startIndex
        while index < json.endIndex {
            let byte = json[index]
            out.append(byte)
            index += 1
            if strings.take(byte) { continue }
            if byte == UInt8(ascii: "[") || byte == UInt8(ascii: "{") {
                let close = byte == UInt8(ascii: "[") ? UInt8(ascii: "]") : UInt8(ascii: "}")
                var next = index
                while next < json.endIndex, json[next] == UInt8(ascii: " ") || json[next] == UInt8(ascii: "\n") { next += 1 }
                if next < json.endIndex, json[next] == close {
                    out.append(close)
                    index = next + 1
                }
            }
        }
        return out
    }
}
