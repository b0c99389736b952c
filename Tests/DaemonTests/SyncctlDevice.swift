import Foundation
import SnapshotFormat
import Testing

/// One device of a sandbox's shared folder, as `syncctl` sees it through the device's own state
/// directory (`sandbox.state(device)`), whether a `syncd` runs for it or not.
struct SyncctlDevice {
    let device: String
    let sandbox: Sandbox

    init(_ device: String, in sandbox: Sandbox) {
        self.device = device
        self.sandbox = sandbox
    }

    /// Runs `syncctl ARGUMENTS --shared … --state … --device …` to the end.
    @discardableResult
    func syncctl(_ arguments: [String], stdin: String = "") throws -> ToolRun {
        try sandbox.syncctl(arguments + sandbox.location(device), stdin: stdin)
    }

    /// Runs `syncctl ARGUMENTS …` and requires exit status 0.
    @discardableResult
    func succeeding(_ arguments: [String], stdin: String = "") throws -> ToolRun {
        let run = try syncctl(arguments, stdin: stdin)
        guard run.status == 0 else { throw Failure("syncctl \(arguments) on \(device): \(run)") }
        return run
    }

    /// `syncctl key`: the public key, `ed25519:…` (made the first time).
    func key() throws -> String {
        try succeeding(["key"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `syncctl key --rotate`: the new public key (the device's files are published again, signed with it).
    func rotateKey() throws -> String {
        try succeeding(["key", "--rotate"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `syncctl trust DEVICE KEY`.
    func trust(_ other: String, _ key: String) throws { try succeeding(["trust", other, key]) }

    /// `syncctl untrust DEVICE`.
    func untrust(_ other: String) throws { try succeeding(["untrust", other]) }

    /// `syncctl put`: record `id` with fields `{"text": text}`, published by syncctl itself.
    func put(_ id: String, _ text: String) throws {
        try succeeding(["put", "--type", "Note", "--id", id], stdin: #"{"text": "\#(text)"}"#)
    }

    /// Whether this device's store holds record `id` (`syncctl get`: exit 0, or 4 when unknown).
    func holds(_ id: String) throws -> Bool {
        let run = try syncctl(["get", id])
        guard run.status == 0 || run.status == 4 else { throw Failure("syncctl get \(id) on \(device): \(run)") }
        return run.status == 0
    }

    /// What `syncctl status --json` says about trust.
    func trustStatus() throws -> TrustStatus { try TrustStatus(try succeeding(["status", "--json"]).json()) }

    /// The trust status, or why it could not be read: for failure messages.
    var trustReport: String {
        do { return "\(try trustStatus())" } catch { return "no status: \(error)" }
    }
}

/// The trust part of `syncctl status --json`.
struct TrustStatus: CustomStringConvertible {
    /// Trusted device → its key, this device included; empty when signatures are not checked.
    var trusted: [String: String] = [:]
    /// The files whose last read was rejected for trust.
    var rejectedForTrust: Set<String> = []
    /// Each source's row, by file name.
    var sources: [String: Source] = [:]

    struct Source {
        var generation: Int64?
        var isUntrusted: Bool
        var lastProblem: String?
    }

    init(_ status: JSONValue) throws {
        guard case .object(let top) = status, case .array(let trusted)? = top["trusted"],
            case .array(let rejected)? = top["rejectedForTrust"], case .array(let sources)? = top["sources"]
        else { throw Failure("status --json without trusted, rejectedForTrust or sources: \(status)") }
        for case .object(let entry) in trusted {
            if case .string(let device)? = entry["device"], case .string(let key)? = entry["key"] {
                self.trusted[device] = key
            }
        }
        for case .string(let name) in rejected { rejectedForTrust.insert(name) }
        for case .object(let source) in sources {
            guard case .string(let name)? = source["name"] else { continue }
            var generation: Int64?
            if case .number(let number)? = source["generation"] { generation = Int64(number) }
            var problem: String?
            if case .string(let text)? = source["lastProblem"] { problem = text }
            self.sources[name] = Source(
                generation: generation, isUntrusted: source["isUntrusted"] == .bool(true), lastProblem: problem)
        }
    }

    /// The last problem of source `name`, "" when it has none.
    func problem(_ name: String) -> String { sources[name]?.lastProblem ?? "" }

    var description: String {
        "trusted \(trusted.keys.sorted()), rejectedForTrust \(rejectedForTrust.sorted()), problems "
            + sources.compactMap { name, source in source.lastProblem.map { "\(name): \($0)" } }.sorted().description
    }
}

/// The `key` a snapshot file names at its top level, nil when the file is missing or names none.
func namedKey(_ bytes: [UInt8]?) -> String? {
    guard let bytes, case .object(let top)? = try? StrictJSON.parse(bytes), case .string(let key)? = top["key"]
    else { return nil }
    return key
}
