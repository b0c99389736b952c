import SnapshotFormat

/// The contract's merge of every version of one record.
///
/// Near-linear in the size of the versions for every shape writers make, hostile ones included
/// (docs/hostile-input.md): identical vectors meet in one hash table, the vectors no other
/// dominates are found by one sweep (``VectorAntichain``), and the survivors are sorted once.
public enum RecordMerge {
    /// Merges every version of one record (they share one `id`) into a winner and its conflicts.
    ///
    /// Pure and deterministic: the result depends only on the set of versions, never on their
    /// order or repetition. Returns nil when there are no versions.
    ///
    /// - Important: this merge has no limit: a record whose vectors are entangled on purpose
    ///   can take long. A merge of files from others uses ``merge(_:limit:)``.
    public static func merge(_ versions: some Sequence<ReadOnly.Version>) -> ReadOnly.Record? {
        do {
            return try merge(versions, limit: .unlimited)
        } catch {
            preconditionFailure("a merge without a limit never refuses a record: \(error)")
        }
    }

    /// Merges every version of one record, or refuses the record when its vectors would need more
    /// comparing than `limit` allows.
    ///
    /// - Important: a refusal drops nothing: keep what is held for the record and report the error.
    public static func merge(
        _ versions: some Sequence<ReadOnly.Version>, limit: RecordMergeLimit
    ) throws(RecordMergeError) -> ReadOnly.Record? {
        let versions = Array(versions)
        // The common case: every device holds the very same version.
        if let first = versions.first, versions.dropFirst().allSatisfy({ $0 == first }) {
            return ReadOnly.Record(version: first)
        }
        // The next most common: the others are older versions of one (step 1 drops them all).
        if let newest = dominatingAllOthers(versions) { return ReadOnly.Record(version: newest) }
        // A few versions of small vectors (a concurrent edit among a few devices): the same steps,
        // pairwise. Wide vectors take the general path, whose sweep counts its steps.
        if versions.count <= pairwiseLimit,
            versions.reduce(0, { $0 + $1.versionVector.entries.count }) <= pairwiseEntryLimit
        {
            return mergePairwise(versions)
        }
        // Step 1's identical vectors and step 2: only the greatest of each vector, and of the vector-less.
        var greatestByVector: [VersionVector: GreatestVersion] = [:]
        greatestByVector.reserveCapacity(versions.count)
        var greatestLegacy = GreatestVersion()
        for version in versions {
            if version.hasVector {
                greatestByVector[version.versionVector, default: GreatestVersion()].offer(version)
            } else {
                greatestLegacy.offer(version)
            }
        }
        // Step 1: drop every version whose vector another's dominates.
        let distinct = greatestByVector.values.compactMap(\.version)
        var antichain = VectorAntichain(distinct.map(\.versionVector))
        let stepLimit = limit.steps(forEntries: antichain.entryCount)
        guard let undominated = antichain.undominated(stepLimit: stepLimit) else {
            throw .tooEntangled(
                distinct[0].id, versions: distinct.count, devices: antichain.deviceCount, steps: stepLimit)
        }
        // Step 3: the greatest remaining version wins; the remaining vectored ones are its conflicts
        // (a vector-less loser is older and dropped; a vector-less winner keeps every vectored one).
        var remaining = undominated.map { distinct[$0] }
        if let legacy = greatestLegacy.version { remaining.append(legacy) }
        let ordered = LastWriterOrder.greatestFirst(remaining)
        guard let winner = ordered.first else { return nil }
        return ReadOnly.Record(version: winner, conflicts: ordered.dropFirst().filter(\.hasVector))
    }

    /// Merges what is held for a record with incoming versions of it.
    public static func merge(held: ReadOnly.Record?, incoming: some Collection<ReadOnly.Version>) -> ReadOnly.Record? {
        do {
            return try merge(held: held, incoming: incoming, limit: .unlimited)
        } catch {
            preconditionFailure("a merge without a limit never refuses a record: \(error)")
        }
    }

    /// Merges what is held for a record with incoming versions of it, or refuses the record when
    /// its vectors would need more comparing than `limit` allows.
    ///
    /// - Important: a refusal drops nothing: keep `held` and report the error.
    public static func merge(
        held: ReadOnly.Record?, incoming: some Collection<ReadOnly.Version>, limit: RecordMergeLimit
    ) throws(RecordMergeError) -> ReadOnly.Record? {
        // The common cases, without gathering every version: the files agree on a record the
        // store does not hold yet, or they hold what the store holds.
        if let first = incoming.first {
            if let held {
                if incoming.allSatisfy({ isKnown($0, to: held) }) { return held }
            } else if incoming.allSatisfy({ $0 == first }) {
                return ReadOnly.Record(version: first)
            }
        }
        var all: [ReadOnly.Version] = []
        if let held { all = [held.version] + held.conflicts }
        all.append(contentsOf: incoming)
        return try merge(all, limit: limit)
    }

    /// Up to this many versions are merged by comparing them pairwise (at most 8 × 7 vector
    /// comparisons, each linear in the vectors' sizes): for a record in conflict among a few
    /// devices, the general path's hash table and interned tables cost several times the comparing.
    static let pairwiseLimit = 8
    /// …whose vectors hold this many counts in all at most: the pairwise comparing stays below any
    /// step limit a merge of files uses (``RecordMergeLimit``), so both paths refuse alike.
    static let pairwiseEntryLimit = 64

    /// Steps 1 to 3 for a few versions, comparing them pairwise; the same record as the general
    /// path (MergePropertyTests merges each generated set both ways).
    private static func mergePairwise(_ versions: [ReadOnly.Version]) -> ReadOnly.Record? {
        // Step 1's identical vectors and step 2: only the greatest of each vector, and of the vector-less.
        var greatest: [GreatestVersion] = []
        var greatestLegacy = GreatestVersion()
        for version in versions {
            guard version.hasVector else {
                greatestLegacy.offer(version)
                continue
            }
            if let index = greatest.firstIndex(where: { $0.version?.versionVector == version.versionVector }) {
                greatest[index].offer(version)
            } else {
                var first = GreatestVersion()
                first.offer(version)
                greatest.append(first)
            }
        }
        // Step 1: drop every version whose vector another's dominates.
        let distinct = greatest.compactMap(\.version)
        var remaining = distinct.filter { version in
            !distinct.contains { version.versionVector.isDominated(by: $0.versionVector) }
        }
        // Step 3, as in the general path.
        if let legacy = greatestLegacy.version { remaining.append(legacy) }
        let ordered = LastWriterOrder.greatestFirst(remaining)
        guard let winner = ordered.first else { return nil }
        return ReadOnly.Record(version: winner, conflicts: ordered.dropFirst().filter(\.hasVector))
    }

    /// The version whose vector strictly dominates every other version's (copies of it aside),
    /// or nil when there is none, or when a version has no vector (the full merge decides then).
    /// Two passes: the candidate gives way to each later version that dominates it (a version
    /// dominating all others is never given way), then every other is checked against it.
    private static func dominatingAllOthers(_ versions: [ReadOnly.Version]) -> ReadOnly.Version? {
        guard var candidate = versions.first, candidate.hasVector else { return nil }
        for version in versions.dropFirst() {
            guard version.hasVector else { return nil }
            if candidate.versionVector.isDominated(by: version.versionVector) { candidate = version }
        }
        for version in versions where version != candidate {
            guard version.versionVector.isDominated(by: candidate.versionVector) else { return nil }
        }
        return candidate
    }

    /// Whether merging `version` into `held` changes nothing: it is one of the held versions, or
    /// its vector is strictly dominated by the held winner's, so step 1 drops it. (What is held
    /// is the merge of its own versions, so it stays as it is.) A peer that has not taken in the
    /// merged state, or another tool, publishes such versions over and over: the winner it had,
    /// the other side of a conflict. Held conflicts are compared only when they are few, so that
    /// this stays linear for hostile records; the full merge decides otherwise.
    private static func isKnown(_ version: ReadOnly.Version, to held: ReadOnly.Record) -> Bool {
        if version == held.version { return true }
        if version.hasVector, version.versionVector.isDominated(by: held.version.versionVector) { return true }
        return held.conflicts.count <= 8 && held.conflicts.contains(version)
    }
}
