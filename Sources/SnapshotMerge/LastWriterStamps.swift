import SnapshotFormat

/// What the last-writer order compares before its last tie-break, read from a version once:
/// `lastModified` (none is least), `modifiedBy` (none is least), `deleted` (true beats false).
struct LastWriterStamps {
    var lastModified: Int64?
    var modifiedBy: String?
    var deleted: Bool

    init(_ version: ReadOnly.Version) {
        lastModified = version.lastModified?.milliseconds
        modifiedBy = version.modifiedBy?.rawValue
        deleted = version.deleted
    }

    /// -1, 0 or 1 as these stamps sort before, equal to or after `other`'s.
    func compare(_ other: LastWriterStamps) -> Int {
        if lastModified != other.lastModified {
            guard let left = lastModified else { return -1 }
            guard let right = other.lastModified else { return 1 }
            return left < right ? -1 : 1
        }
        if modifiedBy != other.modifiedBy {
            guard let left = modifiedBy else { return -1 }
            guard let right = other.modifiedBy else { return 1 }
            // Device IDs are ASCII, where String's order (a memcmp) is the contract's byte order.
            return left < right ? -1 : 1
        }
        if deleted != other.deleted { return deleted ? 1 : -1 }
        return 0
    }
}
