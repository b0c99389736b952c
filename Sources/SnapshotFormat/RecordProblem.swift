/// Why one record, or one entry of its `conflicts`, was not merged.
public struct RecordProblem: Error, Hashable, Sendable, CustomStringConvertible {
    /// The record's position in the file's `records` array (0-based).
    public var recordIndex: Int
    /// The position of the entry in the record's `conflicts`, or nil for the record itself.
    public var conflictIndex: Int?
    /// The record's `id` as written, when there is one.
    public var recordID: String?
    /// The rule that was broken, for a person.
    public var rule: String

    /// A problem with a record or one of its conflict entries.
    public init(recordIndex: Int, conflictIndex: Int? = nil, recordID: String?, rule: String) {
        self.recordIndex = recordIndex
        self.conflictIndex = conflictIndex
        self.recordID = recordID
        self.rule = rule
    }

    public var description: String {
        var place = "record #\(recordIndex + 1)"
        if let recordID { place += " (id \(recordID))" }
        if let conflictIndex { place += ", conflict entry #\(conflictIndex + 1)" }
        return "\(place): \(rule)"
    }
}
