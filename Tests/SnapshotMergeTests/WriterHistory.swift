import PropertyBased
import SnapshotFormat
import SnapshotMerge

/// One step of a generated history, as plain numbers (so the property library can shrink it).
struct HistoryStep: Sendable, CustomStringConvertible {
    /// 0..<100: what happens (put, delete, resolve, sync, legacy write; see `WriterHistory.run`).
    var kind: Int
    /// Who acts (0..<3 for the vector-aware devices; 0..<4 for a sync target, 3 being the legacy writer).
    var actor: Int
    /// The source of a sync.
    var other: Int
    /// Which record (0..<3).
    var record: Int
    /// A value that picks content, a resolution and the like.
    var value: Int
    /// How many milliseconds of real time pass before the step (0 makes equal timestamps likely).
    var advance: Int

    var description: String { "(\(kind),\(actor),\(other),\(record),\(value),+\(advance)ms)" }

    static let generator = zip(
        Gen.int(in: 0...99), Gen.int(in: 0...3), Gen.int(in: 0...3), Gen.int(in: 0...2), Gen.int(in: 0...29),
        Gen.int(in: 0...3)
    ).map { HistoryStep(kind: $0.0, actor: $0.1, other: $0.2, record: $0.3, value: $0.4, advance: $0.5) }
}

/// A scenario: each device's clock skew (ms) and the steps.
struct HistoryScenario: Sendable, CustomStringConvertible {
    var skews: [Int]
    var steps: [HistoryStep]
    var description: String { "skews \(skews), steps \(steps.map(\.description).joined(separator: " "))" }

    static let generator = zip(Gen.int(in: -20...20).array(of: 4), HistoryStep.generator.array(of: 1...45))
        .map { HistoryScenario(skews: $0.0, steps: $0.1) }
}

/// Writers that follow the contract: three vector-aware devices that edit through `LocalEdit`
/// with their own (skewed, monotonic) clocks and sync by merging another device's whole state, and
/// a legacy writer that writes vector-less versions with plain increasing timestamps.
struct WriterHistory {
    static let devices = ["a", "a.b", "b", "old-app"].map(Make.device)
    static let legacy = 3
    static let ids = [
        "0A000000-0000-4000-8000-000000000001", "0B000000-0000-4000-8000-000000000002",
        "0C000000-0000-4000-8000-000000000003",
    ].map { RecordID($0)! }

    /// A local edit as it happened: what the device held, and what the edit made.
    struct Edit {
        var device: DeviceID
        var before: ReadOnly.Record?
        var outcome: LocalEditOutcome
        var isResolution: Bool
        /// How many versions had been published before this one.
        var publishedBefore: Int
    }

    /// Each device's state: the record it holds per id.
    var replicas: [[RecordID: ReadOnly.Record]] = Array(repeating: [:], count: 4)
    /// Every version ever made, in the order made.
    var published: [ReadOnly.Version] = []
    /// Every local edit and resolution.
    var edits: [Edit] = []

    init(_ scenario: HistoryScenario) {
        var clock: Int64 = 0
        var legacyLast: Int64 = .min
        for step in scenario.steps {
            clock += Int64(step.advance)
            let id = Self.ids[step.record]
            let content = Make.object(#"{"v":\#(step.value % 3)}"#)
            switch step.kind {
            case 0..<50:  // put 0..<30, delete 30..<40, resolve 40..<50 (else put)
                let index = step.actor % 3
                let device = Self.devices[index]
                let now = Make.at(clock + Int64(scenario.skews[index]))
                let current = replicas[index][id]
                let outcome: LocalEditOutcome
                var isResolution = false
                if step.kind >= 40, let current, !current.conflicts.isEmpty {
                    let resolution: Resolution = step.value % 2 == 0
                        ? .take(index: step.value % (current.conflicts.count + 1))
                        : .content(fields: Make.object(#"{"v":\#(10 + step.value % 3)}"#), schemaVersion: 1)
                    outcome = try! LocalEdit.resolve(current: current, with: resolution, device: device, now: now)
                    isResolution = true
                } else if (30..<40).contains(step.kind), let current {
                    outcome = try! LocalEdit.delete(current: current, schemaVersion: 1, device: device, now: now)
                } else {
                    outcome = try! LocalEdit.put(
                        id: id, type: "Note", fields: content, schemaVersion: step.value % 7 == 0 ? 2 : 1,
                        current: current, device: device, now: now)
                }
                edits.append(Edit(device: device, before: current, outcome: outcome, isResolution: isResolution,
                                  publishedBefore: published.count))
                replicas[index][id] = outcome.record
                published.append(outcome.version)
            case 50..<85:
                if step.actor != step.other { sync(into: step.actor, from: step.other) }
            default:
                // The legacy writer knows nothing of vectors or conflicts: it overwrites the record.
                let stamp = max(clock + Int64(scenario.skews[Self.legacy]), legacyLast == .min ? .min : legacyLast + 1)
                legacyLast = stamp
                let version = ReadOnly.Version(
                    id: id, type: "Note", lastModified: Make.at(stamp),
                    modifiedBy: step.value % 4 == 0 ? nil : Self.devices[Self.legacy], fields: content,
                    unknownKeys: step.value % 5 == 0 ? Make.object(#"{"x-legacy":\#(step.value)}"#) : JSONObject())
                replicas[Self.legacy][id] = ReadOnly.Record(version: version)
                published.append(version)
            }
        }
    }

    /// `target` merges every record `source` holds into its own.
    mutating func sync(into target: Int, from source: Int) {
        for (id, record) in replicas[source] {
            replicas[target][id] = RecordMerge.merge(held: replicas[target][id], incoming: [record.version] + record.conflicts)
        }
    }

    /// Every device merges every other's state, twice round, so that all have seen everything.
    mutating func syncEverything() {
        for _ in 0..<2 {
            for target in 0..<4 {
                for source in 0..<4 where source != target { sync(into: target, from: source) }
            }
        }
    }

    /// Every version ever made, by record.
    var publishedByID: [RecordID: [ReadOnly.Version]] {
        Dictionary(grouping: published, by: \.id)
    }
}

extension ReadOnly.Record {
    /// The winner and the conflicts, as versions to merge again.
    var allVersions: [ReadOnly.Version] { [version] + conflicts }
}
