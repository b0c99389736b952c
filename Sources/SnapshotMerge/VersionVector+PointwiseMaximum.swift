import SnapshotFormat

extension VersionVector {
    /// The pointwise maximum of any number of vectors, in time linear in their entries.
    ///
    /// Folding ``merged(with:)`` over them would rebuild a growing vector once per vector: a record
    /// with thousands of conflicts, each with a device of its own, would cost their square.
    static func pointwiseMaximum(of vectors: some Sequence<VersionVector>) -> VersionVector {
        var counts: [DeviceID: Int64] = [:]
        for vector in vectors {
            for entry in vector.entries {
                counts[entry.device] = max(counts[entry.device, default: 0], entry.count)
            }
        }
        return VersionVector(counts)
    }
}
