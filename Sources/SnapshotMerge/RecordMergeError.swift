import SnapshotFormat

/// Why the versions of one record were not merged: the record is refused as a whole.
///
/// - Important: nothing is dropped. The caller keeps what it held for the record and reports the
///   refusal for that record; the source's other records merge as usual, and the same versions are
///   refused again, with the same reason, for as long as a source carries them.
public enum RecordMergeError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The record's version vectors would need more comparing than ``RecordMergeLimit`` allows:
    /// `versions` distinct vectors over `devices` devices, refused after comparing `steps` counts.
    case tooEntangled(RecordID, versions: Int, devices: Int, steps: Int)

    public var description: String {
        switch self {
        case .tooEntangled(let id, let versions, let devices, let steps):
            "record \(id) is not merged: its \(versions) versions have version vectors over \(devices) devices so entangled that merging them would take more than \(steps) comparisons (a shape only a broken or hostile writer makes); what was held for it stays as it was. Remove the shared-folder file that carries them, or resolve the record on the device that wrote them (a resolution makes them cheap to merge); see docs/hostile-input.md"
        }
    }
}
