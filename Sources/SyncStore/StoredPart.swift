import GRDB
import SnapshotFormat

/// One of this device's parts as it publishes them now: the `ownPart` table (migration v8).
///
/// The rows are the leaves of a tree of hex digits: together they cover every record id once.
/// Prefix "" is the whole snapshot in one file, `<device>.json`.
public struct OwnPart: Codable, Hashable, Sendable, FetchableRecord, PersistableRecord {
    public static let databaseTableName = "ownPart"

    /// The part's prefix, "" for the whole snapshot.
    public var prefix: String
    /// The generation of the part's file last written (or about to be).
    public var generation: Int64
    /// SHA-256 (hex) of the part's records (their line digests, in id order): whether its content changed.
    public var contentDigest: String
    /// The size of its file as last written; -1 when unknown (a snapshot written by format 1).
    public var bytes: Int64
    /// How many records it holds.
    public var records: Int64
    /// Whether its file is known to be in place (renamed into the folder).
    public var isPublished: Bool

    /// Reads a row column by column (faster than Codable; a pass reads every part's row).
    public init(row: Row) throws {
        prefix = row["prefix"]
        generation = row["generation"]
        contentDigest = row["contentDigest"]
        bytes = row["bytes"]
        records = row["records"]
        isPublished = row["isPublished"]
    }

    /// The part's prefix as a ``PartPrefix`` (nil for a row no release writes).
    public var part: PartPrefix? { PartPrefix(stored: prefix) }

    /// A part row.
    public init(
        prefix: String, generation: Int64, contentDigest: String, bytes: Int64, records: Int64, isPublished: Bool
    ) {
        self.prefix = prefix
        self.generation = generation
        self.contentDigest = contentDigest
        self.bytes = bytes
        self.records = records
        self.isPublished = isPublished
    }
}

/// A file this device wrote or was about to write: the `writtenFile` table (migration v8), kept
/// to recognize this device's own files (and to notice another device using its ID).
public struct WrittenFile: Codable, Hashable, Sendable, FetchableRecord, PersistableRecord {
    public static let databaseTableName = "writtenFile"

    /// The part's prefix, "" for the whole snapshot.
    public var part: String
    /// The generation written in the file.
    public var generation: Int64
    /// SHA-256 (hex) of the file's bytes (of its header, footer and records' digest for a file
    /// written by format 1: ``isLegacyDigest``).
    public var fileDigest: String
    /// When it was written (ms since the epoch).
    public var writtenAt: Int64
    /// Whether another writer under this device's ID published this file with this device's content.
    public var isAdopted: Bool
    /// Whether ``fileDigest`` is format 1's digest of header, footer and records.
    public var isLegacyDigest: Bool
    /// The file's size, for a file this device published (nil for one it adopted or took as its
    /// earlier self, and for those written before migration v13).
    public var bytes: Int64?

    /// A written file's row.
    public init(
        part: String, generation: Int64, fileDigest: String, writtenAt: Int64, isAdopted: Bool = false,
        isLegacyDigest: Bool = false, bytes: Int64? = nil
    ) {
        self.part = part
        self.generation = generation
        self.fileDigest = fileDigest
        self.writtenAt = writtenAt
        self.isAdopted = isAdopted
        self.isLegacyDigest = isLegacyDigest
        self.bytes = bytes
    }
}

extension PartPrefix {
    /// A prefix as the store keeps it in `ownPart.prefix` and `writtenFile.part` ("" for the whole
    /// snapshot); nil for text no release writes.
    init?(stored text: String) {
        if text.isEmpty { self = .whole } else { self.init(text) }
    }
}
