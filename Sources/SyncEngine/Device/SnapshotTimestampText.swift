import SnapshotFormat

/// The current time in the contract's written form, for log lines.
enum SnapshotTimestampText {
    static func now() -> String {
        Timestamp(milliseconds: SystemCalls.wallClockMilliseconds()).written
    }
}
