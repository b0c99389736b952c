import SnapshotFormat
import SnapshotMerge

/// Small builders for versions, so that tests read like the contract's examples.
enum Make {
    /// The record id most tests use.
    static let id = RecordID("3F2504E0-4F89-41D3-9A0C-0305E82C3301")!

    /// 2026-11-22T10:00:00.000Z, the base of every test clock.
    static let base = Timestamp(parsing: "2026-11-22T10:00:00.000Z")!

    /// A device ID that must be valid.
    static func device(_ text: String) -> DeviceID {
        guard let device = DeviceID(text) else { fatalError("not a device ID: \(text)") }
        return device
    }

    /// `base` plus `ms` milliseconds.
    static func at(_ ms: Int64) -> Timestamp {
        Timestamp(milliseconds: base.milliseconds + ms)
    }

    /// A JSON object from text, through the strict parser.
    static func object(_ json: String) -> JSONObject {
        guard case .object(let object)? = try? StrictJSON.parse(json) else { fatalError("not a JSON object: \(json)") }
        return object
    }

    /// A vector from device ID text to count.
    static func vector(_ counts: [String: Int64]) -> VersionVector {
        VersionVector(Dictionary(uniqueKeysWithValues: counts.map { (device($0.key), $0.value) }))
    }

    /// A version of `id`: `at` is milliseconds after `base` (nil: no lastModified).
    static func version(
        id: RecordID = Make.id, type: String = "Note", schemaVersion: Int64 = 1, at ms: Int64? = 0,
        by modifiedBy: String? = nil, vector counts: [String: Int64] = [:], deleted: Bool = false,
        fields: String = "{}", unknown: String = "{}"
    ) -> ReadOnly.Version {
        ReadOnly.Version(
            id: id, type: type, schemaVersion: schemaVersion, lastModified: ms.map(at), modifiedBy: modifiedBy.map(device),
            versionVector: vector(counts), deleted: deleted, fields: object(fields), unknownKeys: object(unknown))
    }

    /// The canonical text of a record's normal form.
    static func text(_ record: ReadOnly.Record?) -> String {
        record.map { JSONValue.object($0.normalForm).canonicalString } ?? "nil"
    }
}

/// The contract's merge, written again from its text ("Merging", steps 1 to 3), independently of
/// `RecordMerge` and `LastWriterOrder`, for the property tests to compare with.
enum ContractReading {
    /// The last-writer order: -1, 0, 1. lastModified (none least), modifiedBy bytes (none least),
    /// deleted (true beats false), then the JCS bytes of the normal form.
    static func order(_ a: ReadOnly.Version, _ b: ReadOnly.Version) -> Int {
        switch (a.lastModified?.milliseconds, b.lastModified?.milliseconds) {
        case (nil, .some): return -1
        case (.some, nil): return 1
        case (.some(let x), .some(let y)) where x != y: return x < y ? -1 : 1
        default: break
        }
        let left = a.modifiedBy.map { Array($0.rawValue.utf8) }
        let right = b.modifiedBy.map { Array($0.rawValue.utf8) }
        switch (left, right) {
        case (nil, .some): return -1
        case (.some, nil): return 1
        case (.some(let x), .some(let y)) where x != y: return x.lexicographicallyPrecedes(y) ? -1 : 1
        default: break
        }
        if a.deleted != b.deleted { return a.deleted ? 1 : -1 }
        let x = a.canonicalBytes, y = b.canonicalBytes
        return x == y ? 0 : (x.lexicographicallyPrecedes(y) ? -1 : 1)
    }

    static func greater(_ a: ReadOnly.Version, _ b: ReadOnly.Version) -> Bool { order(a, b) > 0 }

    /// A is dominated by B: every count of A is <= B's, and the vectors differ. Domination is only
    /// among versions with a vector (step 1): an empty vector is neither dominated nor dominating.
    static func dominated(_ a: VersionVector, by b: VersionVector) -> Bool {
        guard !a.isEmpty, !b.isEmpty else { return false }
        let devices = Set(a.counts.keys).union(b.counts.keys)
        return devices.allSatisfy { a[$0] <= b[$0] } && devices.contains { a[$0] != b[$0] }
    }

    /// The vectored versions step 1 keeps: not dominated, and the greatest of their identical vector.
    static func survivingVectored(_ versions: [ReadOnly.Version]) -> [ReadOnly.Version] {
        let vectored = versions.filter { !$0.versionVector.isEmpty }
        let undominated = vectored.filter { v in !vectored.contains { dominated(v.versionVector, by: $0.versionVector) } }
        var kept: [ReadOnly.Version] = []
        for v in undominated where !undominated.contains(where: { $0.versionVector == v.versionVector && greater($0, v) }) {
            if !kept.contains(v) { kept.append(v) }
        }
        return kept
    }

    /// The vector-less version step 2 keeps.
    static func survivingLegacy(_ versions: [ReadOnly.Version]) -> ReadOnly.Version? {
        versions.filter { $0.versionVector.isEmpty }.reduce(nil) { best, v in best.map { greater(v, $0) ? v : $0 } ?? v }
    }

    /// Step 3: the winner and its conflicts, greatest first.
    static func merge(_ versions: [ReadOnly.Version]) -> ReadOnly.Record? {
        let vectored = survivingVectored(versions)
        var remaining = vectored
        if let legacy = survivingLegacy(versions) { remaining.append(legacy) }
        let sorted = remaining.sorted { greater($0, $1) }
        guard let winner = sorted.first else { return nil }
        // A vectored winner keeps the other vectored versions and drops a vector-less one; a
        // vector-less winner keeps every vectored one. Either way the conflicts are the vectored rest.
        return ReadOnly.Record(version: winner, conflicts: sorted.dropFirst().filter { !$0.versionVector.isEmpty })
    }
}

