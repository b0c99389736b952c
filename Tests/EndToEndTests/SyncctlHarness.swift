import Foundation
import TestSupport
import SnapshotFormat
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The built `syncctl` executable: `$SYNCCTL` if set, else the first `syncctl` found walking up
/// from the test bundle (SwiftPM puts every product of a build in one products directory).
enum SyncctlBinary {
    static let path: String? = {
        let manager = FileManager.default
        if let given = ProcessInfo.processInfo.environment["SYNCCTL"], manager.isExecutableFile(atPath: given) {
            return given
        }
        return BuiltProducts.find("syncctl")
    }()

    static func require() throws -> String {
        guard let path else {
            throw HarnessError(
                "syncctl is not built next to the test bundle (\(CommandLine.arguments[0])): run swift build first, or set SYNCCTL")
        }
        return path
    }

}

struct HarnessError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// What a finished `syncctl` run printed and returned.
struct Run: CustomStringConvertible {
    var status: Int32
    var stdout: String
    var stderr: String

    var description: String { "exit \(status)\n--- stdout\n\(stdout)\n--- stderr\n\(stderr)" }

    /// Standard output parsed as JSON (Foundation's parser: any valid JSON).
    func json() throws -> Any { try JSONSerialization.jsonObject(with: Data(stdout.utf8), options: [.fragmentsAllowed]) }
}

/// A fresh temporary directory with a shared folder, a state directory path and a home.
struct Workspace {
    let root: URL

    init() throws {
        root = FileManager.default.temporaryDirectory
            .appendingPathComponent("EndToEndTests-\(UUID().uuidString)", isDirectory: true)
        for folder in ["shared", "home"] {
            try FileManager.default.createDirectory(at: root.appendingPathComponent(folder), withIntermediateDirectories: true)
        }
    }

    var shared: String { root.appendingPathComponent("shared").path }
    func state(_ name: String = "state") -> String { root.appendingPathComponent(name).path }
    func sharedPath(_ name: String) -> String { shared + "/" + name }
    func path(_ name: String) -> String { root.appendingPathComponent(name).path }

    func remove() { try? FileManager.default.removeItem(at: root) }

    func write(_ name: String, _ bytes: [UInt8], in folder: String? = nil) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: (folder ?? shared) + "/" + name))
    }

    func read(_ name: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: sharedPath(name)))) }

    /// A clean environment: no SYNCD_* variables, a home of its own (no user configuration).
    var environment: [String: String] {
        ["PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": root.appendingPathComponent("home").path, "LANG": "C.UTF-8"]
    }

    /// `--shared`, `--state` and `--device` for this workspace.
    func location(state: String? = nil, device: String? = "desk", shared: String? = nil) -> [String] {
        ["--shared", shared ?? self.shared, "--state", state ?? self.state()] + (device.map { ["--device", $0] } ?? [])
    }

    /// Starts `syncctl` with `arguments`; the caller waits for it or kills it by PID.
    /// Starts `syncctl` (through `prefix`, such as `setpriv …`, when given).
    func start(
        _ arguments: [String], stdin: String? = nil, environment: [String: String]? = nil, prefix: [String] = []
    ) throws -> Started {
        let syncctl = try SyncctlBinary.require()
        let name = UUID().uuidString
        let out = path("\(name).out"), err = path("\(name).err"), input = path("\(name).in")
        FileManager.default.createFile(atPath: input, contents: Data((stdin ?? "").utf8))
        let process = try SpawnedProcess(
            prefix.first ?? syncctl, prefix.isEmpty ? arguments : Array(prefix.dropFirst()) + [syncctl] + arguments,
            environment: environment ?? self.environment, stdin: input, stdout: .file(out), stderr: .file(err))
        return Started(process: process, stdoutPath: out, stderrPath: err)
    }

    /// Runs `syncctl` to the end (killed by PID after `timeout` seconds).
    @discardableResult
    func run(
        _ arguments: [String], stdin: String? = nil, environment: [String: String]? = nil, timeout: Double = 120,
        prefix: [String] = []
    ) throws -> Run {
        try start(arguments, stdin: stdin, environment: environment, prefix: prefix).wait(timeout: timeout)
    }
}

/// A started `syncctl` process (or another program a test runs, such as a bench script).
struct Started {
    let process: SpawnedProcess
    let stdoutPath: String
    let stderrPath: String

    var pid: Int32 { process.pid }

    /// Waits for the process; past `timeout` seconds it is killed by PID and an error is thrown.
    func wait(timeout: Double = 120) throws -> Run {
        if !process.exited(within: timeout) {
            process.signal(SIGKILL)
            process.waitUntilExit()
            let program = URL(fileURLWithPath: process.executable).lastPathComponent
            throw HarnessError("\(program) \(process.arguments) did not finish within \(timeout) s; killed PID \(pid)")
        }
        return Run(
            status: process.terminationStatus,
            stdout: (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "")
    }

    /// Sends SIGKILL to this process by PID and reaps it.
    func kill() {
        process.signal(SIGKILL)
        process.waitUntilExit()
    }
}

/// Builders of snapshot files.
enum Files {
    static let base: Int64 = 1_795_000_000_000

    static func id(_ n: Int) -> RecordID { RecordID(String(format: "0000E2E0-0000-4000-8000-%012d", n))! }

    static func version(
        _ n: Int, by device: String, vector: [String: Int64]? = nil, at offset: Int64 = 0, fields: JSONObject = JSONObject(),
        deleted: Bool = false
    ) -> ReadOnly.Version {
        let counts = (vector ?? [device: 1]).reduce(into: [DeviceID: Int64]()) { $0[DeviceID($1.key)!] = $1.value }
        return ReadOnly.Version(
            id: id(n), type: "Note", lastModified: Timestamp(milliseconds: base + offset), modifiedBy: DeviceID(device),
            versionVector: VersionVector(counts), deleted: deleted, fields: fields)
    }

    /// A valid snapshot file's bytes (built here, independently of the engine's writer).
    static func snapshot(_ device: String, generation: Int64, _ records: [ReadOnly.Record]) -> [UInt8] {
        var top = JSONObject()
        top["format"] = .number(1)
        top["device"] = .string(device)
        top["generation"] = .number(Double(generation))
        top["writtenAt"] = .string(Timestamp(milliseconds: base).written)
        top["records"] = .array(records.sorted { $0.id < $1.id }.map { .object($0.normalForm) })
        return JSONValue.object(top).canonicalBytes
    }

    static func snapshot(_ device: String, generation: Int64, versions: [ReadOnly.Version]) -> [UInt8] {
        snapshot(device, generation: generation, versions.map { ReadOnly.Record(version: $0) })
    }

    /// A device's whole published snapshot: its one file or all its parts, records in id order.
    static func published(in folder: String, device: String) throws -> (problems: [RecordProblem], records: [JSONValue]) {
        guard let snapshot = try PublishedSnapshot.read(folder: folder, device: device) else {
            throw HarnessError("\(device) published nothing in \(folder)")
        }
        var records: [JSONValue] = []
        for name in snapshot.files {
            records += try published([UInt8](Data(contentsOf: URL(fileURLWithPath: folder + "/" + name))), name: name).records
        }
        return (snapshot.problems, records)
    }

    static func published(_ bytes: [UInt8], name: String) throws -> (reading: SnapshotReading, records: [JSONValue]) {
        let reading = try SnapshotReader.read(bytes: bytes, fileName: name)
        guard case .object(let top) = try StrictJSON.parse(bytes), case .array(let records)? = top["records"] else {
            throw HarnessError("\(name) has no records array")
        }
        return (reading, records)
    }
}
