import Foundation
import PropertyBased
import SnapshotFormat
import SnapshotMerge
import Testing
import TestSupport

/// Properties of `RecordMerge.merge` over the versions published by generated histories of writers
/// that follow the contract (see `WriterHistory`). The contract promises that for such writers the
/// result depends only on the set of versions seen, never on order or grouping.
@Suite("Merge properties over histories of writers that follow the contract")
struct MergePropertyTests {
    /// Runs per property; `MERGE_PROPERTY_RUNS` overrides it for a longer search.
    static let runs = ProcessInfo.processInfo.environment["MERGE_PROPERTY_RUNS"].flatMap { Int($0) } ?? 500

    @Test("Commutative: every order of the published versions merges to the same record")
    func commutative() async {
        await propertyCheck(count: Self.runs, input: HistoryScenario.generator, Gen.int(in: 0...Int.max)) { scenario, seed in
            // Given every version of each record a history published
            var random = SplitMix64(propertySeed: seed)
            for (id, versions) in WriterHistory(scenario).publishedByID {
                // When they are merged in the order made, reversed, and shuffled
                let reference = RecordMerge.merge(versions)
                let orders = [versions.reversed()] + (0..<3).map { _ in versions.shuffled(using: &random) }
                // Then every order gives the same record
                for order in orders {
                    let merged = RecordMerge.merge(order)
                    #expect(merged == reference, "\(id): \(Make.text(merged)) != \(Make.text(reference))")
                }
            }
        }
    }

    @Test("Associative: merging the merges of any grouping equals merging everything at once")
    func associative() async {
        await propertyCheck(count: Self.runs, input: HistoryScenario.generator, Gen.int(in: 0...Int.max)) { scenario, seed in
            // Given the published versions of each record, split at random into 2 to 4 groups, several ways
            var random = SplitMix64(propertySeed: seed)
            for (id, versions) in WriterHistory(scenario).publishedByID {
                let whole = RecordMerge.merge(versions)
                for _ in 0..<6 {
                    let groupCount = Int.random(in: 2...4, using: &random)
                    var groups = Array(repeating: [ReadOnly.Version](), count: groupCount)
                    for version in versions { groups[Int.random(in: 0..<groupCount, using: &random)].append(version) }

                    // When each group is merged and the results are merged, at once and one after another
                    let partial = groups.compactMap { RecordMerge.merge($0) }
                    let ofMerges = RecordMerge.merge(partial.flatMap(\.allVersions))
                    let folded = partial.reduce(nil as ReadOnly.Record?) { RecordMerge.merge(held: $0, incoming: $1.allVersions) }

                    // Then both equal the merge of everything
                    #expect(ofMerges == whole, "\(id), \(groupCount) groups: \(Make.text(ofMerges)) != \(Make.text(whole))")
                    #expect(folded == whole, "\(id), folded: \(Make.text(folded)) != \(Make.text(whole))")
                }
            }
        }
    }

    @Test("Idempotent: merging a result again, or repeating inputs, changes nothing")
    func idempotent() async {
        await propertyCheck(count: Self.runs, input: HistoryScenario.generator, Gen.int(in: 0...Int.max)) { scenario, seed in
            var random = SplitMix64(propertySeed: seed)
            for (id, versions) in WriterHistory(scenario).publishedByID {
                // Given the merge of a record's versions
                let result = try #require(RecordMerge.merge(versions))
                // When its own versions, or the inputs with repeats, are merged again
                let again = RecordMerge.merge(result.allVersions)
                let repeated = RecordMerge.merge(versions + versions.filter { _ in Bool.random(using: &random) } + result.allVersions)
                // Then nothing changes
                #expect(again == result, "\(id): \(Make.text(again)) != \(Make.text(result))")
                #expect(repeated == result, "\(id): \(Make.text(repeated)) != \(Make.text(result))")
                #expect(RecordMerge.merge(held: result, incoming: result.allVersions) == result)
            }
        }
    }

    @Test("Merging what is held with versions it already knows (its own, or older than its winner) gives what the full merge gives")
    func knownVersions() async {
        await propertyCheck(count: Self.runs, input: HistoryScenario.generator, Gen.int(in: 0...Int.max)) { scenario, seed in
            var random = SplitMix64(propertySeed: seed)
            for (id, versions) in WriterHistory(scenario).publishedByID {
                // Given the merge of some of a record's versions, as the store holds it
                let seen = versions.filter { _ in Int.random(in: 0..<4, using: &random) > 0 }
                guard let held = RecordMerge.merge(seen) else { continue }
                // And versions a peer not in step publishes again: some held ones, some older than the
                // winner, and once in a while any of the record's versions, perhaps one the store has
                // not seen (newer, or concurrent: the full merge must decide)
                let older = versions.filter { $0.hasVector && $0.versionVector.isDominated(by: held.version.versionVector) }
                var incoming = held.allVersions.filter { _ in Bool.random(using: &random) }
                incoming += older.filter { _ in Bool.random(using: &random) }
                if Bool.random(using: &random), let any = versions.randomElement(using: &random) {
                    incoming.append(any)
                }
                guard !incoming.isEmpty else { continue }
                // When they are merged with what is held
                let merged = RecordMerge.merge(held: held, incoming: incoming)
                // Then the result is the merge of every version, and what is held when all were known
                let full = RecordMerge.merge(held.allVersions + incoming)
                #expect(merged == full, "\(id): \(Make.text(merged)) != \(Make.text(full))")
                if incoming.allSatisfy({ held.allVersions.contains($0) || older.contains($0) }) {
                    #expect(merged == held, "\(id): \(Make.text(merged)) != \(Make.text(held))")
                }
            }
        }
    }

    /// The rule, derived from the contract's steps 1 to 3: let the survivors be the vectored versions
    /// that no other vectored version dominates and that are the greatest (last-writer order) of their
    /// identical vector. Every survivor is in the result, as the winner or a conflict, whatever the
    /// winner is (a vectored winner keeps the other vectored survivors; a vector-less winner keeps all
    /// of them). The greatest vector-less version is in the result exactly when it is greater than
    /// every survivor, and then it is the winner. Nothing else is ever in the result.
    @Test("Never drops a survivor: the result holds exactly the surviving vectored versions and the greatest vector-less one when it wins")
    func neverDropsASurvivor() async {
        await propertyCheck(count: Self.runs, input: HistoryScenario.generator) { scenario in
            for (id, versions) in WriterHistory(scenario).publishedByID {
                // Given the survivors by the contract's text
                let survivors = ContractReading.survivingVectored(versions)
                let legacy = ContractReading.survivingLegacy(versions)
                let legacyWins = legacy.map { l in survivors.allSatisfy { ContractReading.greater(l, $0) } } ?? false

                // When the versions are merged
                let result = try #require(RecordMerge.merge(versions))
                let held = result.allVersions

                // Then every survivor is held, the vector-less one only when it wins, and nothing else
                for survivor in survivors {
                    #expect(held.contains(survivor), "\(id): dropped \(JSONValue.object(survivor.normalForm).canonicalString)")
                }
                if let legacy {
                    #expect(held.contains(legacy) == legacyWins, "\(id): the greatest vector-less version held=\(held.contains(legacy)), wins=\(legacyWins)")
                    if legacyWins { #expect(result.version == legacy) }
                }
                #expect(held.count == survivors.count + (legacyWins ? 1 : 0), "\(id): \(Make.text(result))")
                #expect(Set(held).count == held.count, "\(id): a version is held twice")
                // and the whole record is what the contract's text gives, conflicts greatest first
                #expect(result == ContractReading.merge(versions), "\(id): \(Make.text(result)) != \(Make.text(ContractReading.merge(versions)))")
                // and the same through both of the merge's paths: a few versions are compared
                // pairwise, and the same ones repeated past that limit go through the general path
                let repeated = RecordMerge.merge(Array(repeating: versions, count: 9).joined())
                #expect(repeated == result, "\(id): \(Make.text(repeated)) != \(Make.text(result))")
            }
        }
    }

    @Test("Convergence: once every device has merged every other, all hold the merge of every version ever published")
    func convergence() async {
        await propertyCheck(count: Self.runs, input: HistoryScenario.generator) { scenario in
            // Given a history, after which every device syncs with every other
            var history = WriterHistory(scenario)
            history.syncEverything()
            // Then each device holds, for each record, the merge of all its published versions
            for (id, versions) in history.publishedByID {
                let expected = RecordMerge.merge(versions)
                for (index, replica) in history.replicas.enumerated() {
                    #expect(replica[id] == expected, "\(WriterHistory.devices[index]) holds \(Make.text(replica[id])) for \(id), expected \(Make.text(expected))")
                }
            }
        }
    }

    @Test("After a resolve, merging the resolution with any set of the versions it saw leaves no conflict")
    func resolutionEndsTheConflict() async {
        await propertyCheck(count: Self.runs, input: HistoryScenario.generator, Gen.int(in: 0...Int.max)) { scenario, seed in
            var random = SplitMix64(propertySeed: seed)
            let history = WriterHistory(scenario)
            for edit in history.edits where edit.isResolution {
                // Given a resolution and the old versions its device had seen: the record it resolved
                // and every earlier vectored version that record's versions dominate (a vector-less
                // version it never saw may be newer, and then wins, rightly)
                let before = try #require(edit.before)
                let resolution = edit.outcome.version
                let earlier = history.published[..<edit.publishedBefore].filter { old in
                    old.id == before.id && before.allVersions.contains { ContractReading.dominated(old.versionVector, by: $0.versionVector) }
                }
                let seen = before.allVersions + earlier
                for held in before.allVersions {
                    #expect(held.versionVector.isEmpty || ContractReading.dominated(held.versionVector, by: resolution.versionVector))
                }
                for _ in 0..<4 {
                    // When it is merged with any subset of them, in any order
                    let subset = seen.filter { _ in Bool.random(using: &random) }
                    let merged = RecordMerge.merge((subset + [resolution]).shuffled(using: &random))
                    // Then the resolution is all that remains
                    #expect(merged == ReadOnly.Record(version: resolution), "\(Make.text(merged))")
                }
            }
        }
    }

    @Test("Every local edit sorts after what it edits, keeps exactly the conflicts it does not dominate, and names no other device's conflict")
    func localEditsFollowTheRules() async {
        await propertyCheck(count: Self.runs, input: HistoryScenario.generator) { scenario in
            for edit in WriterHistory(scenario).edits {
                let new = edit.outcome.version
                #expect(new.modifiedBy == edit.device)
                guard let before = edit.before else {
                    #expect(new.versionVector == Make.vector([edit.device.rawValue: 1]))
                    continue
                }
                // Its stamp is after the version it edits (the clock rule), so it wins over it
                #expect(ContractReading.greater(new, before.version))
                #expect(new.lastModified!.milliseconds >= before.version.lastModified.map { $0.milliseconds + 1 } ?? .min)
                // its count is one above the highest this device has anywhere in the record
                let highest = before.allVersions.map { $0.versionVector[edit.device] }.max()!
                if !edit.isResolution { #expect(new.versionVector[edit.device] == highest + 1) }
                // it dominates the version it edits when that has a vector
                if before.version.hasVector {
                    #expect(ContractReading.dominated(before.version.versionVector, by: new.versionVector))
                }
                // the conflicts kept are exactly those it does not dominate, greatest first
                let kept = before.conflicts.filter { !ContractReading.dominated($0.versionVector, by: new.versionVector) }
                #expect(edit.outcome.record.conflicts == kept)
                // and writers that follow the rules never dominate another device's conflict
                #expect(edit.outcome.supersededOthers.isEmpty)
                // and merging the outcome with what the device held gives the outcome
                #expect(RecordMerge.merge(held: before, incoming: edit.outcome.record.allVersions) == edit.outcome.record)
            }
        }
    }

    @Test("The generated histories exercise what they should: conflicts, legacy winners, resolutions, benign conflicts")
    func generatorCoverage() {
        // Given many histories from a fixed generator seed
        var random = SplitMix64(propertySeed: 2026)
        var conflicted = 0, legacyWinners = 0, legacyWithConflicts = 0, resolutions = 0, benign = 0, superseded = 0
        for _ in 0..<300 {
            let steps = (0..<40).map { _ in
                HistoryStep(kind: .random(in: 0...99, using: &random), actor: .random(in: 0...3, using: &random),
                            other: .random(in: 0...3, using: &random), record: .random(in: 0...2, using: &random),
                            value: .random(in: 0...29, using: &random), advance: .random(in: 0...3, using: &random))
            }
            let history = WriterHistory(HistoryScenario(skews: (0..<4).map { _ in .random(in: -20...20, using: &random) }, steps: steps))
            resolutions += history.edits.filter(\.isResolution).count
            superseded += history.edits.map(\.outcome.supersededOwn.count).reduce(0, +)
            for versions in history.publishedByID.values {
                guard let record = RecordMerge.merge(versions) else { continue }
                if !record.conflicts.isEmpty { conflicted += 1 }
                if !record.version.hasVector { legacyWinners += 1 }
                if !record.version.hasVector && !record.conflicts.isEmpty { legacyWithConflicts += 1 }
                if record.conflicts.contains(where: { $0.hasSameContent(as: record.version) }) { benign += 1 }
            }
        }
        // Then each situation the properties are about occurs often enough to matter
        #expect(conflicted > 30, "records with conflicts: \(conflicted)")
        #expect(legacyWinners > 30, "vector-less winners: \(legacyWinners)")
        #expect(legacyWithConflicts > 10, "vector-less winners with conflicts: \(legacyWithConflicts)")
        #expect(resolutions > 30, "resolutions: \(resolutions)")
        #expect(benign > 5, "benign conflicts: \(benign)")
        #expect(superseded > 5, "own conflicts superseded: \(superseded)")
    }
}
