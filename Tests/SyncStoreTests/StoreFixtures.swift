import Foundation
import SnapshotFormat
import SyncStore
import Testing

/// A fresh directory under the system's temporary directory; call `remove()` in a `defer`.
struct TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("SyncStoreTests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// The path of `name` inside the directory.
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    func remove() { try? FileManager.default.removeItem(at: url) }
}

/// Builders for the values the store keeps.
enum Sample {
    static let now = Timestamp(milliseconds: 1_795_860_000_000)

    static func device(_ text: String) -> DeviceID { DeviceID(text)! }

    static func id(_ last: Int) -> RecordID {
        RecordID(String(format: "3F2504E0-4F89-41D3-9A0C-%012X", last))!
    }

    static func object(_ json: String) -> JSONObject {
        guard case .object(let object) = try! StrictJSON.parse(json) else { fatalError("not an object: \(json)") }
        return object
    }

    /// A version with a vector, stamped by `by` at `now` + `offset` ms.
    static func version(
        _ id: RecordID, type: String = "Note", by device: String = "laptop", vector: [String: Int64]? = nil,
        offset: Int64 = 0, deleted: Bool = false, fields: String = "{}", unknown: String = "{}", schema: Int64 = 1
    ) -> ReadOnly.Version {
        let counts = (vector ?? [device: 1]).reduce(into: [DeviceID: Int64]()) { $0[DeviceID($1.key)!] = $1.value }
        return ReadOnly.Version(
            id: id, type: type, schemaVersion: schema, lastModified: Timestamp(milliseconds: now.milliseconds + offset),
            modifiedBy: DeviceID(device), versionVector: VersionVector(counts), deleted: deleted,
            fields: object(fields), unknownKeys: object(unknown))
    }

    /// A source row with a recognizable stat.
    static func source(_ name: String, inode: Int64, device: String? = nil, generation: Int64? = nil) -> StoredSource {
        var row = StoredSource(
            name: name, fileSystemDevice: 2049, inode: inode, size: 100 + inode, modifiedNanos: 1_000 * inode,
            changedNanos: 2_000 * inode, lastSeenAt: now.milliseconds)
        row.device = device
        row.role = device.map { name == "\($0).json" ? "own" : "copy" }
        row.generation = generation
        row.highestGeneration = generation
        return row
    }
}

extension RecordCounts {
    /// live, deleted, inConflict, benignOnly (the memberwise initializer is not public).
    var asArray: [Int] { [live, deleted, inConflict, benignOnly] }
}
