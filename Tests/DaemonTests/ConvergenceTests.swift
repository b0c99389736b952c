import Foundation
import SnapshotFormat
import SnapshotMerge
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension DaemonTests {
    @Test(
        "three daemons on one folder, with overlapping edits on every device and one daemon killed and restarted midway, converge to the contract's merge of every version made, then leave the folder alone"
    )
    func threeDevicesConverge() throws {
        // Given three devices, each with its own state directory and its own running syncd
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let devices = ["alpha", "beta", "gamma"]
        var daemons: [String: Daemon] = [:]
        defer { for daemon in daemons.values { daemon.stop() } }
        for device in devices { daemons[device] = try Daemon(device, in: sandbox) }
        for daemon in daemons.values { try daemon.waitUntilReady() }
        let ids = (1...5).map(Snapshots.id)

        // When every device edits a handful of shared records at the same time, round after round
        // (10 rounds x 3 devices), and beta's daemon is killed with SIGKILL during round 5 and restarted
        var made: [String: [ReadOnly.Version]] = [:]
        var journal: [String] = []
        for round in 0..<10 {
            var runs: [(device: String, what: String, launched: Launched)] = []
            for device in devices {
                let id = ids.randomElement()!
                let deleting = made[id] != nil && Int.random(in: 0..<4) == 0
                let arguments =
                    deleting
                    ? ["delete", id, "--json"] : ["put", "--type", "Note", "--id", id, "--json"]
                let fields = #"{"text": "\#(device) round \#(round)", "n": \#(round)}"#
                let launched = try sandbox.launch(
                    try Binary.path("syncctl"), arguments + sandbox.location(device), stdin: deleting ? "" : fields)
                runs.append((device, "\(deleting ? "delete" : "put") \(id.suffix(2))", launched))
            }
            // beta's daemon dies while this round's edits are in flight, and comes back
            if round == 5 {
                usleep(useconds_t.random(in: 0...150_000))
                daemons["beta"]!.kill9()
                daemons["beta"] = try Daemon("beta", in: sandbox)
            }
            for run in runs {
                defer { run.launched.stop() }
                let result = try run.launched.wait(timeout: 60)
                journal.append("round \(round) \(run.device): \(run.what) -> \(result.status)")
                // A delete may find the record unknown (4) or already deleted (65) on that device.
                if result.status == 4 || result.status == 65, run.what.hasPrefix("delete") { continue }
                try #require(result.status == 0, "\(run.device) \(run.what): \(result)")
                guard case .object(let report) = try result.json(), case .string(let text)? = report["version"],
                    case .object(let object) = try StrictJSON.parse(text)
                else { throw Failure("no version in the edit report: \(result.stdout)") }
                let version = try ReadOnly.Version(validating: object)
                made[version.id.rawValue, default: []].append(version)
            }
        }
        try daemons["beta"]!.waitUntilReady()

        // Then every store converges to the contract's merge of every version ever made
        let expected = made.keys.sorted().map { JSONValue.object(RecordMerge.merge(made[$0]!)!.normalForm) }
        func stores() throws -> [String: [JSONValue]] {
            try devices.reduce(into: [:]) { held, device in
                held[device] = try Snapshots.records(
                    try sandbox.syncctl(["list", "--deleted", "--json"] + sandbox.location(device)))
            }
        }
        let converged = try eventually(within: 30, every: 0.3) {
            try stores().values.allSatisfy { $0 == expected }
        }
        let held = try stores()
        let logs = daemons.values.map { "--- \($0.device)\n\($0.log)" }.joined(separator: "\n")
        #expect(converged, "journal:\n\(journal.joined(separator: "\n"))\nexpected \(expected)\nheld \(held)\n\(logs)")
        // And no version the contract keeps is missing: every record ever put is there
        #expect(Set(expected.map(Snapshots.recordID)) == Set(made.keys))
        #expect(Set(held.values.flatMap { $0.map(Snapshots.recordID) }) == Set(made.keys))
        // And every device reports the same conflicts
        let conflicts = try devices.map { try sandbox.syncctl(["conflicts", "--json"] + sandbox.location($0)).stdout }
        #expect(Set(conflicts).count == 1, "\(conflicts)")
        // And every device's own file holds what its store holds
        let filesSettled = eventually(within: 10) {
            devices.allSatisfy { Snapshots.published(sandbox.read("\($0).json"))?.records == expected }
        }
        #expect(
            filesSettled,
            "own files differ from the merge: \(devices.map { Snapshots.published(sandbox.read("\($0).json"))?.records ?? [] })"
        )

        // When a fresh device merges the folder once
        let before = fingerprint(of: sandbox.shared)
        let fresh = try sandbox.syncctl(["merge"] + sandbox.location("delta"))
        #expect(fresh.status == 0, "\(fresh)")
        let afterFresh = fingerprint(of: sandbox.shared)
        // Then it holds the same records and conflicts
        #expect(
            try Snapshots.records(try sandbox.syncctl(["list", "--deleted", "--json"] + sandbox.location("delta")))
                == expected)
        #expect(try sandbox.syncctl(["conflicts", "--json"] + sandbox.location("delta")).stdout == conflicts.first)
        // And its file, which adds nothing, makes no daemon rewrite anything in the next 3 seconds
        usleep(3_000_000)
        let later = fingerprint(of: sandbox.shared)
        #expect(
            later == afterFresh, "rewritten: \(later.filter { afterFresh[$0.key] != $0.value }.keys.sorted())\n\(logs)")
        #expect(later.filter { $0.key != "delta.json" } == before, "the files before delta's merge: \(before)")
        #expect(later.keys.filter { $0.hasSuffix(".tmp") }.isEmpty, "temporary files left: \(later.keys.sorted())")
        // And every daemon still runs and stops cleanly on SIGTERM
        for device in devices {
            let daemon = daemons[device]!
            #expect(daemon.isRunning, "\(device) exited early:\n\(daemon.log)")
            #expect(daemon.stop() == 0, "\(device):\n\(daemon.log)")
        }
    }
}
