import Foundation
import SnapshotFormat
import SnapshotMerge
import Testing

/// Prints how long the merge of each hostile shape takes at n and 10n versions; asserts nothing
/// (speed belongs in benchmarks, not in tests a busy machine can fail). Runs only when
/// `MERGE_TIMING` is set, and means something only in a release build:
///
///     MERGE_TIMING=10000 swift test -c release -Xswiftc -enable-testing --filter MergeTimingTests
///
/// `MERGE_TIMING_ONLY=chain` keeps the shapes whose name contains "chain".
@Suite("Merge timing (prints only; set MERGE_TIMING=n)")
struct MergeTimingTests {
    static let size = ProcessInfo.processInfo.environment["MERGE_TIMING"].flatMap { Int($0) }
    /// Only the shapes whose name contains `MERGE_TIMING_ONLY`, when it is set.
    static let only = ProcessInfo.processInfo.environment["MERGE_TIMING_ONLY"]

    @Test("Each hostile shape's merge time at n and 10n versions", .enabled(if: size != nil))
    func printTimes() {
        let n = Self.size ?? 0
        print("shape | n | ms at n | ms at 10n | ratio")
        for shape in HostileShape.all where Self.only.map(shape.name.contains) ?? true {
            var milliseconds: [Double] = []
            for size in [n, 10 * n] {
                let versions = shape.make(size).versions
                // The best of three runs: the least disturbed by whatever else the machine does.
                let runs = (0..<3).map { _ in
                    ContinuousClock().measure { _ = try? RecordMerge.merge(versions, limit: .standard) }
                }
                let best = runs.min()!
                milliseconds.append(Double(best.components.seconds) * 1e3 + Double(best.components.attoseconds) / 1e15)
            }
            let ratio = milliseconds[1] / max(milliseconds[0], 0.001)
            print(
                String(format: "%@ | %d | %.1f | %.1f | %.1f", shape.name, n, milliseconds[0], milliseconds[1], ratio))
        }
    }
}
