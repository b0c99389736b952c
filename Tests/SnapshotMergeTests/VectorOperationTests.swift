import PropertyBased
import SnapshotFormat
import Testing

@testable import SnapshotMerge

/// The operations the merge and local edits build on, checked against their definitions on random
/// inputs: each was rewritten so that a wide vector, or thousands of versions, costs linear time.
@Suite("Vector operations and the last-writer order agree with their definitions")
struct VectorOperationTests {
    /// A vector's counts as a dictionary: the definition the operations are checked against.
    static func counts(_ vector: VersionVector) -> [String: Int64] {
        Dictionary(uniqueKeysWithValues: vector.entries.map { ($0.device.rawValue, $0.count) })
    }

    @Test("isDominated, the count of a device and the pointwise maximum agree with their definitions")
    func vectorOperations() async {
        await propertyCheck(count: 300, input: VersionSpec.generator.array(of: 1...12)) { specs in
            // Given vectors from the small vocabulary, empty ones included
            let vectors = specs.map(\.version.versionVector)
            for left in vectors {
                for right in vectors {
                    // Then domination is the contract's (an empty vector is dominated by any other)
                    let byDefinition =
                        right.isEmpty ? false : left.isEmpty ? true : ContractReading.dominated(left, by: right)
                    #expect(
                        left.isDominated(by: right) == byDefinition, "\(Self.counts(left)) by \(Self.counts(right))")
                    // And merged(with:) is the pointwise maximum
                    let maximum = Self.counts(left).merging(Self.counts(right), uniquingKeysWith: max)
                    #expect(Self.counts(left.merged(with: right)) == maximum)
                }
                // And the count of each device is what the entries say, 0 for a device not held
                for name in VersionSpec.deviceNames + ["g", "0"] {
                    #expect(left[Make.device(name)] == Self.counts(left)[name] ?? 0)
                }
            }
            // And the pointwise maximum of all equals folding merged(with:) over them
            let folded = vectors.reduce(VersionVector()) { $0.merged(with: $1) }
            #expect(VersionVector.pointwiseMaximum(of: vectors) == folded)
        }
    }

    @Test("Setting a device's count keeps the entries in device order, and a count of 0 removes the device")
    func settingCounts() async {
        await propertyCheck(count: 200, input: zip(Gen.int(in: 0...5), Gen.int64(in: 0...3)).array(of: 0...20)) {
            writes in
            // Given an empty vector and a dictionary
            var vector = VersionVector()
            var model: [String: Int64] = [:]
            // When the same counts are written to both
            for (device, count) in writes {
                let name = VersionSpec.deviceNames[device]
                vector[Make.device(name)] = count
                model[name] = count > 0 ? count : nil
            }
            // Then they agree, and the entries are sorted by device
            #expect(Self.counts(vector) == model)
            #expect(vector.entries.map(\.device) == vector.entries.map(\.device).sorted())
        }
    }

    @Test("greatestFirst and greatest follow the last-writer order, ties on the stamps decided by the canonical bytes")
    func lastWriterOrder() async {
        await propertyCheck(count: 300, input: VersionSpec.generator.array(of: 0...30)) { specs in
            // Given versions that often tie on lastModified, modifiedBy and deleted
            let versions = specs.map(\.version)
            // When they are sorted greatest first, and the greatest is picked
            let sorted = LastWriterOrder.greatestFirst(versions)
            // Then each is at least the next one, by the contract's reading of the order
            for (greater, lesser) in zip(sorted, sorted.dropFirst()) {
                #expect(ContractReading.order(greater, lesser) >= 0)
            }
            #expect(sorted.count == versions.count && Set(sorted) == Set(versions))
            // And the greatest is the first
            #expect(LastWriterOrder.greatest(versions) == sorted.first)
        }
    }
}
