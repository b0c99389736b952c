import Foundation
import SnapshotFormat
import SyncCommandLine
import SyncEngine
import TestSupport
import Testing

/// `syncctl merge --json` writes its report with `MergeReportJSON`, which must give JSONEncoder's
/// bytes (`[.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]`): scripts parse that output.
@Suite("merge --json: MergeReportJSON writes what JSONEncoder writes")
struct MergeReportJSONTests {
    static func foundationText(_ report: MergeReport) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: PrettyJSON.compactingEmptyContainers(Array(try encoder.encode(report))), as: UTF8.self)
    }

    @Test("empty arrays and objects are written [] and {}, brackets inside strings as they are")
    func emptyContainers() {
        let pretty = "{\n  \"a\" : [\n\n  ],\n  \"b\" : {\n\n  },\n  \"c\" : \"[\\n\\n ] \\\" [ ]\",\n  \"d\" : [\n    1\n  ]\n}"
        let compact = "{\n  \"a\" : [],\n  \"b\" : {},\n  \"c\" : \"[\\n\\n ] \\\" [ ]\",\n  \"d\" : [\n    1\n  ]\n}"
        #expect(String(decoding: PrettyJSON.compactingEmptyContainers(Array(pretty.utf8)), as: UTF8.self) == compact)
        // nested empties, a whole document that is one, a string ending in a backslash before one
        for (given, expected) in [
            ("[\n  [\n\n  ],\n  {\n\n  }\n]", "[\n  [],\n  {}\n]"),
            ("[\n\n]", "[]"),
            ("{\n\n}", "{}"),
            ("{\n  \"a\\\\\" : [\n\n  ]\n}", "{\n  \"a\\\\\" : []\n}"),
        ] {
            #expect(String(decoding: PrettyJSON.compactingEmptyContainers(Array(given.utf8)), as: UTF8.self) == expected)
        }
    }

    static func sandboxWithSamples() throws -> Sandbox {
        let sandbox = try Sandbox()
        let samples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("samples/shared").path
        for name in try FileManager.default.contentsOfDirectory(atPath: samples) where name.hasSuffix(".json") {
            try FileManager.default.copyItem(atPath: samples + "/" + name, toPath: sandbox.sharedPath(name))
        }
        return sandbox
    }

    @Test("real reports: a first merge with a broken file, then one with nothing changed")
    func realReports() throws {
        let sandbox = try Self.sandboxWithSamples()
        defer { sandbox.remove() }
        try sandbox.write("broken.json", #"{"format": 1, "device": "broken", "records": ["#)
        let device = try sandbox.device()
        let first = try device.merge()
        #expect(first.sources.count >= 5 && first.sources.contains { $0.reason != nil })
        #expect(MergeReportJSON.text(of: first) == (try Self.foundationText(first)))
        let again = try device.merge()
        #expect(again.sources.allSatisfy { $0.status != .merged })
        #expect(MergeReportJSON.text(of: again) == (try Self.foundationText(again)))
    }

    @Test("every field set, strings that need escaping, empty lists")
    func everyField() throws {
        let sandbox = try Self.sandboxWithSamples()
        defer { sandbox.remove() }
        var report = try sandbox.device().merge()
        let awkward = "q\"\\/\u{1}\u{8}\u{c}\n\r\t\u{1f}\u{7f}é😀\u{2028}"
        var source = report.sources[0]
        source.device = awkward
        source.role = "peer"
        source.generation = -7
        source.reason = awkward
        source.warning = "clock"
        source.records = 3
        source.rejectedRecords = [awkward, "b"]
        source.problemKind = "held_back"
        source.status = .heldBack
        report.sources = [source, report.sources[1]]
        report.ignoredNames = [awkward]
        report.added = 1
        report.changed = 2
        report.deleted = 3
        report.newConflicts = 4
        report.conflicts = 5
        report.publishedGeneration = Int64.max
        report.publishedFiles = ["a.json", "a.1.json"]
        report.removedFiles = []
        report.ownFile = "/x/y/a.json"
        report.timings.read = 6
        report.timings.merge = 7
        report.timings.publish = 8
        report.timings.journaled = true
        report.warnings = [awkward]
        report.refusedRecords = ["r"]
        report.bytesRead = Int64.min
        report.bytesWritten = 9
        report.publishFailure = awkward
        #expect(MergeReportJSON.text(of: report) == (try Self.foundationText(report)))
        #expect(MergeReportJSON.text(of: MergeReport()) == (try Self.foundationText(MergeReport())))
    }
}
