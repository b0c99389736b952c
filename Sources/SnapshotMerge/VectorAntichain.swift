import SnapshotFormat

/// The vectors that no other vector dominates (the contract's step 1), found by one sweep.
///
/// The sweep visits the vectors greatest first in the lexicographic order of their counts (devices
/// in byte order, an absent device counting 0). Whatever dominates a vector sorts before it there,
/// so when a vector comes up, everything that could dominate it has been seen, and it is enough to
/// look at the antichain kept so far: a dominator that was itself dominated has a kept dominator.
/// Two rules keep the comparing small:
///
/// - a vector with a count above every kept vector's count for that device is kept without
///   comparing: nothing kept reaches it there (a vector with a device of its own, every vector of
///   a 2-device antichain in this order);
/// - otherwise only kept vectors holding its rarest device can dominate it (a dominator holds all
///   of its devices), and those are compared, most recently kept first, each comparison stopping at
///   the first count that is not reached.
///
/// Only those comparisons can cost more than the input's size, and they are counted in ``steps``
/// (one per count compared); a limit stops the sweep, see ``RecordMergeLimit``.
struct VectorAntichain {
    /// Counts compared with kept vectors so far: the work that can outgrow the input.
    private(set) var steps = 0

    private let vectors: InternedVectors
    /// For each device, the kept vectors holding it, oldest first.
    private var holders: [[Int32]]
    /// For each device, the highest count a kept vector has for it (0: none holds it).
    private var highest: [Int64]

    /// Prepares the sweep over distinct, non-empty vectors.
    init(_ distinct: [VersionVector]) {
        vectors = InternedVectors(distinct)
        holders = Array(repeating: [], count: vectors.deviceCount)
        highest = Array(repeating: 0, count: vectors.deviceCount)
    }

    /// How many distinct devices the vectors hold.
    var deviceCount: Int { vectors.deviceCount }
    /// How many entries the vectors hold in all: the input's size.
    var entryCount: Int { vectors.devices.count }

    /// The positions (in the input) of the vectors no other dominates, in sweep order; nil when the
    /// sweep would compare more than `stepLimit` counts.
    mutating func undominated(stepLimit: Int = .max) -> [Int]? {
        var kept: [Int] = []
        for vector in vectors.greatestFirst() {
            guard let dominated = isDominatedByKept(vector, stepLimit: stepLimit) else { return nil }
            if !dominated {
                keep(vector)
                kept.append(vector)
            }
        }
        return kept
    }

    /// Whether a kept vector dominates `vector`; nil when the step limit is reached first.
    private mutating func isDominatedByKept(_ vector: Int, stepLimit: Int) -> Bool? {
        let entries = vectors.entries(of: vector)
        var rarest = entries.lowerBound
        for entry in entries {
            let device = Int(vectors.devices[entry])
            if highest[device] < vectors.counts[entry] { return false }
            if holders[device].count < holders[Int(vectors.devices[rarest])].count { rarest = entry }
        }
        for candidate in holders[Int(vectors.devices[rarest])].reversed() {
            let (reached, compared) = vectors.isReached(vector, by: Int(candidate))
            steps += compared
            if steps > stepLimit { return nil }
            if reached { return true }
        }
        return false
    }

    private mutating func keep(_ vector: Int) {
        for entry in vectors.entries(of: vector) {
            let device = Int(vectors.devices[entry])
            holders[device].append(Int32(vector))
            highest[device] = max(highest[device], vectors.counts[entry])
        }
    }
}
