import Foundation
import TestSupport
import SnapshotFormat
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A running `syncd` for one device, with its own notify socket (so a test knows when it is ready).
final class Daemon: @unchecked Sendable {
    let device: String
    let launched: Launched
    let notify: NotifyListener

    private static let counter = Atomic(0)

    /// Starts `syncd` for `device` in `sandbox` with a small settle delay and `--log-level info`
    /// (no `--log-level` with `logLevel` nil).
    init(
        _ device: String, in sandbox: Sandbox, state: String? = nil, settleMilliseconds: Int = 50, extra: [String] = [],
        environment: [String: String] = [:], watchdogMicroseconds: Int? = nil,
        readingNotifications: Bool = true, logLevel: String? = "info"
    ) throws {
        self.device = device
        notify = try NotifyListener(path: sandbox.path("n\(Daemon.counter.next()).sock"), reading: readingNotifications)
        let arguments =
            sandbox.location(device, state: state) + ["--settle-ms", String(settleMilliseconds)]
            + (logLevel.map { ["--log-level", $0] } ?? []) + extra
        let variables = sandbox.environment
            .merging(notify.environment(watchdogMicroseconds: watchdogMicroseconds)) { $1 }
            .merging(environment) { $1 }
        launched = try sandbox.launch(try Binary.path("syncd"), arguments, environment: variables)
    }

    var pid: Int32 { launched.pid }
    var log: String { launched.stderr }
    var isRunning: Bool { launched.process.isRunning }

    /// Waits for `READY=1`; throws with the log when it does not come (or the daemon exits).
    @discardableResult
    func waitUntilReady(timeout: Double = 30) throws -> Daemon {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline && isRunning {
            if notify.wait(for: 0.2, until: { $0 == "READY=1" }) { return self }
        }
        if notify.texts.contains("READY=1") { return self }
        throw Failure(
            "syncd \(device) (PID \(pid)) did not send READY=1 within \(timeout) s; running: \(isRunning)\n\(log)")
    }

    /// SIGTERM, then SIGKILL after `grace` seconds; the exit status.
    @discardableResult
    func stop(grace: Double = 10) -> Int32 {
        defer { notify.close() }
        return launched.stop(grace: grace)
    }

    /// SIGKILL by PID, and reaped.
    func kill9() {
        launched.signal(SIGKILL)
        launched.process.waitUntilExit()
        notify.close()
    }
}

/// A tiny counter for unique names.
final class Atomic: @unchecked Sendable {
    private var value: Int
    private let lock = NSLock()
    init(_ value: Int) { self.value = value }
    func next() -> Int {
        lock.withLock {
            value += 1; return value
        }
    }
}

/// Builders and readers of snapshot files, written independently of the engine's writer.
enum Snapshots {
    static let base: Int64 = 1_795_000_000_000

    /// A record id from a small number: `0000DAE0-0000-4000-8000-00000000000n`.
    static func id(_ n: Int) -> String { String(format: "0000DAE0-0000-4000-8000-%012d", n) }

    /// A valid snapshot of `device` holding one record per entry: `(id, fields)`, made by `device`.
    static func file(_ device: String, generation: Int = 1, records: [(id: String, fields: JSONObject)]) -> [UInt8] {
        var top = JSONObject()
        top["format"] = .number(1)
        top["device"] = .string(device)
        top["generation"] = .number(Double(generation))
        top["records"] = .array(
            records.map { record in
                var object = JSONObject()
                object["id"] = .string(record.id)
                object["type"] = .string("Note")
                object["lastModified"] = .string(Timestamp(milliseconds: base + Int64(generation)).written)
                object["modifiedBy"] = .string(device)
                object["versionVector"] = .object(JSONObject([(device, .number(Double(generation)))]))
                object["fields"] = .object(record.fields)
                return .object(object)
            })
        return JSONValue.object(top).canonicalBytes
    }

    /// Fields `{"text": text}`.
    static func fields(_ text: String) -> JSONObject { JSONObject([("text", .string(text))]) }

    /// A published file's generation and records (sorted by id), or nil when missing or unreadable.
    static func published(_ bytes: [UInt8]?) -> (generation: Int64, records: [JSONValue])? {
        guard let bytes, case .object(let top)? = try? StrictJSON.parse(bytes),
            case .number(let generation)? = top["generation"], case .array(let records)? = top["records"]
        else { return nil }
        return (Int64(generation), records.sorted { recordID($0) < recordID($1) })
    }

    /// A record's `id`, "" if it has none.
    static func recordID(_ record: JSONValue) -> String {
        if case .object(let object) = record, case .string(let id)? = object["id"] { return id }
        return ""
    }

    /// The records of a `list --json` output (sorted by id).
    static func records(_ run: ToolRun) throws -> [JSONValue] {
        guard run.status == 0, case .array(let records) = try run.json() else {
            throw Failure("not a list of records: \(run)")
        }
        return records.sorted { recordID($0) < recordID($1) }
    }
}

/// Inode, size and modification time of every entry of a folder, to see whether anything was rewritten.
func fingerprint(of folder: String) -> [String: String] {
    var result: [String: String] = [:]
    for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
        var status = stat()
        guard lstat(folder + "/" + name, &status) == 0 else { continue }
        result[name] = "\(status.st_ino):\(status.st_size):\(status.st_mtim.tv_sec).\(status.st_mtim.tv_nsec)"
    }
    return result
}
