/// How many edits each device has made to a record in a version's history.
///
/// Counts are 1 … 2^53−1; a device with no edits is absent. The empty vector is the default
/// and marks a legacy (vector-less) version.
public struct VersionVector: Hashable, Sendable {
    /// The largest count the contract allows: 2^53−1.
    public static let maximumCount: Int64 = 9_007_199_254_740_991

    /// The counts by device; every value is within 1 … ``maximumCount``.
    public private(set) var counts: [DeviceID: Int64]

    /// The empty vector.
    public init() { counts = [:] }

    /// A vector from counts; zero counts are left out.
    public init(_ counts: [DeviceID: Int64]) {
        self.counts = counts.filter { $0.value > 0 }
    }

    /// Whether no device has a count: the version is a legacy, vector-less one.
    public var isEmpty: Bool { counts.isEmpty }

    /// The count for a device, 0 when absent.
    public subscript(device: DeviceID) -> Int64 {
        get { counts[device] ?? 0 }
        set { counts[device] = newValue > 0 ? newValue : nil }
    }

    /// Whether every count here is <= the other's and the vectors differ.
    public func isDominated(by other: VersionVector) -> Bool {
        guard self != other else { return false }
        return counts.allSatisfy { device, count in count <= other[device] }
    }

    /// The pointwise maximum of two vectors.
    public func merged(with other: VersionVector) -> VersionVector {
        var result = self
        for (device, count) in other.counts where count > result[device] {
            result[device] = count
        }
        return result
    }

    /// The vector as a JSON object (device ID to count).
    public var jsonValue: JSONValue {
        let members = counts.sorted { $0.key < $1.key }.map {
            (key: $0.key.rawValue, value: JSONValue.number(Double($0.value)))
        }
        return .object(JSONObject(members))
    }
}
