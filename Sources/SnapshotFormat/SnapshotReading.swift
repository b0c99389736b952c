/// What a reader took from one snapshot file.
public struct SnapshotReading: Sendable {
    /// The device the file belongs to (the `device` inside it).
    public var device: DeviceID
    /// Whether the file is the device's own file or a sync-tool copy of it.
    public var role: SourceRole
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
