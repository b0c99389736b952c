import Foundation

/// Two machines, `a` and `b`, on one host: two real Syncthing instances sharing one folder over
/// 127.0.0.1, and one `syncd` per machine.
///
/// Only `a` dials (it knows `b`'s address; `b` knows `a` as `dynamic`): two instances dialling
/// each other at once can stall their handshake for 20 s. `b` starts first, so that `a`'s first
/// dial finds it listening (a failed dial is retried only after 5 s).
///
/// Use ``run(devices:startDaemons:_:)``: it always tears everything down, even when the body throws.
final class SyncthingPair: @unchecked Sendable {
    let root: String
    let a: Machine
    let b: Machine

    /// Runs `body` with a started pair, then stops every process by PID and removes the
    /// temporary directory (kept when `SYNCTHING_TESTS_KEEP=1`, for a look at the logs).
    ///
    /// - Parameters:
    ///   - devices: the syncd device IDs of `a` and `b` (the same twice for a misconfiguration).
    ///   - startDaemons: start one `syncd` per machine once Syncthing is in sync.
    static func run(
        devices: (String, String) = ("alpha", "beta"), startDaemons: Bool = true, settings: [String: String] = [:],
        _ body: (SyncthingPair) async throws -> Void
    ) async throws {
        let root = "/tmp/stsync-" + UUID().uuidString.prefix(8).lowercased()
        defer {
            if ProcessInfo.processInfo.environment["SYNCTHING_TESTS_KEEP"] != "1" {
                try? FileManager.default.removeItem(atPath: root)
            }
        }
        let pair = try await launch(root: root, devices: devices)
        for machine in pair.machines { machine.settings = settings }
        do {
            try await pair.waitUntilInSync(timeout: 60)
            if startDaemons {
                try await pair.a.startDaemon()
                try await pair.b.startDaemon()
            }
            try await body(pair)
        } catch {
            pair.tearDown()
            throw error
        }
        pair.tearDown()
    }

    /// Generates and configures both instances in `root`, then starts `b` and `a`; stops what it
    /// started when a step fails.
    private static func launch(root: String, devices: (String, String)) async throws -> SyncthingPair {
        var ports: Set<Int> = []
        var instances: [SyncthingInstance] = []
        for name in ["a", "b"] {
            let directory = root + "/" + name
            try FileManager.default.createDirectory(atPath: directory + "/folder", withIntermediateDirectories: true)
            instances.append(
                try await SyncthingInstance(
                    name: name, home: directory + "/syncthing", folder: directory + "/folder",
                    logDirectory: directory, ports: &ports))
        }
        let (first, second) = (instances[0], instances[1])
        try first.configure(peers: [.init(id: second.deviceID, name: "b", address: second.dialAddress)])
        try second.configure(peers: [.init(id: first.deviceID, name: "a", address: nil)])
        do {
            try await second.start()
            try await first.start()
        } catch {
            second.stop()
            first.stop()
            throw error
        }
        return SyncthingPair(
            root: root, a: Machine(syncthing: first, device: devices.0, root: root + "/a"),
            b: Machine(syncthing: second, device: devices.1, root: root + "/b"))
    }

    private init(root: String, a: Machine, b: Machine) {
        self.root = root
        self.a = a
        self.b = b
    }

    var machines: [Machine] { [a, b] }

    /// The other machine.
    func peer(of machine: Machine) -> Machine { machine === a ? b : a }

    /// Stops both syncd, then both Syncthing instances, by PID.
    func tearDown() {
        for machine in machines { machine.stopDaemon() }
        for machine in machines { machine.syncthing.stop() }
    }

    // MARK: Syncthing

    /// Waits until both instances are connected, idle, with nothing pending, and each has
    /// everything the other has.
    func waitUntilInSync(timeout: Double = 30) async throws {
        let synced = try await eventually(within: timeout, every: 0.05) {
            let forward = try await a.syncthing.isInSync(with: b.syncthing)
            let backward = try await b.syncthing.isInSync(with: a.syncthing)
            return forward && backward
        }
        guard synced else {
            throw HarnessError("the Syncthing pair was not in sync within \(timeout) s\n\(diagnostics())")
        }
    }

    /// Cuts the link: each instance pauses the other (REST `POST /rest/system/pause`), which
    /// closes the connection at once; waits until both see it closed.
    func partition() async throws {
        try await a.syncthing.post("/rest/system/pause?device=\(b.syncthing.deviceID)")
        try await b.syncthing.post("/rest/system/pause?device=\(a.syncthing.deviceID)")
        let cut = try await eventually(within: 30) {
            let aSees = try await a.syncthing.isConnected(to: b.syncthing)
            let bSees = try await b.syncthing.isConnected(to: a.syncthing)
            return !aSees && !bSees
        }
        guard cut else { throw HarnessError("the link did not go down within 30 s\n\(diagnostics())") }
    }

    /// Heals the link: resumes on `b` first, then on `a` (the dialler), so that `a`'s immediate
    /// redial is not refused (a refused dial is retried only after about 30 s); waits until connected.
    func heal() async throws {
        try await b.syncthing.post("/rest/system/resume?device=\(a.syncthing.deviceID)")
        try await a.syncthing.post("/rest/system/resume?device=\(b.syncthing.deviceID)")
        let healed = try await eventually(within: 60) {
            let aSees = try await a.syncthing.isConnected(to: b.syncthing)
            let bSees = try await b.syncthing.isConnected(to: a.syncthing)
            return aSees && bSees
        }
        guard healed else { throw HarnessError("the link did not come back within 60 s\n\(diagnostics())") }
    }

    /// Has both instances scan their whole folder now (what the watcher would do a second later).
    func scanBoth() async throws {
        try await a.syncthing.scan()
        try await b.syncthing.scan()
    }

    // MARK: convergence

    /// Waits until both stores hold the same records and tombstones (the exact `list --deleted
    /// --json` output) and `extra` holds; scans both folders on every round so that files a
    /// daemon republished travel at once. Returns the common listing.
    @discardableResult
    func waitUntilStoresAgree(
        timeout: Double = 30, _ extra: ([SnapshotRecord]) -> Bool = { _ in true }
    ) async throws -> [SnapshotRecord] {
        var last: (String, String) = ("", "")
        let agreed = try await eventually(within: timeout, every: 0.1) {
            try await scanBoth()
            last = (try await a.storeListing(), try await b.storeListing())
            return try last.0 == last.1 && extra(SnapshotRecord.list(json: last.0))
        }
        guard agreed else {
            throw HarnessError(
                "the stores did not agree within \(timeout) s\n--- a\n\(last.0)\n--- b\n\(last.1)\n\(diagnostics())")
        }
        return try SnapshotRecord.list(json: last.0)
    }

    /// Waits until `machine`'s store holds record `id` and `condition` holds for it; returns it.
    @discardableResult
    func waitFor(
        _ id: String, on machine: Machine, timeout: Double = 30,
        where condition: (SnapshotRecord) -> Bool = { _ in true }
    ) async throws -> SnapshotRecord {
        var last: SnapshotRecord?
        let arrived = try await eventually(within: timeout, every: 0.05) {
            last = try await machine.record(id)
            return last.map(condition) ?? false
        }
        guard arrived, let last else {
            throw HarnessError(
                "record \(id) did not arrive as expected on \(machine.syncthing.name) within \(timeout) s; held: \(last.map(\.description) ?? "nothing")\n\(diagnostics())"
            )
        }
        return last
    }

    /// Both folders' listings, both daemons' and both Syncthings' last log lines: for failure messages.
    func diagnostics() -> String {
        machines.map { machine in
            """
            === machine \(machine.syncthing.name) (device \(machine.device)), folder \(machine.folder)
            files: \(machine.folderNames().joined(separator: " "))
            --- syncd (last lines)
            \(machine.daemonLog.split(separator: "\n").suffix(25).joined(separator: "\n"))
            --- syncthing (last lines)
            \(machine.syncthing.log.split(separator: "\n").suffix(15).joined(separator: "\n"))
            """
        }.joined(separator: "\n")
    }
}
