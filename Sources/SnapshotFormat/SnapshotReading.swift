/// What a reader took from one snapshot file.
public struct SnapshotReading: Sendable {
    /// The device the file belongs to (the `device` inside it).
    public var device: DeviceID
    /// Whether the file is the device's own file or a sync-tool copy of it.
    public var role: SourceRole
    /// The file's format number: 1 or 2.
    public var format: Int64 = ReadOnly.Snapshot.currentFormat
    /// The part the file holds (format 2), ``PartPrefix/whole`` for a snapshot in one file.
    public var part: PartPrefix = .whole
    /// The public key the file names (format 2), if any.
    public var key: PublicKey?
    /// The file's signature (format 2), if it is signed.
    public var signature: FileSignature?
    /// The file's generation.
    public var generation: Int64
    /// When the writer says it wrote the file, if it says so validly.
    public var writtenAt: Timestamp?
    /// Every valid version in the file: each record's own version and its valid conflict entries.
    public var versions: [ReadOnly.Version]
    /// The records and conflict entries that were rejected, each with its rule.
    public var problems: [RecordProblem]
    /// Things worth reporting that do not stop anything (an invalid `writtenAt`).
    public var warnings: [String]
    /// How many entries the `records` array had.
    public var recordCount: Int
}
