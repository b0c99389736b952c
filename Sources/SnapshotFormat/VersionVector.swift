/// How many edits each device has made to a record in a version's history.
///
/// Counts are 1 … 2^53−1; a device with no edits is absent. The empty vector is the default
/// and marks a legacy (vector-less) version.
public struct VersionVector: Hashable, Sendable {
    /// The largest count the contract allows: 2^53−1.
    public static let maximumCount: Int64 = 9_007_199_254_740_991

    /// One device's count.
    public struct Entry: Hashable, Sendable {
        public var device: DeviceID
        public var count: Int64
    }

    // Sorted by device, no zero counts. A vector has a handful of devices: a sorted array
    // compares, hashes and copies far cheaper than a dictionary, and a merge compares vectors
    // of every version it reads.
    /// The counts in device order (every count within 1 … ``maximumCount``).
    public private(set) var entries: [Entry]

    /// The counts by device; every value is within 1 … ``maximumCount``.
    public var counts: [DeviceID: Int64] {
        Dictionary(uniqueKeysWithValues: entries.map { ($0.device, $0.count) })
    }

    /// The empty vector.
    public init() { entries = [] }

    /// A vector from counts; zero counts are left out.
    public init(_ counts: [DeviceID: Int64]) {
        entries = counts.filter { $0.value > 0 }.map { Entry(device: $0.key, count: $0.value) }
            .sorted { $0.device < $1.device }
    }

    /// A vector from entries with distinct devices and positive counts, in any order (sorted in
    /// place: a reader makes one of these per version it reads).
    init(unsortedEntries: consuming [Entry]) {
        var sorting = unsortedEntries
        if sorting.count > 1 { sorting.sort { $0.device < $1.device } }
        entries = sorting
    }

    /// Whether no device has a count: the version is a legacy, vector-less one.
    public var isEmpty: Bool { entries.isEmpty }

    /// The count for a device, 0 when absent.
    public subscript(device: DeviceID) -> Int64 {
        get {
            let index = firstIndex(notBefore: device)
            return index < entries.count && entries[index].device == device ? entries[index].count : 0
        }
        set {
            let index = firstIndex(notBefore: device)
            if index < entries.count && entries[index].device == device {
                if newValue > 0 { entries[index].count = newValue } else { entries.remove(at: index) }
            } else if newValue > 0 {
                entries.insert(Entry(device: device, count: newValue), at: index)
            }
        }
    }

    /// Whether every count here is <= the other's and the vectors differ.
    public func isDominated(by other: VersionVector) -> Bool {
        // A dominator holds every device this vector holds, and more or higher counts.
        guard entries.count <= other.entries.count else { return false }
        var differs = entries.count < other.entries.count
        for entry in entries {
            let theirs = other[entry.device]
            guard entry.count <= theirs else { return false }
            if entry.count < theirs { differs = true }
        }
        return differs
    }

    /// The pointwise maximum of two vectors.
    public func merged(with other: VersionVector) -> VersionVector {
        var result: [Entry] = []
        result.reserveCapacity(max(entries.count, other.entries.count))
        var (mine, theirs) = (entries[...], other.entries[...])
        while let left = mine.first, let right = theirs.first {
            if left.device == right.device {
                result.append(Entry(device: left.device, count: max(left.count, right.count)))
                mine = mine.dropFirst()
                theirs = theirs.dropFirst()
            } else if left.device < right.device {
                result.append(left)
                mine = mine.dropFirst()
            } else {
                result.append(right)
                theirs = theirs.dropFirst()
            }
        }
        result += mine
        result += theirs
        var merged = VersionVector()
        merged.entries = result
        return merged
    }

    /// The position of `device` in ``entries``, or where it would go: found by halving, since a
    /// vector may hold thousands of devices and callers look up each device of another vector.
    private func firstIndex(notBefore device: DeviceID) -> Int {
        var (low, high) = (0, entries.count)
        while low < high {
            let middle = (low + high) / 2
            if entries[middle].device < device { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The vector as a JSON object (device ID to count).
    public var jsonValue: JSONValue {
        let members = entries.map { (key: $0.device.rawValue, value: JSONValue.number(Double($0.count))) }
        return .object(JSONObject(members))
    }
}
