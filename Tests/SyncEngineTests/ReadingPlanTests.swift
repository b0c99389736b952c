import Glibc
import SnapshotFormat
import Testing

@testable import SyncEngine

@Suite("Reading plan: which stored lines a small pass may skip")
struct ReadingPlanTests {
    static func files(_ names: [String], size: Int64 = 100) -> [ReadingPlan.File] {
        var raw = stat()
        raw.st_mode = S_IFREG
        raw.st_size = Int(size)
        return names.map { ($0, FileStatus(raw)) }
    }

    static func ranges(_ names: [String]) -> [String] {
        let plan = ReadingPlan(files(names))
        return plan.groups.flatMap { $0.heldRanges.map { $0.digits == 0 ? "whole" : $0.rawValue } }
    }

    @Test("the held ranges of a small pass are the outermost prefixes its files suggest")
    func outermostRanges() {
        #expect(Self.ranges(["laptop.3F.json", "phone.3F.json", "laptop.7C1.json"]) == ["3F", "7C1"])
        #expect(Self.ranges(["laptop.3.json", "phone.3F.json", "tv.3F2A.json", "tv.7C1.json"]) == ["3", "7C1"])
        #expect(Self.ranges(["laptop.3F.json", "phone.json"]) == ["whole"])
        #expect(Self.ranges(["laptop.3F (1).json", "laptop.3F2.sync-conflict-20261122-101010-ABCDEFG.json"]) == ["3F"])
        // A name that is not a part's (lower-case hex, a device ID with a dot) may hold any id.
        #expect(Self.ranges(["laptop.3f.json", "laptop.3F.json"]) == ["whole"])
        #expect(Self.ranges([]) == [])
    }

    @Test("thousands of parts: every 3-digit part of three devices")
    func manyParts() {
        let prefixes = PartPrefix.whole.childrenAt(digits: 3)
        let names = ["a", "b", "c"].flatMap { device in prefixes.map { "\(device).\($0.rawValue).json" } }
        let plan = ReadingPlan(Self.files(names, size: 10))
        #expect(plan.groups.count == 1 && plan.groups[0].files.count == names.count)
        #expect(plan.groups[0].heldRanges == prefixes)
        // With one digit parts of one device as well, those are the outermost.
        let withOne = ReadingPlan(Self.files(names + PartPrefix.whole.children.map { "d.\($0.rawValue).json" }, size: 10))
        #expect(withOne.groups[0].heldRanges == PartPrefix.whole.children)
    }
}
