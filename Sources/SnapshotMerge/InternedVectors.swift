import SnapshotFormat

/// Version vectors packed for comparing many of them: each device becomes its rank in byte order
/// (an integer compares in one instruction, a device ID byte by byte), and every vector's entries
/// lie in two flat arrays, in device order.
struct InternedVectors {
    /// Device ranks, vector after vector, each vector's in increasing order.
    private(set) var devices: [Int32] = []
    /// The counts, beside ``devices``.
    private(set) var counts: [Int64] = []
    /// Where each vector's entries start; one more element than there are vectors.
    private var starts: [Int] = [0]
    /// How many distinct devices the vectors hold.
    let deviceCount: Int

    init(_ vectors: [VersionVector]) {
        var firstSeen: [DeviceID: Int32] = [:]
        firstSeen.reserveCapacity(vectors.count)
        for vector in vectors {
            for entry in vector.entries {
                let seen = firstSeen[entry.device, default: Int32(firstSeen.count)]
                firstSeen[entry.device] = seen
                devices.append(seen)
                counts.append(entry.count)
            }
            starts.append(devices.count)
        }
        // A vector's entries are in device order, so ranking the devices in that order keeps them sorted.
        var rank = [Int32](repeating: 0, count: firstSeen.count)
        // Device IDs are ASCII, where String's order (a memcmp here) is their byte order, and far
        // faster than comparing UTF-8 views element by element.
        for (position, device) in firstSeen.sorted(by: { $0.key.rawValue < $1.key.rawValue }).enumerated() {
            rank[Int(device.value)] = Int32(position)
        }
        devices = devices.map { rank[Int($0)] }
        deviceCount = firstSeen.count
    }

    /// How many vectors there are.
    var count: Int { starts.count - 1 }

    /// The positions of one vector's entries in ``devices`` and ``counts``.
    func entries(of vector: Int) -> Range<Int> { starts[vector]..<starts[vector + 1] }

    /// The vectors, greatest first in the lexicographic order of their counts (devices in order,
    /// an absent device counting 0): a vector's dominators all come before it.
    func greatestFirst() -> [Int] {
        (0..<count).sorted(by: isLexicographicallyGreater)
    }

    private func isLexicographicallyGreater(_ left: Int, _ right: Int) -> Bool {
        var (l, r) = (starts[left], starts[right])
        let (leftEnd, rightEnd) = (starts[left + 1], starts[right + 1])
        while l < leftEnd && r < rightEnd {
            // A device only one of them holds: the one holding it has a count where the other has 0.
            if devices[l] != devices[r] { return devices[l] < devices[r] }
            if counts[l] != counts[r] { return counts[l] > counts[r] }
            l += 1
            r += 1
        }
        return l < leftEnd
    }

    /// Whether `candidate` has at least `vector`'s count for every device `vector` holds, and how
    /// many of those counts were compared to find out (it stops at the first one not reached).
    func isReached(_ vector: Int, by candidate: Int) -> (reached: Bool, compared: Int) {
        let own = entries(of: vector)
        let other = entries(of: candidate)
        // A dominator holds every device the vector holds.
        guard own.count <= other.count else { return (false, 1) }
        var from = other.lowerBound
        var compared = 0
        for entry in own {
            compared += 1
            let device = devices[entry]
            from = firstPosition(notBelow: device, in: from..<other.upperBound)
            guard from < other.upperBound, devices[from] == device, counts[from] >= counts[entry] else {
                return (false, compared)
            }
            from += 1
        }
        return (true, compared)
    }

    /// The first position in `range` whose device is `device` or after it, by galloping then
    /// halving: a narrow vector is looked up in a wide one in time that grows with the log of the
    /// wide one's width, a vector of similar width in time linear in both.
    private func firstPosition(notBelow device: Int32, in range: Range<Int>) -> Int {
        var low = range.lowerBound
        var high = low
        var stride = 1
        while high < range.upperBound && devices[high] < device {
            low = high + 1
            high = min(range.upperBound, high + stride)
            stride *= 2
        }
        // Every position before `low` holds an earlier device; `high` holds `device` or later, or is the end.
        while low < high {
            let middle = (low + high) / 2
            if devices[middle] < device { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
