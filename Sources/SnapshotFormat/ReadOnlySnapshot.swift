/// A snapshot file and its records, as the contract defines them.
extension ReadOnly {
    /// A record as a snapshot carries it: the current version and its unresolved concurrent versions.
    public struct Record: Hashable, Sendable {
        /// The version every reader sees.
        public var version: Version
        /// Concurrent versions that lost the merge, greatest first in the last-writer order.
        public var conflicts: [Version]

        /// A record from its version and conflicts.
        public init(version: Version, conflicts: [Version] = []) {
            self.version = version
            self.conflicts = conflicts
        }

        /// The record's identity.
        public var id: RecordID { version.id }

        /// The conflicts whose content differs from the current version's: those that need a person.
        public var unresolvedConflicts: [Version] {
            conflicts.filter { !$0.hasSameContent(as: version) }
        }

        /// Whether ``unresolvedConflicts`` has any (found without gathering them): the record is
        /// in conflict and needs a person.
        public var needsAPerson: Bool { conflicts.contains { !$0.hasSameContent(as: version) } }

        /// The record as one JSON object: the normal form of its version plus `conflicts` when any.
        public var normalForm: JSONObject {
            var object = version.normalForm
            if !conflicts.isEmpty {
                object["conflicts"] = .array(conflicts.map { .object($0.normalForm) })
            }
            return object
        }
    }

    /// One device's snapshot file.
    public struct Snapshot: Hashable, Sendable {
        /// The format number this code writes, and the newest it reads.
        public static let currentFormat: Int64 = 2
        /// The oldest format number this code reads (by that format's rules).
        public static let oldestFormat: Int64 = 1

        /// The format number.
        public var format: Int64
        /// The part this file holds; ``PartPrefix/whole`` for a snapshot in one file.
        public var part: PartPrefix = .whole
        /// The device whose file this is.
        public var device: DeviceID
        /// Grows by at least 1 each time the device rewrites its file.
        public var generation: Int64
        /// When the file was written; informational.
        public var writtenAt: Timestamp?
        /// Every record the device knows.
        public var records: [Record]

        /// A snapshot of the current format.
        public init(device: DeviceID, generation: Int64, writtenAt: Timestamp?, records: [Record]) {
            self.format = Self.currentFormat
            self.device = device
            self.generation = generation
            self.writtenAt = writtenAt
            self.records = records
        }
    }
}
