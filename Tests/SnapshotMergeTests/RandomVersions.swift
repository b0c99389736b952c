import PropertyBased
import SnapshotFormat
import SnapshotMerge
import TestSupport

/// One generated version, as plain numbers drawn from a small vocabulary, so that identical vectors,
/// dominance, equal stamps and byte tie-breaks all happen often.
struct VersionSpec: Sendable, CustomStringConvertible {
    /// Which of the six devices the vector holds (0: no vector, a legacy version).
    var devices: Int
    /// Two bits per device: its count is 1 to 4.
    var counts: Int
    /// Milliseconds after the base time; 4 means no `lastModified`.
    var stamp: Int
    /// Which device made it; 6 means no `modifiedBy`.
    var by: Int
    var deleted: Bool
    /// The content: `{"v": value}`.
    var value: Int

    static let deviceNames = ["a", "b", "c", "d", "e", "f"]

    var description: String { "(\(devices),\(counts),\(stamp),\(by),\(deleted),\(value))" }

    var version: ReadOnly.Version {
        var vector: [String: Int64] = [:]
        for (index, name) in Self.deviceNames.enumerated() where devices & (1 << index) != 0 {
            vector[name] = Int64(1 + (counts >> (2 * index)) & 3)
        }
        return ReadOnly.Version(
            id: Make.id, type: "Note", lastModified: stamp < 4 ? Make.at(Int64(stamp)) : nil,
            modifiedBy: by < 6 ? Make.device(Self.deviceNames[by]) : nil, versionVector: Make.vector(vector),
            deleted: deleted, fields: JSONObject([(key: "v", value: .number(Double(value)))]))
    }

    static let generator = zip(
        Gen.int(in: 0...63), Gen.int(in: 0...4095), Gen.int(in: 0...4), Gen.int(in: 0...6), Gen.bool,
        Gen.int(in: 0...2)
    ).map { VersionSpec(devices: $0.0, counts: $0.1, stamp: $0.2, by: $0.3, deleted: $0.4, value: $0.5) }
}

/// A record's versions: random ones from the small vocabulary, plus a few hostile shapes at small
/// random sizes, shuffled together.
struct RandomRecordInput: Sendable, CustomStringConvertible {
    var specs: [VersionSpec]
    /// Which shapes of ``HostileShape/all`` to add, and at what size.
    var shapes: [ShapePick]
    var shuffleSeed: Int

    struct ShapePick: Sendable {
        var index: Int
        var size: Int
    }

    var description: String {
        "specs \(specs), shapes \(shapes.map { "\(HostileShape.all[$0.index].name) x\($0.size)" }), seed \(shuffleSeed)"
    }

    var versions: [ReadOnly.Version] {
        var versions = specs.map(\.version)
        for pick in shapes { versions += HostileShape.all[pick.index].make(pick.size).versions }
        var random = SplitMix64(propertySeed: shuffleSeed)
        return versions.shuffled(using: &random)
    }

    static let generator = zip(
        VersionSpec.generator.array(of: 0...40),
        zip(Gen.int(in: 0..<HostileShape.all.count), Gen.int(in: 1...12))
            .map { ShapePick(index: $0.0, size: $0.1) }.array(of: 0...3),
        Gen.int(in: 0...Int.max)
    ).map { RandomRecordInput(specs: $0.0, shapes: $0.1, shuffleSeed: $0.2) }
}

extension HostileShape {
    /// Every shape, the entangled one included.
    static let all = nearLinear + [entangled]
}
