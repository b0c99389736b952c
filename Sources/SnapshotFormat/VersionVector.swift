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

    /// A vector from entries with distinct devices and positive counts, in any order.
    init(unsortedEntries: [Entry]) {
        entries = unsortedEntries.count < 2 ? unsortedEntries : unsortedEntries.sorted { $0.device < $1.device }
    }

    /// Whether no device has a count: the version is a legacy, vector-less one.
    public var isEmpty: Bool { entries.isEmpty }

    /// The count for a device, 0 when absent.
    public subscript(device: DeviceID) -> Int64 {
        get { entries.first { $0.device == device }?.count ?? 0 }
        set {
            if let index = entries.firstIndex(where: { $0.device == device }) {
                if newValue > 0 { entries[index].count = newValue } else { entries.remove(at: index) }
            } else if newValue > 0 {
                let at = entries.firstIndex { device < $0.device } ?? entries.count
                entries.insert(Entry(device: device, count: newValue), at: at)
            }
        }
    }

    /// Whether every count here is <= the other's and the vectors differ.
    public func isDominated(by other: VersionVector) -> Bool {
        guard self != other else { return false }
        return entries.allSatisfy { $0.count <= other[$0.device] }
    }

    /// The pointwise maximum of two vectors.
    public func merged(with other: VersionVector) -> VersionVector {
        var result = self
        for entry in other.entries where entry.count > result[entry.device] {
            result[entry.device] = entry.count
        }
        return result
    }

    /// The vector as a JSON object (device ID to count).
    public var jsonValue: JSONValue {
        let members = entries.map { (key: $0.device.rawValue, value: JSONValue.number(Double($0.count))) }
        return .object(JSONObject(members))
    }
}
