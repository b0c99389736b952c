import SnapshotFormat
import SnapshotMerge
import Testing

/// One record's versions in a shape that a hostile or broken writer can put in a shared folder,
/// made at any size: what the merge must handle in time near-linear in that size.
struct HostileShape: Sendable, CustomTestStringConvertible {
    let name: String
    /// The versions at size `n`, and how many versions the merged record holds (winner included).
    let make: @Sendable (_ n: Int) -> (versions: [ReadOnly.Version], held: Int)

    var testDescription: String { name }

    /// Every shape the merge handles in near-linear time.
    static let nearLinear: [HostileShape] = [
        ownDevices, twoSharedDevices, twoSharedDevicesConvex, sharedAndOwnDevices, chain, wideChain,
        narrowUnderWide, identicalVectors, legacy, stampedAlike, mix,
    ]

    static let ownDevices = HostileShape(name: "n concurrent versions, each with a device of its own") { n in
        ((0..<n).map { version($0, by: "d\($0)", vector: ["d\($0)": 1]) }, n)
    }

    static let twoSharedDevices = HostileShape(name: "n concurrent versions of the same two devices") { n in
        ((0..<n).map { version($0, by: "a", vector: ["a": Int64($0 + 1), "b": Int64(n - $0)]) }, n)
    }

    static let twoSharedDevicesConvex = HostileShape(
        name: "n concurrent versions of the same two devices, counts on a convex curve"
    ) { n in
        let versions = (0..<n).map { i in
            version(i, by: "b", vector: ["a": Int64((i + 1) * (i + 1)), "b": Int64((n - i) * (n - i))])
        }
        return (versions, n)
    }

    static let sharedAndOwnDevices = HostileShape(
        name: "n concurrent versions sharing two devices, each with one of its own"
    ) { n in
        ((0..<n).map { version($0, by: "d\($0)", vector: ["s1": 5, "s2": 7, "d\($0)": 1]) }, n)
    }

    static let chain = HostileShape(name: "n versions in one chain") { n in
        ((0..<n).map { version($0, by: "a", vector: ["a": Int64($0 + 1), "b": 1]) }, 1)
    }

    static let wideChain = HostileShape(name: "n versions in one chain of 16-device vectors") { n in
        let devices = (0..<16).map { "w\($0)" }
        let versions = (0..<n).map { i in
            version(i, by: "w0", vector: Dictionary(uniqueKeysWithValues: devices.map { ($0, Int64(i + 1)) }))
        }
        return (versions, 1)
    }

    static let narrowUnderWide = HostileShape(name: "n narrow versions under two concurrent vectors of n devices") {
        n in
        let wide = Dictionary(uniqueKeysWithValues: (0..<n).map { ("d\($0)", Int64(2)) })
        var top = [
            version(n, by: "x", vector: wide.merging(["x": 1]) { $1 }),
            version(n + 1, by: "y", vector: wide.merging(["y": 1]) { $1 }),
        ]
        top += (0..<n).map { version($0, by: "d\($0)", vector: ["d\($0)": 1]) }
        return (top, 2)
    }

    static let identicalVectors = HostileShape(name: "n versions of one vector, stamped alike, content differing") {
        n in
        ((0..<n).map { version(0, by: "a", vector: ["a": 3, "b": 1], value: $0) }, 1)
    }

    static let legacy = HostileShape(name: "n vector-less versions stamped alike") { n in
        ((0..<n).map { version(0, by: "old", vector: [:], value: $0) }, 1)
    }

    static let stampedAlike = HostileShape(name: "n concurrent versions stamped alike (order by canonical bytes)") {
        n in
        ((0..<n).map { version(0, by: "x", vector: ["d\($0)": 1], value: $0) }, n)
    }

    static let mix = HostileShape(name: "a mix of every shape above, n versions in all") { n in
        let part = max(1, n / 10)
        var versions: [ReadOnly.Version] = []
        var held = 0
        for shape in [ownDevices, twoSharedDevices, sharedAndOwnDevices, identicalVectors, stampedAlike] {
            // Each part's devices are its own ("p2.d5"), so the parts stay concurrent with each other.
            let (made, kept) = shape.make(part)
            versions += made.map { renamed($0, prefix: "p\(held)") }
            held += kept
        }
        versions += chain.make(part).versions + legacy.make(part).versions
        versions += wideChain.make(part).versions + narrowUnderWide.make(part).versions
        // The chain's top, the wide chain's top and the two wide vectors are concurrent with the rest;
        // the greatest vector-less version is older than every vectored one (stamped at 0 ms) and dropped.
        return (versions, held + 4)
    }

    /// Three devices, arranged so that no count of a version from the second half exceeds the first
    /// half's: each must be compared with every version kept before it, and the merge is quadratic.
    /// No writer that follows the contract makes it in bulk.
    static let entangled = HostileShape(name: "n versions of three devices entangled on purpose") { n in
        let k = Int64(max(1, n / 2))
        let first = (0...k).map { j in version(Int(j), by: "a", vector: ["a": k + 2, "b": j + 1, "c": k - j + 1]) }
        let second = (0..<k).map { i in version(Int(i), by: "b", vector: ["a": k + 1 - i, "b": k - i + 1, "c": i + 2]) }
        return (first + second, first.count + second.count)
    }

    /// A version of `Make.id` stamped `ms` after the base time, with content `{"v": value}`.
    static func version(_ ms: Int, by device: String, vector: [String: Int64], value: Int = 0) -> ReadOnly.Version {
        ReadOnly.Version(
            id: Make.id, type: "Note", lastModified: Make.at(Int64(ms)), modifiedBy: Make.device(device),
            versionVector: Make.vector(vector), fields: JSONObject([(key: "v", value: .number(Double(value)))]))
    }

    /// The version with every device of its vector renamed `<prefix>.<device>`.
    static func renamed(_ version: ReadOnly.Version, prefix: String) -> ReadOnly.Version {
        var renamed = version
        renamed.versionVector = Make.vector(
            Dictionary(uniqueKeysWithValues: version.versionVector.entries.map { ("\(prefix).\($0.device)", $0.count) })
        )
        return renamed
    }
}
