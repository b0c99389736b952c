import SnapshotFormat

/// The contract's merge of every version of one record.
public enum RecordMerge {
    /// Merges every version of one record (they share one `id`) into a winner and its conflicts.
    ///
    /// Pure and deterministic: the result depends only on the set of versions, never on their
    /// order or repetition. Returns nil when there are no versions.
    public static func merge(_ versions: some Sequence<ReadOnly.Version>) -> ReadOnly.Record? {
        let versions = Array(versions)
        // The common case: every device holds the very same version.
        if let first = versions.first, versions.dropFirst().allSatisfy({ $0 == first }) {
            return ReadOnly.Record(version: first)
        }
        var greatestByVector: [VersionVector: ReadOnly.Version] = [:]
        var greatestLegacy: ReadOnly.Version?
        for version in versions {
            if version.hasVector {
                // Identical vectors: keep only the greatest in the last-writer order.
                if let held = greatestByVector[version.versionVector], !LastWriterOrder.precedes(held, version) {
                    continue
                }
                greatestByVector[version.versionVector] = version
            } else if greatestLegacy.map({ LastWriterOrder.precedes($0, version) }) ?? true {
                greatestLegacy = version
            }
        }
        let candidates = Array(greatestByVector.values)
        let concurrent = candidates.filter { candidate in
            !candidates.contains { candidate.versionVector.isDominated(by: $0.versionVector) }
        }
        guard let winner = LastWriterOrder.greatest(concurrent + (greatestLegacy.map { [$0] } ?? [])) else {
            return nil
        }
        // A vector-less loser is older and dropped when the winner has a vector; when the winner
        // has none, nothing says whether its writer saw the vectored versions, so they stay.
        let conflicts = concurrent.filter { $0 != winner }
        return ReadOnly.Record(version: winner, conflicts: LastWriterOrder.greatestFirst(conflicts))
    }

    /// Merges what is held for a record with incoming versions of it.
    public static func merge(held: ReadOnly.Record?, incoming: some Collection<ReadOnly.Version>) -> ReadOnly.Record? {
        // The common cases, without gathering every version: the files agree on a record the
        // store does not hold yet, or they hold what the store holds.
        if let first = incoming.first {
            if let held {
                if held.conflicts.isEmpty, incoming.allSatisfy({ $0 == held.version }) { return held }
            } else if incoming.allSatisfy({ $0 == first }) {
                return ReadOnly.Record(version: first)
            }
        }
        var all: [ReadOnly.Version] = []
        if let held { all = [held.version] + held.conflicts }
        all.append(contentsOf: incoming)
        return merge(all)
    }
}
