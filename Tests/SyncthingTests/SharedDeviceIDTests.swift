import Foundation
import Testing

extension SyncthingTests {
    @Test(
        "two machines misconfigured with the same device ID: Syncthing makes a conflict copy of the file, both daemons report loudly that another device uses their ID, and nothing is lost"
    )
    func sameDeviceIDOnTwoMachines() async throws {
        try await SyncthingPair.run(devices: ("twin", "twin")) { pair in
            // Given two machines whose syncd were both given the device ID "twin", the link cut
            let (a, b) = (pair.a, pair.b)
            try await pair.partition()

            // When each puts records of its own, both rewriting twin.json in their own folder
            var made: [String] = []
            for text in ["a one", "a two", "a three"] { made.append(try await a.put(["text": text])) }
            for text in ["b one", "b two", "b three"] { made.append(try await b.put(["text": text])) }
            // And the link heals
            try await pair.heal()

            // Then Syncthing keeps one twin.json and turns the other into a conflict copy, on both machines
            let copied = try await eventually(within: 30, every: 0.1) {
                try await pair.scanBoth()
                return pair.machines.allSatisfy { machine in
                    machine.folderNames().contains { $0.hasPrefix("twin.sync-conflict-") && $0.hasSuffix(".json") }
                }
            }
            #expect(copied, "no twin.sync-conflict-*.json on both machines\n\(pair.diagnostics())")

            // And both daemons report loudly that another device is using their ID
            for machine in pair.machines {
                var warnings: [String] = []
                let warned = try await eventually(within: 30, every: 0.2) {
                    warnings = try await machine.statusWarnings()
                    return warnings.contains { $0.contains("ANOTHER DEVICE") }
                }
                #expect(warned, "machine \(machine.syncthing.name) warnings: \(warnings)\n\(pair.diagnostics())")
                #expect(
                    machine.daemonLog.contains("ANOTHER DEVICE"), "\(machine.syncthing.name) log:\n\(machine.daemonLog)"
                )
            }

            // And nothing is lost: every record put on either machine is in both stores
            let everything = try await eventually(within: 30, every: 0.2) {
                try await pair.scanBoth()
                for machine in pair.machines {
                    let held = Set(try await machine.records().map(\.id))
                    if !held.isSuperset(of: made) { return false }
                }
                return true
            }
            #expect(everything, "\(pair.diagnostics())")
            for machine in pair.machines {
                let texts = Set(try await machine.records().compactMap(\.text))
                #expect(
                    texts == ["a one", "a two", "a three", "b one", "b two", "b three"], "\(machine.syncthing.name)")
            }

            // When a makes one more edit, once both machines hold everything
            let later = try await a.put(["text": "a four"])
            try await pair.waitFor(later, on: b)
            // Then each daemon keeps publishing twin.json signed with its own key (peers that trust
            // one key must be able to read its device's file), but slows down: after two passes in
            // a row that find the other's file, it waits 1, 2, 4… up to 60 s, and says so
            let slowed = try await eventually(within: 60, every: 0.5) {
                pair.machines.allSatisfy { $0.daemonLog.contains("waiting before publishing over them again") }
            }
            #expect(slowed, "\(pair.machines.map(\.daemonLog))")
        }
    }
}
