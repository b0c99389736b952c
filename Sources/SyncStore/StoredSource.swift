import GRDB

/// A file in the shared folder that this device has read: the `source` table.
public struct StoredSource: Codable, Hashable, Sendable, FetchableRecord, PersistableRecord {
    public static let databaseTableName = "source"

    /// The file's name in the shared folder.
    public var name: String
    /// The device inside the file, when it could be read.
    public var device: String?
    /// "own" or "copy", when it could be read.
    public var role: String?
    /// The generation last read from it.
    public var generation: Int64?
    /// The highest generation read at this name: ever, for this device's own names; since the
    /// last time the generation went backwards, for other devices' (each step back is reported once).
    public var highestGeneration: Int64?
    /// The file's identity and stat when last read: a file whose stat is unchanged is not parsed again.
    public var fileSystemDevice: Int64
    public var inode: Int64
    public var size: Int64
    public var modifiedNanos: Int64
    public var changedNanos: Int64
    /// When the file was last merged (ms since the epoch), nil if never.
    public var lastMergedAt: Int64?
    /// When the file was last looked at (ms since the epoch).
    public var lastSeenAt: Int64
    /// The last problem with the file or its records, nil when the last read was clean.
    public var lastProblem: String?
    /// The last warning about the file (a clock ahead, a generation backwards, another device
    /// using this device's ID), nil when none; added by migration v2.
    public var lastWarning: String?
    /// Whether the file was in the folder at the last scan.
    public var present: Bool
    /// Why its last read did not merge it, in one word (`untrusted`: not signed by a key this
    /// device trusts for its device; `invalid_json`, `too_large`, `held_back`…), nil when it
    /// merged; added by migration v9.
    public var problemKind: String?

    /// Whether its last read was rejected for trust.
    public var isUntrusted: Bool { problemKind == "untrusted" }

    /// A source row with only its name and stat.
    public init(
        name: String, fileSystemDevice: Int64, inode: Int64, size: Int64, modifiedNanos: Int64,
        changedNanos: Int64, lastSeenAt: Int64
    ) {
        self.name = name
        self.fileSystemDevice = fileSystemDevice
        self.inode = inode
        self.size = size
        self.modifiedNanos = modifiedNanos
        self.changedNanos = changedNanos
        self.lastSeenAt = lastSeenAt
        self.present = true
    }

    /// Reads a row column by column: a pass reads every source row, hundreds of them in a folder of
    /// parts, and Codable's decoding of each took longer than listing and `stat`ing the folder.
    public init(row: Row) throws {
        name = row["name"]
        device = row["device"]
        role = row["role"]
        generation = row["generation"]
        highestGeneration = row["highestGeneration"]
        fileSystemDevice = row["fileSystemDevice"]
        inode = row["inode"]
        size = row["size"]
        modifiedNanos = row["modifiedNanos"]
        changedNanos = row["changedNanos"]
        lastMergedAt = row["lastMergedAt"]
        lastSeenAt = row["lastSeenAt"]
        lastProblem = row["lastProblem"]
        lastWarning = row["lastWarning"]
        present = row["present"]
        problemKind = row["problemKind"]
    }

    /// Whether the stat matches another's: same file, same size and times.
    public func hasSameStat(as other: StoredSource) -> Bool {
        fileSystemDevice == other.fileSystemDevice && inode == other.inode && size == other.size
            && modifiedNanos == other.modifiedNanos && changedNanos == other.changedNanos
    }
}
