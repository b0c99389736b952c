import Foundation
import SnapshotFormat
import Testing

/// The JSON values of a canonical JSON array printed by syncctl.
func jsonArray(_ text: String) throws -> [JSONValue] {
    guard case .array(let values) = try StrictJSON.parse(text) else { throw HarnessError("not a JSON array: \(text)") }
    return values
}

func jsonObject(_ text: String) throws -> JSONObject {
    guard case .object(let object) = try StrictJSON.parse(text) else { throw HarnessError("not a JSON object: \(text)") }
    return object
}

@Suite("syncctl merge")
struct MergeCommandTests {
    /// `$SNAPSHOT_VECTORS/merge/24-…`, else the repository's `../shared/spec/vectors`.
    static var vector24: URL {
        if let root = ProcessInfo.processInfo.environment["SNAPSHOT_VECTORS"], !root.isEmpty {
            return URL(fileURLWithPath: root).appendingPathComponent("merge/24-invalid-records-rejected-alone")
        }
        return URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("shared/spec/vectors/merge/24-invalid-records-rejected-alone")
    }

    @Test("merge of vector 24 exits 3, prints every rejected record id, and merges exactly the valid records")
    func vector24Merge() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let input = Self.vector24.appendingPathComponent("input")
        for name in try FileManager.default.contentsOfDirectory(atPath: input.path) {
            try workspace.write(name, [UInt8](try Data(contentsOf: input.appendingPathComponent(name))))
        }
        // When desk merges the folder
        let run = try workspace.run(["merge"] + workspace.location())
        // Then it exits 3 and names the rejected records
        #expect(run.status == 3, "\(run)")
        for n in 1...0x11 {
            let id = String(format: "BADBADBA-D000-4BAD-8BAD-%012X", n)
            #expect(run.stdout.contains("rejected record") && run.stdout.contains("(id \(id))"), "\(id) is not reported")
        }
        #expect(run.stdout.contains("Published"))
        // And merged again (nothing read), it still exits 3, and its summary says why
        let again = try workspace.run(["merge"] + workspace.location())
        #expect(again.status == 3 && again.stdout.contains("(1 with a problem that stands)"), "\(again)")
        // And --json lists every rejection, 24 of them
        let json = try workspace.run(["merge", "--json"] + workspace.location())
        #expect(json.status == 3)
        let report = try #require(try json.json() as? [String: Any])
        let sources = try #require(report["sources"] as? [[String: Any]])
        let laptop = try #require(sources.first { $0["name"] as? String == "laptop.json" })
        #expect((laptop["reason"] as? String)?.contains("24 record(s) rejected") == true, "\(laptop)")
        // And the store holds exactly the expected records
        let expected = try String(contentsOf: Self.vector24.appendingPathComponent("expected.jsonl"), encoding: .utf8)
            .split(separator: "\n").map { try StrictJSON.parse(String($0)) }
        let list = try workspace.run(["list", "--json", "--deleted"] + workspace.location())
        #expect(list.status == 0)
        #expect(try jsonArray(list.stdout) == expected)
    }

    @Test("merge of a clean folder exits 0 and publishes once; again, it is up to date; --json parses")
    func cleanMerge() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        try CommandFolder.fill(workspace)
        let first = try workspace.run(["merge"] + workspace.location())
        #expect(first.status == 0, "\(first)")
        #expect(first.stdout.contains("Published") && first.stdout.contains("(generation 1)"))
        #expect(first.stdout.contains("Records: 4 added") && first.stdout.contains("2 in conflict"))
        let second = try workspace.run(["merge", "--json"] + workspace.location(device: nil))
        #expect(second.status == 0, "\(second)")
        let report = try #require(try second.json() as? [String: Any])
        #expect(report["publishedGeneration"] == nil || report["publishedGeneration"] is NSNull)
        #expect((report["sources"] as? [[String: Any]])?.compactMap { $0["status"] as? String } == ["unchanged", "unchanged", "unchanged"])
        #expect(report["conflicts"] as? Int == 2)
        let text = try workspace.run(["merge"] + workspace.location())
        #expect(text.status == 0 && text.stdout.contains("up to date"))
        let published = try Files.published(try workspace.read("desk.json"), name: "desk.json")
        #expect(published.reading.generation == 1 && published.reading.problems.isEmpty)
    }

    @Test("a first merge of many parts prints one line per device; a file with a problem keeps its own line, its status said once")
    func manyPartsSummary() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        // Given two devices' snapshots in 16 parts each (format 2, unsigned), and a truncated file
        for (n, device) in ["laptop", "phone"].enumerated() {
            for digit in Array("0123456789ABCDEF") {
                let id = "\(digit)0000000-0000-4000-8000-00000000000\(n)"
                let record = #"{"id":"\#(id)","type":"Note","versionVector":{"\#(device)":1},"fields":{"n":\#(n)}}"#
                let text = #"{"format":2,"device":"\#(device)","part":"\#(digit)","generation":\#(n + 4),"records":[\#(record)]}"#
                try workspace.write("\(device).\(digit).json", Array(text.utf8))
            }
        }
        try workspace.write("tv.json", Array(#"{"format":1,"device":"tv","generation":1,"records":["#.utf8))
        try workspace.write("wrong.json", Array(#"{"format":1,"device":"zed","generation":1,"records":[]}"#.utf8))

        // When the folder is merged
        let run = try workspace.run(["merge"] + workspace.location())

        // Then each device's clean parts are one line, and the truncated file is named on its own
        #expect(run.status == 3, "\(run)")
        let lines = run.stdout.split(separator: "\n").map(String.init)
        #expect(lines.filter { $0.hasPrefix("  merged") }.count == 2, "\(run.stdout)")
        #expect(lines.contains { $0.hasPrefix("  merged    16 files") && $0.hasSuffix(" laptop, generation 4, 16 records") })
        #expect(lines.contains { $0.hasPrefix("  merged    16 files") && $0.hasSuffix(" phone, generation 5, 16 records") })
        #expect(lines.contains { $0.hasPrefix("  skipped   tv.json") })
        // (its status said once: "rejected  wrong.json: the file is named…", not "…: rejected: the file…")
        let wrong = lines.first { $0.hasPrefix("  rejected  wrong.json") } ?? ""
        #expect(wrong.contains(": the file is named for device 'wrong'") && !wrong.contains(": rejected:"), "\(run.stdout)")
        #expect(run.stdout.contains("Sources: 32 read") && run.stdout.contains("Records: 32 added"))

        // And status sums each device's clean parts up in one line too, unless asked for every file
        let status = try workspace.run(["status"] + workspace.location())
        #expect(status.status == 0, "\(status)")
        let sourceLines = status.stdout.split(separator: "\n").map(String.init).filter { $0.hasPrefix("  ") && !$0.hasPrefix("      ") }
        #expect(sourceLines.contains { $0.hasPrefix("  laptop.*.json (16 parts)") && $0.contains(" own ") && $0.contains("generation 4, last merged ") }, "\(status.stdout)")
        #expect(sourceLines.contains { $0.hasPrefix("  phone.*.json (16 parts)") && $0.contains("generation 5, last merged ") }, "\(status.stdout)")
        #expect(sourceLines.contains { $0.hasPrefix("  tv.json") } && sourceLines.contains { $0.hasPrefix("  wrong.json") }, "\(status.stdout)")
        #expect(status.stdout.contains("      problem: "), "\(status.stdout)")
        #expect(!sourceLines.contains { $0.hasPrefix("  laptop.0.json") }, "\(status.stdout)")
        let every = try workspace.run(["status", "--all-files"] + workspace.location())
        #expect(every.stdout.contains("  laptop.0.json ") && every.stdout.contains("  phone.F.json "), "\(every.stdout)")
        #expect(!every.stdout.contains("(16 parts)"), "\(every.stdout)")
        let json = try #require(try workspace.run(["status", "--json"] + workspace.location()).json() as? [String: Any])
        #expect((json["sources"] as? [[String: Any]])?.count == 35)  // 32 parts, tv, wrong, this device's own file
    }

    @Test("settings come from SYNCD_* variables when no option is given")
    func environmentSettings() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        try CommandFolder.fill(workspace)
        var environment = workspace.environment
        environment["SYNCD_SHARED"] = workspace.shared
        environment["SYNCD_STATE"] = workspace.state()
        environment["SYNCD_DEVICE"] = "envdevice"
        let run = try workspace.run(["merge"], environment: environment)
        #expect(run.status == 0, "\(run)")
        #expect(FileManager.default.fileExists(atPath: workspace.sharedPath("envdevice.json")))
    }
}

/// A clean shared folder for the command tests: records 1 and 4 in conflict, 2 and 3 plain.
enum CommandFolder {
    static func fill(_ workspace: Workspace) throws {
        try workspace.write(
            "phone.json",
            Files.snapshot(
                "phone", generation: 2,
                versions: [
                    Files.version(1, by: "phone", at: 10, fields: object(#"{"v": "phone one"}"#)),
                    Files.version(2, by: "phone", at: 10, fields: object(#"{"v": "two"}"#)),
                    Files.version(4, by: "phone", at: 10, fields: object(#"{"v": "phone four"}"#)),
                ]))
        try workspace.write(
            "laptop.json",
            Files.snapshot(
                "laptop", generation: 5,
                versions: [
                    Files.version(1, by: "laptop", at: 20, fields: object(#"{"v": "laptop one"}"#)),
                    Files.version(3, by: "laptop", at: 20, fields: object(#"{"v": "three"}"#)),
                    Files.version(4, by: "laptop", at: 20, fields: object(#"{"v": "laptop four"}"#)),
                ]))
    }

    static func object(_ json: String) -> JSONObject {
        guard case .object(let object) = try! StrictJSON.parse(json) else { fatalError(json) }
        return object
    }
}
