import SnapshotFormat

/// The contract's last-writer order: a total order on versions.
///
/// In turn: `lastModified` (none is least), `modifiedBy` by UTF-8 bytes (none is least),
/// `deleted` (true beats false), and last the RFC 8785 bytes of the normal form.
public enum LastWriterOrder {
    /// Whether `lhs` sorts before `rhs` (`rhs` is the greater, the one that wins).
    public static func precedes(_ lhs: ReadOnly.Version, _ rhs: ReadOnly.Version) -> Bool {
        compare(lhs, rhs) < 0
    }

    /// -1, 0 or 1 as `lhs` sorts before, equal to or after `rhs`.
    public static func compare(_ lhs: ReadOnly.Version, _ rhs: ReadOnly.Version) -> Int {
        let stamps = compareStamps(lhs, rhs)
        if stamps != 0 { return stamps }
        // The same version read from several files is the common tie: no bytes needed for it.
        if lhs == rhs { return 0 }
        // Ties this deep are rare: only now pay for the canonical bytes.
        return compareBytes(lhs.canonicalBytes, rhs.canonicalBytes)
    }

    /// The greatest version, or nil for none.
    public static func greatest(_ versions: some Sequence<ReadOnly.Version>) -> ReadOnly.Version? {
        var greatest = GreatestVersion()
        for version in versions { greatest.offer(version) }
        return greatest.version
    }

    /// The versions sorted greatest first, the order of a record's `conflicts`.
    ///
    /// The stamps are read once into an array of their own, so that the sort does not reach into
    /// each version's storage in every comparison; each version's canonical bytes are made at most
    /// once, and only for versions that tie on everything before them (a sort that made them in
    /// each comparison would serialize twice per comparison when a hostile file stamps alike).
    public static func greatestFirst(_ versions: [ReadOnly.Version]) -> [ReadOnly.Version] {
        let stamps = versions.map(LastWriterStamps.init)
        var order = versions.indices.sorted { stamps[$0].compare(stamps[$1]) > 0 }
        var start = order.startIndex
        while start < order.endIndex {
            var end = start + 1
            while end < order.endIndex && stamps[order[start]].compare(stamps[order[end]]) == 0 { end += 1 }
            if end - start > 1 {
                let tied = order[start..<end].map { (index: $0, bytes: versions[$0].canonicalBytes) }
                order[start..<end] = ArraySlice(tied.sorted { compareBytes($0.bytes, $1.bytes) > 0 }.map(\.index))
            }
            start = end
        }
        return order.map { versions[$0] }
    }

    /// The order without its last tie-break: `lastModified`, `modifiedBy`, `deleted`.
    static func compareStamps(_ lhs: ReadOnly.Version, _ rhs: ReadOnly.Version) -> Int {
        LastWriterStamps(lhs).compare(LastWriterStamps(rhs))
    }

    /// The last tie-break: canonical bytes compared as bytes.
    static func compareBytes(_ left: [UInt8], _ right: [UInt8]) -> Int {
        if left == right { return 0 }
        return left.lexicographicallyPrecedes(right) ? -1 : 1
    }
}
