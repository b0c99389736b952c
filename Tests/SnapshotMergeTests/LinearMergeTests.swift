import PropertyBased
import SnapshotFormat
import TestSupport
import Testing

@testable import SnapshotMerge

/// The merge of one record is near-linear in the size of its versions for every hostile shape, and
/// gives exactly what the contract's text gives (`ContractReading`, the quadratic reference).
/// Nothing here measures time: the tests count the work the sweep does, which a busy machine
/// cannot change.
@Suite("Linear merge: hostile shapes merge in near-linear work, to exactly the contract's result")
struct LinearMergeTests {
    /// The distinct vectors of a record's versions, as the merge hands them to the sweep.
    static func distinctVectors(_ versions: [ReadOnly.Version]) -> [VersionVector] {
        Array(Set(versions.map(\.versionVector).filter { !$0.isEmpty }))
    }

    @Test("Each hostile shape, shuffled, merges to what the contract's text gives", arguments: HostileShape.all)
    func shapeMatchesTheContract(_ shape: HostileShape) {
        for n in [1, 2, 7, 60] {
            // Given the shape's versions, shuffled
            var random = SplitMix64(seed: UInt64(n))
            let (versions, held) = shape.make(n)
            let shuffled = versions.shuffled(using: &random)
            // When they are merged
            let merged = RecordMerge.merge(shuffled)
            // Then the record is the contract's, and holds as many versions as the shape says
            #expect(merged == ContractReading.merge(versions), "n = \(n): \(Make.text(merged))")
            #expect(merged.map { 1 + $0.conflicts.count } == held, "n = \(n)")
        }
    }

    @Test(
        "On each near-linear shape the sweep compares at most two counts per vector entry, at 1,000 and at 10,000 versions",
        arguments: HostileShape.nearLinear)
    func sweepWorkIsLinear(_ shape: HostileShape) throws {
        for n in [1_000, 10_000] {
            // Given the shape's distinct vectors
            let (versions, held) = shape.make(n)
            var sweep = VectorAntichain(Self.distinctVectors(versions))
            // When the sweep keeps the undominated ones
            let kept = sweep.undominated() ?? []
            // Then it compared at most two counts per entry of the input (a quadratic sweep would
            // compare about n^2 / 2), and kept the shape's survivors
            #expect(
                sweep.steps <= 2 * sweep.entryCount, "n = \(n): \(sweep.steps) steps for \(sweep.entryCount) entries")
            #expect(kept.count <= held)
            // And the whole merge, under the standard limit, holds them
            let merged = try RecordMerge.merge(versions, limit: .standard)
            #expect(merged.map { 1 + $0.conflicts.count } == held, "n = \(n)")
        }
    }

    @Test("The entangled shape is the quadratic one: ten times the versions take about a hundred times the steps")
    func entangledShapeIsQuadratic() {
        // Given the entangled shape at 200 and at 2,000 versions
        var steps: [Int] = []
        for n in [200, 2_000] {
            var sweep = VectorAntichain(Self.distinctVectors(HostileShape.entangled.make(n).versions))
            // When the sweep runs without a limit
            let kept = sweep.undominated() ?? []
            #expect(kept.count == n + 1)
            steps.append(sweep.steps)
        }
        // Then its work grows with the square of the size: this is what the limit is for
        #expect(steps[1] > 50 * steps[0], "steps: \(steps)")
    }

    @Test("A record whose vectors need more comparing than the limit allows is refused with its id, size and the limit")
    func entangledRecordIsRefused() throws {
        // Given an entangled record of 401 versions, held with one conflict, and a small limit
        let (versions, _) = HostileShape.entangled.make(400)
        let held = ReadOnly.Record(version: versions[0], conflicts: [versions[1]])
        let limit = RecordMergeLimit(baseSteps: 1_000, stepsPerEntry: 1)
        let refusal = RecordMergeError.tooEntangled(Make.id, versions: 401, devices: 3, steps: 1_000 + 3 * 401)

        // When it is merged under that limit, then it is refused, whole, and says why
        #expect(
            Self.refusal { () throws(RecordMergeError) in try RecordMerge.merge(versions, limit: limit) } == refusal)
        #expect(
            Self.refusal { () throws(RecordMergeError) in
                try RecordMerge.merge(held: held, incoming: versions, limit: limit)
            } == refusal)
        #expect(refusal.description.contains(Make.id.rawValue) && refusal.description.contains("401 versions"))

        // And under the standard limit, or none, it merges to the contract's result
        let expected = ContractReading.merge(versions)
        #expect(try RecordMerge.merge(versions, limit: .standard) == expected)
        #expect(RecordMerge.merge(versions) == expected)
    }

    /// The error a merge throws, nil when it merges (its result is not printed: it can be huge).
    static func refusal(_ merge: () throws(RecordMergeError) -> ReadOnly.Record?) -> RecordMergeError? {
        do {
            _ = try merge()
            return nil
        } catch {
            return error
        }
    }

    @Test(
        "Random records of every shape merge exactly as the quadratic reference says, and the sweep keeps exactly the undominated vectors"
    )
    func mergeEqualsTheReference() async {
        await propertyCheck(count: 300, input: RandomRecordInput.generator) { input in
            // Given a record's versions: random ones and small hostile shapes, shuffled
            let versions = input.versions
            // When they are merged
            let merged = RecordMerge.merge(versions)
            // Then the record is the reference's
            #expect(merged == ContractReading.merge(versions), "\(Make.text(merged))")
            // And the sweep keeps exactly the vectors no other dominates
            let vectors = Self.distinctVectors(versions)
            var sweep = VectorAntichain(vectors)
            let kept = Set((sweep.undominated() ?? []).map { vectors[$0] })
            let undominated = Set(vectors.filter { v in !vectors.contains { ContractReading.dominated(v, by: $0) } })
            #expect(kept == undominated)
        }
    }
}
