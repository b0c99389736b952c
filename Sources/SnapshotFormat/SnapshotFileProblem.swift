/// Why a whole snapshot file was skipped or rejected; nothing in it merges this time.
public enum SnapshotFileProblem: Error, Hashable, Sendable, CustomStringConvertible {
    /// Not complete, valid I-JSON (truncated, invalid UTF-8, duplicate keys, lone surrogates…).
    case invalidJSON(JSONParseError)
    /// Written in a newer format than this device reads; it is left alone.
    case newerFormat(Int64)
    /// The top level breaks the file rules (a missing `records`, a bad `generation`…).
    case invalidTopLevel(String)
    /// The name is neither `<device>.json` nor a sync-tool copy of the device inside.
    case misnamed(String)
    /// Not signed by a device this device trusts (when it trusts any): see the contract's "Signatures".
    case untrusted(device: DeviceID, reason: String)

    public var description: String {
        switch self {
        case .invalidJSON(let error): "not valid JSON (\(error)); skipped until it changes"
        case .newerFormat(let format):
            "written in snapshot format \(format), newer than the formats 1 and 2 this version reads; left alone (upgrade SnapshotSync to read it)"
        case .invalidTopLevel(let rule): "\(rule); skipped until it changes"
        case .misnamed(let reason): "rejected: \(reason)"
        case .untrusted(_, let reason): "rejected: \(reason)"
        }
    }

    /// The kind of problem, one word for metrics and scripts.
    public var kind: String {
        switch self {
        case .invalidJSON: "invalid_json"
        case .newerFormat: "newer_format"
        case .invalidTopLevel: "invalid_top_level"
        case .misnamed: "misnamed"
        case .untrusted: "untrusted"
        }
    }

    /// A short word for summaries: `skipped` for files that may become readable, `rejected` otherwise.
    public var verdict: String {
        switch self {
        case .misnamed, .untrusted: "rejected"
        case .invalidJSON, .newerFormat, .invalidTopLevel: "skipped"
        }
    }
}
