/// The safety valves: warnings for clocks that run ahead, and holding back mass deletions.
public struct SafetySettings: Sendable, Hashable {
    /// A version dated more than this many milliseconds in this device's future is reported,
    /// naming its device (default five minutes). It still merges: that is the contract.
    public var clockSkewMargin: Int64 = 5 * 60 * 1000
    /// A source that would turn more than this share of the live records into tombstones in one
    /// pass is held back (default 0.5; 1 or more turns the valve off).
    public var massDeletionShare: Double = 0.5
    /// …and only when it would delete at least this many records (default 50).
    public var massDeletionMinimum: Int = 50

    /// The defaults.
    public init() {}
}
