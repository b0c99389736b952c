import SnapshotFormat

/// When this device splits a part of its snapshot into its 16 children, and when it joins 16
/// siblings into their parent: the writer's choice the contract leaves open (docs/parts.md).
///
/// A file-sync engine moves what changed in blocks (Syncthing: 128 KiB), and a record whose
/// length changes shifts every byte after it, so an edit costs about the blocks of the part it
/// lands in; every file also costs each pass a `stat`. Parts of at most 2 MiB keep an edit to a
/// couple of blocks up to a few hundred thousand records and to about a dozen at two million,
/// with at most 256 files per device below about 1.3 million records of 400 bytes. Joining only
/// below an eighth of that keeps a part that grows and shrinks around the limit from being split
/// and joined over and over. A part holding one record is never split: its children could only
/// be that record's part again and 15 empty ones, down to 4 digits (61 files for one large note).
///
/// Pure: sizes in, prefixes out.
public struct PartPolicy: Sendable, Hashable {
    /// A part whose file would be larger than this is split (unless it has 4 digits already).
    public var splitBytes: Int
    /// Sixteen sibling parts whose files together are smaller than this are joined.
    public var joinBytes: Int

    /// The default policy: split above 2 MiB, join below 256 KiB.
    public static let standard = PartPolicy(splitBytes: 2 << 20, joinBytes: 256 << 10)

    /// A policy with these limits (tests use small ones).
    public init(splitBytes: Int, joinBytes: Int) {
        precondition(joinBytes * 2 <= splitBytes, "joining must stay well below splitting, or parts flap")
        self.splitBytes = splitBytes
        self.joinBytes = joinBytes
    }

    /// The records under a prefix, as the policy weighs them.
    public struct Size: Sendable, Hashable {
        /// How many records.
        public var records: Int
        /// The size of their part's file.
        public var fileBytes: Int

        public init(records: Int, fileBytes: Int) {
            self.records = records
            self.fileBytes = fileBytes
        }

        /// The size of a part's file holding `records` records whose lines have `lineBytes` in all.
        public init(records: Int, lineBytes: Int) {
            // ",\n" per line, and the header and the signature around them: 273 bytes besides the
            // device ID (at most 64), the prefix (at most 4 digits) and the generation (at most
            // 16), so never more than 357. (An estimate short of it let a first publication
            // write a part over the split size for long device IDs, split again at the next pass.)
            self.init(records: records, fileBytes: lineBytes + 2 * records + 357)
        }
    }

    /// The leaves that replace `part` when its records have these sizes: `part` itself when it
    /// is not split, else its children's leaves, recursively.
    ///
    /// - Parameter size: the records under a prefix.
    public func leaves(replacing part: PartPrefix, size: (PartPrefix) throws -> Size) rethrows -> [PartPrefix] {
        guard splits(part, try size(part)) else { return [part] }
        return try part.children.flatMap { try leaves(replacing: $0, size: size) }
    }

    /// Whether a part with these records is split: it has fewer than 4 digits, its file is too
    /// large, and it holds more than one record.
    public func splits(_ part: PartPrefix, _ size: Size) -> Bool {
        part.digits < PartPrefix.maximumDigits && size.fileBytes > splitBytes && size.records > 1
    }

    /// The parent to join `leaf` and its 15 siblings into, when all 16 are leaves and small
    /// enough together, or hold one record at most (which the parent holds unsplit: a layout an
    /// earlier release split around one large record); nil otherwise.
    ///
    /// - Parameter size: the records of a leaf, nil when not known (no join then).
    public func joinedParent(of leaf: PartPrefix, leaves: Set<PartPrefix>, size: (PartPrefix) -> Size?) -> PartPrefix? {
        guard let parent = leaf.parent else { return nil }
        var bytes = 0
        var records = 0
        for sibling in parent.children {
            guard leaves.contains(sibling), let size = size(sibling) else { return nil }
            bytes += size.fileBytes
            records += size.records
        }
        return bytes < joinBytes || records <= 1 ? parent : nil
    }
}
