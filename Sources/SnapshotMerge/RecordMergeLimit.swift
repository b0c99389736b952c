/// How much comparing of version vectors the merge of one record may do before it refuses it.
///
/// The merge is near-linear in the size of a record's versions for every shape that writers make,
/// hostile ones included: many concurrent versions, long chains, wide or identical vectors. Only
/// vectors of several shared devices arranged so that each version must be compared with many
/// others (a shape no writer that follows the contract makes in bulk) cost more, and the limit
/// bounds them: the merge compares at most ``baseSteps`` counts plus ``stepsPerEntry`` per entry
/// of the record's distinct vectors, and past that refuses the record with
/// ``RecordMergeError/tooEntangled(_:versions:devices:steps:)``.
public struct RecordMergeLimit: Hashable, Sendable {
    /// Counts compared, at most, whatever the record's size.
    public var baseSteps: Int
    /// Counts compared, at most, in addition, for each entry of the record's distinct vectors.
    public var stepsPerEntry: Int

    /// A limit of `baseSteps` plus `stepsPerEntry` for each entry of the record's distinct vectors.
    public init(baseSteps: Int, stepsPerEntry: Int) {
        self.baseSteps = baseSteps
        self.stepsPerEntry = stepsPerEntry
    }

    /// What the engine uses: about a third of a second of comparing on this project's machines,
    /// far above what any record written by the contract's rules needs.
    public static let standard = RecordMergeLimit(baseSteps: 50_000_000, stepsPerEntry: 32)

    /// No limit: the merge always finishes, however long the record's shape makes it take.
    public static let unlimited = RecordMergeLimit(baseSteps: .max, stepsPerEntry: 0)

    /// The most counts a record whose distinct vectors hold `entries` entries may compare.
    func steps(forEntries entries: Int) -> Int {
        let (perEntry, overflow) = stepsPerEntry.multipliedReportingOverflow(by: entries)
        let (total, overflowAgain) = baseSteps.addingReportingOverflow(perEntry)
        return overflow || overflowAgain ? .max : total
    }
}
