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
        if lhs.lastModified != rhs.lastModified {
            guard let left = lhs.lastModified else { return -1 }
            guard let right = rhs.lastModified else { return 1 }
            return left < right ? -1 : 1
        }
        if lhs.modifiedBy != rhs.modifiedBy {
            guard let left = lhs.modifiedBy else { return -1 }
            guard let right = rhs.modifiedBy else { return 1 }
            return left < right ? -1 : 1
        }
        if lhs.deleted != rhs.deleted { return lhs.deleted ? 1 : -1 }
        // The same version read from several files is the common tie: no bytes needed for it.
        if lhs == rhs { return 0 }
        // Ties this deep are rare: only now pay for the canonical bytes.
        let left = lhs.canonicalBytes
        let right = rhs.canonicalBytes
        if left == right { return 0 }
        return left.lexicographicallyPrecedes(right) ? -1 : 1
    }

    /// The greatest version, or nil for none.
    public static func greatest(_ versions: some Sequence<ReadOnly.Version>) -> ReadOnly.Version? {
        versions.max(by: precedes)
    }

    /// The versions sorted greatest first, the order of a record's `conflicts`.
    public static func greatestFirst(_ versions: [ReadOnly.Version]) -> [ReadOnly.Version] {
        versions.sorted { precedes($1, $0) }
    }
}
