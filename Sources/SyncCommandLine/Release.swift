import SnapshotFormat

/// The release of syncd and syncctl, for `--version`, bug reports and the daemon's first log line.
public enum Release {
    /// As the first entry of debian/changelog names it (a test keeps the two equal).
    public static let version = "0.1.0"

    /// What `--version` prints: the release, and the snapshot formats read and written.
    public static func versionLine(_ command: String) -> String {
        "\(command) \(version) (reads snapshot formats \(ReadOnly.Snapshot.oldestFormat) to \(ReadOnly.Snapshot.currentFormat), writes \(ReadOnly.Snapshot.currentFormat))"
    }
}
