import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One real Syncthing process with its own home (keys, configuration, database), GUI/REST port
/// and sync port, all on 127.0.0.1.
final class SyncthingInstance: @unchecked Sendable {
    let name: String
    let home: String
    let folder: String
    let deviceID: String
    let guiPort: Int
    let syncPort: Int
    let apiKey: String
    private(set) var process: ChildProcess?
    private let logDirectory: String
    private let session: URLSession

    /// The folder ID both instances share.
    static let folderID = "shared"

    /// Generates keys and a throw-away configuration in `home` (`syncthing generate`) and reads
    /// the device ID. Nothing is started and no packet is sent.
    init(name: String, home: String, folder: String, logDirectory: String, ports: inout Set<Int>) async throws {
        self.name = name
        self.home = home
        self.folder = folder
        self.logDirectory = logDirectory
        let executable = try Executables.syncthing()
        let generate = try ChildProcess(
            name: "syncthing generate \(name)", executable: executable,
            arguments: ["generate", "--home", home, "--no-default-folder"], environment: Self.environment(home: home),
            outputPath: logDirectory + "/syncthing-\(name)-generate")
        let generated = try await generate.finish(timeout: 60)
        guard generated.status == 0 else { throw HarnessError("syncthing generate failed for \(name): \(generated)") }
        let identify = try ChildProcess(
            name: "syncthing --device-id \(name)", executable: executable, arguments: ["--home", home, "--device-id"],
            environment: Self.environment(home: home), outputPath: logDirectory + "/syncthing-\(name)-id")
        let identified = try await identify.finish(timeout: 60)
        deviceID = identified.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        guard identified.status == 0, deviceID.count == 63 else {
            throw HarnessError("cannot read the device ID of syncthing \(name): \(identified)")
        }
        guiPort = try LoopbackPort.free(avoiding: ports)
        ports.insert(guiPort)
        syncPort = try LoopbackPort.free(avoiding: ports)
        ports.insert(syncPort)
        apiKey = "harness-" + UUID().uuidString.lowercased()
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 30
        configuration.connectionProxyDictionary = [:]
        session = URLSession(configuration: configuration)
    }

    /// `tcp://127.0.0.1:PORT`, for the peer that dials this instance.
    var dialAddress: String { "tcp://127.0.0.1:\(syncPort)" }
    /// The short device ID Syncthing puts in conflict-copy names.
    var shortID: String { String(deviceID.prefix(7)) }

    /// Overwrites the generated `config.xml`: one folder shared with `peers`, loopback only.
    func configure(peers: [SyncthingConfiguration.Peer]) throws {
        let own = SyncthingConfiguration.Peer(id: deviceID, name: name, address: nil)
        let configuration = SyncthingConfiguration(
            folderID: Self.folderID, folderPath: folder, devices: [own] + peers, guiPort: guiPort, syncPort: syncPort,
            apiKey: apiKey)
        try configuration.xml.write(toFile: home + "/config.xml", atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: folder + "/.stfolder", withIntermediateDirectories: true)
        // As docs/daemon.md tells users: Syncthing leaves syncd's temporary files alone.
        try "(?d).*.json.*.tmp\n".write(toFile: folder + "/.stignore", atomically: true, encoding: .utf8)
    }

    /// Starts `syncthing serve` as a single process (no monitor, no restarts, no upgrades) and
    /// waits until its REST API answers and its sync port listens.
    func start() async throws {
        let process = try ChildProcess(
            name: "syncthing \(name)", executable: try Executables.syncthing(),
            arguments: [
                "serve", "--home", home, "--no-browser", "--no-restart", "--no-upgrade", "--no-default-folder",
                "--logflags=7",
            ],
            environment: Self.environment(home: home).merging(["STMONITORED": "yes"]) { $1 },
            outputPath: logDirectory + "/syncthing-\(name)")
        self.process = process
        let answered = try await eventually(within: 30, every: 0.02) {
            guard process.isRunning else {
                throw HarnessError(
                    "syncthing \(name) exited at start:\n\(process.stdout.suffix(3000))\n\(process.stderrTail())")
            }
            let pong = (try? await get("/rest/system/ping"))?["ping"] as? String == "pong"
            return pong && LoopbackPort.isListening(syncPort)
        }
        guard answered else {
            throw HarnessError(
                "syncthing \(name) did not answer on 127.0.0.1:\(guiPort) within 30 s:\n\(process.stdout.suffix(3000))")
        }
    }

    /// Stops the process by PID (SIGTERM, then SIGKILL after `grace` seconds).
    func stop(grace: Double = 10) {
        process?.stop(grace: grace)
    }

    /// Syncthing's log (it logs to standard output).
    var log: String { process?.stdout ?? "" }

    // MARK: REST

    /// GET `path` (with its query) and the JSON object it answers.
    func get(_ path: String) async throws -> [String: Any] {
        let data = try await request("GET", path)
        guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw HarnessError(
                "syncthing \(name) GET \(path): not a JSON object: \(String(decoding: data, as: UTF8.self))")
        }
        return object
    }

    /// POST `path` with an empty body; Syncthing answers when the action is done (a scan is finished).
    func post(_ path: String) async throws {
        _ = try await request("POST", path)
    }

    /// Asks Syncthing to scan the folder now, or only `name` in it: the change is sent at once,
    /// instead of after the watcher's delay (about a second).
    func scan(_ name: String? = nil) async throws {
        var path = "/rest/db/scan?folder=\(Self.folderID)"
        if let name { path += "&sub=" + (name.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? name) }
        try await post(path)
    }

    /// Whether this instance has a live connection to `peer`.
    func isConnected(to peer: SyncthingInstance) async throws -> Bool {
        let connections = try await get("/rest/system/connections")["connections"] as? [String: Any]
        return (connections?[peer.deviceID] as? [String: Any])?["connected"] as? Bool == true
    }

    /// True when this instance is connected to `peer`, has nothing pending, its folder is idle
    /// and `peer` has everything this instance has (completion 100).
    func isInSync(with peer: SyncthingInstance) async throws -> Bool {
        guard try await isConnected(to: peer) else { return false }
        guard try await get("/rest/cluster/pending/folders").isEmpty else { return false }
        guard try await get("/rest/db/status?folder=\(Self.folderID)")["state"] as? String == "idle" else {
            return false
        }
        let completion = try await get("/rest/db/completion?folder=\(Self.folderID)&device=\(peer.deviceID)")
        return (completion["completion"] as? NSNumber)?.doubleValue == 100
    }

    private func request(_ method: String, _ path: String) async throws -> Data {
        guard let url = URL(string: "http://127.0.0.1:\(guiPort)\(path)") else {
            throw HarnessError("bad path \(path)")
        }
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.setValue(apiKey, forHTTPHeaderField: "X-API-Key")
        let session = session
        let (data, status): (Data, Int) = try await withCheckedThrowingContinuation { done in
            session.dataTask(with: request) { data, response, error in
                if let error {
                    done.resume(throwing: error)
                } else {
                    done.resume(returning: (data ?? Data(), (response as? HTTPURLResponse)?.statusCode ?? 0))
                }
            }.resume()
        }
        guard status == 200 else {
            throw HarnessError(
                "syncthing \(name) \(method) \(path): HTTP \(status) \(String(decoding: data, as: UTF8.self))")
        }
        return data
    }

    /// A clean environment: its own home, and none of the variables that make it fork a monitor,
    /// restart, upgrade itself or run a hashing benchmark at start.
    private static func environment(home: String) -> [String: String] {
        [
            "PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": home, "LANG": "C.UTF-8", "STNORESTART": "1",
            "STNOUPGRADE": "1", "STHASHING": "minio",
        ]
    }
}
