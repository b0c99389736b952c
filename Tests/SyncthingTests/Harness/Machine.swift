import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// One simulated machine: a Syncthing instance, its own copy of the shared folder, and a `syncd`
/// with its own state directory; `syncctl` runs against the same folder and state.
final class Machine: @unchecked Sendable {
    let syncthing: SyncthingInstance
    /// The syncd/syncctl device ID (two machines may be given the same one on purpose).
    let device: String
    let stateDirectory: String
    private(set) var daemon: ChildProcess?
    private let root: String
    private var runs = 0

    /// Settings given to every syncd and syncctl of this machine (`SYNCD_*` variables).
    var settings: [String: String] = [:]

    init(syncthing: SyncthingInstance, device: String, root: String) {
        self.syncthing = syncthing
        self.device = device
        self.root = root
        stateDirectory = root + "/state"
    }

    /// This machine's copy of the shared folder.
    var folder: String { syncthing.folder }
    /// The name of this device's own snapshot file.
    var ownFile: String { device + ".json" }
    /// `--shared`, `--state` and `--device` for this machine's syncd.
    var location: [String] { ["--shared", folder, "--state", stateDirectory, "--device", device] }
    /// The same for syncctl, through `--device`'s alias `--this-device` (kept working for scripts).
    var syncctlLocation: [String] { ["--shared", folder, "--state", stateDirectory, "--this-device", device] }

    // MARK: syncd

    /// Starts `syncd` (settle 50 ms, log level info) and waits for its first pass ("syncd is ready").
    func startDaemon() async throws {
        runs += 1
        let daemon = try ChildProcess(
            name: "syncd \(device)@\(syncthing.name)", executable: try Executables.built("syncd"),
            arguments: location + ["--settle-ms", "50", "--log-level", "info"], environment: environment,
            outputPath: root + "/syncd-\(runs)")
        self.daemon = daemon
        let ready = try await eventually(within: 60, every: 0.02) {
            guard daemon.isRunning else {
                throw HarnessError("\(daemon.name) exited at start:\n\(daemon.stderrTail())")
            }
            return daemon.stderr.contains("syncd is ready")
        }
        guard ready else { throw HarnessError("\(daemon.name) was not ready within 60 s:\n\(daemon.stderrTail())") }
    }

    /// Stops `syncd` by PID (SIGTERM, SIGKILL after 10 s); its exit status, nil if none ran.
    @discardableResult
    func stopDaemon() -> Int32? {
        defer { daemon = nil }
        return daemon?.stop(grace: 10)
    }

    /// Every line `syncd` wrote to standard error, over all its runs on this machine.
    var daemonLog: String {
        (1...max(runs, 1)).map { (try? String(contentsOfFile: root + "/syncd-\($0).err", encoding: .utf8)) ?? "" }
            .joined(separator: "\n")
    }

    // MARK: syncctl

    /// Runs `syncctl ARGUMENTS --shared … --state … --this-device …` to the end.
    @discardableResult
    func syncctl(_ arguments: [String], stdin: String = "", timeout: Double = 60) async throws -> ToolRun {
        let process = try ChildProcess(
            name: "syncctl \(arguments.first ?? "") on \(syncthing.name)", executable: try Executables.built("syncctl"),
            arguments: arguments + syncctlLocation, environment: environment,
            outputPath: root + "/syncctl-" + UUID().uuidString.prefix(8), stdin: stdin)
        return try await process.finish(timeout: timeout)
    }

    /// `syncctl put`: a new record (or a new version of `id`) with `fields`; returns its id.
    /// The published file is then sent to the peer at once (a Syncthing scan).
    @discardableResult
    func put(_ fields: [String: Any], id: String? = nil, type: String = "Note") async throws -> String {
        let body = String(
            decoding: try JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys]), as: UTF8.self)
        let run = try await syncctl(["put", "--type", type] + (id.map { ["--id", $0] } ?? []), stdin: body)
        guard run.status == 0 else { throw HarnessError("put on \(syncthing.name) failed: \(run)") }
        try await syncthing.scan()
        return run.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `syncctl delete ID`, then the published file is sent at once.
    func delete(_ id: String) async throws {
        let run = try await syncctl(["delete", id])
        guard run.status == 0 else { throw HarnessError("delete on \(syncthing.name) failed: \(run)") }
        try await syncthing.scan()
    }

    /// `syncctl resolve ID --take N`, then the published file is sent at once.
    func resolve(_ id: String, take: Int) async throws {
        let run = try await syncctl(["resolve", id, "--take", String(take)])
        guard run.status == 0 else { throw HarnessError("resolve on \(syncthing.name) failed: \(run)") }
        try await syncthing.scan()
    }

    /// `syncctl get ID`: the record as this machine's store holds it, nil when it is unknown (exit 4).
    func record(_ id: String) async throws -> SnapshotRecord? {
        let run = try await syncctl(["get", id])
        if run.status == 4 { return nil }
        guard run.status == 0 else { throw HarnessError("get on \(syncthing.name) failed: \(run)") }
        return try SnapshotRecord(json: run.stdout)
    }

    /// `syncctl list --deleted --json`: every record and tombstone, exactly as printed.
    func storeListing() async throws -> String {
        let run = try await syncctl(["list", "--deleted", "--json"])
        guard run.status == 0 else { throw HarnessError("list on \(syncthing.name) failed: \(run)") }
        return run.stdout
    }

    /// `syncctl list --deleted --json`, parsed.
    func records() async throws -> [SnapshotRecord] {
        try SnapshotRecord.list(json: try await storeListing())
    }

    /// `syncctl conflicts --json`, exactly as printed.
    func conflictListing() async throws -> String {
        let run = try await syncctl(["conflicts", "--json"])
        guard run.status == 0 else { throw HarnessError("conflicts on \(syncthing.name) failed: \(run)") }
        return run.stdout
    }

    /// The `warnings` of `syncctl status --json`.
    func statusWarnings() async throws -> [String] {
        let run = try await syncctl(["status", "--json"])
        guard run.status == 0,
            let status = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any],
            let warnings = status["warnings"] as? [String]
        else { throw HarnessError("status on \(syncthing.name) failed: \(run)") }
        return warnings
    }

    // MARK: the folder

    /// Names of the entries of this machine's folder, sorted.
    func folderNames() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
    }

    /// Writes `bytes` to `name` in this machine's folder atomically (dot-file, fsync, rename),
    /// as another device's writer would, and has Syncthing send it at once.
    func writeFile(_ name: String, _ bytes: Data) async throws {
        let temporary = folder + "/.\(name).harness.tmp"
        guard FileManager.default.createFile(atPath: temporary, contents: bytes) else {
            throw HarnessError("cannot write \(temporary)")
        }
        let descriptor = open(temporary, O_RDONLY)
        if descriptor >= 0 {
            fsync(descriptor)
            close(descriptor)
        }
        guard rename(temporary, folder + "/" + name) == 0 else {
            throw HarnessError("rename to \(name): errno \(errno)")
        }
        try await syncthing.scan(name)
    }

    /// The `generation` of a snapshot file in this machine's folder, nil when missing or unreadable.
    func generation(of name: String) -> Int? {
        guard let data = FileManager.default.contents(atPath: folder + "/" + name),
            let top = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return nil }
        return (top["generation"] as? NSNumber)?.intValue
    }

    /// A clean environment: no SYNCD_* variables and a home of its own (no user configuration).
    private var environment: [String: String] {
        ["PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": root, "LANG": "C.UTF-8"].merging(settings) { $1 }
    }
}
