import Foundation
import Testing

extension SyncthingTests {
    /// Parts of 16 KiB at most, so that a few hundred records make 16 parts.
    static let smallParts = ["SYNCD_PART_SPLIT_KILOBYTES": "16", "SYNCD_PART_JOIN_KILOBYTES": "4"]

    /// A snapshot of device `seed` holding `count` records spread over every leading hex digit.
    static func seedSnapshot(count: Int) throws -> Data {
        let records: [[String: Any]] = (0..<count).map { n in
            let leading = UInt32(truncatingIfNeeded: UInt64(n + 1) &* 2_654_435_761)
            return [
                "id": String(format: "%08X-0000-4000-8000-%012d", leading, n), "type": "Note",
                "lastModified": "2026-11-20T10:00:00.000Z", "modifiedBy": "seed", "versionVector": ["seed": 1],
                "fields": ["text": "seeded note number \(n), long enough to fill a part"],
            ]
        }
        return try JSONSerialization.data(
            withJSONObject: ["format": 1, "device": "seed", "generation": 1, "records": records], options: [.sortedKeys])
    }

    /// The generation of each of `device`'s part files in `machine`'s folder, by name.
    static func partGenerations(_ device: String, on machine: Machine) -> [String: Int] {
        var generations: [String: Int] = [:]
        for name in machine.folderNames() where name.hasPrefix(device + ".") && name.hasSuffix(".json") {
            let middle = name.dropFirst(device.count + 1).dropLast(5)
            guard (1...4).contains(middle.count), middle.allSatisfy({ $0.isHexDigit && !$0.isLowercase }) else { continue }
            generations[name] = machine.generation(of: name)
        }
        return generations
    }

    @Test("snapshots in parts travel through two real Syncthing instances: an edit rewrites one part of its device, on both machines")
    func partsThroughSyncthing() async throws {
        try await SyncthingPair.run(settings: Self.smallParts) { pair in
            // Given a seed of 300 records, merged by both machines: each publishes 16 parts
            try await pair.a.writeFile("seed.json", try Self.seedSnapshot(count: 300))
            let seeded = try await eventually(within: 60, every: 0.2) {
                try await pair.scanBoth()
                return pair.machines.allSatisfy {
                    Self.partGenerations("alpha", on: $0).count == 16 && Self.partGenerations("beta", on: $0).count == 16
                }
            }
            #expect(seeded, "\(pair.diagnostics())")
            let before = Self.partGenerations("alpha", on: pair.b)

            // When alpha edits one seeded record
            let id = String(format: "%08X-0000-4000-8000-%012d", UInt32(truncatingIfNeeded: UInt64(8) &* 2_654_435_761), 7)
            try await pair.a.put(["text": "edited on alpha"], id: id)

            // Then beta gets the edit through alpha's one changed part
            _ = try await pair.waitFor(id, on: pair.b) { $0.text == "edited on alpha" }
            let after = try await eventually(within: 30, every: 0.1) {
                try await pair.scanBoth()
                return Self.partGenerations("alpha", on: pair.b) != before
            }
            #expect(after)
            let changed = Self.partGenerations("alpha", on: pair.b).filter { before[$0.key] != $0.value }.map(\.key)
            #expect(changed == ["alpha.\(id.prefix(1)).json"], "\(changed)")
            // And both machines hold the same records
            let same = try await eventually(within: 30, every: 0.2) {
                try await pair.scanBoth()
                return try await pair.a.storeListing() == pair.b.storeListing()
            }
            #expect(same, "\(pair.diagnostics())")
        }
    }

    @Test(
        "two machines misconfigured with one device ID, both editing one part: Syncthing makes a conflict copy of the part, both daemons merge it and report the other device, and nothing is lost"
    )
    func conflictCopyOfAPart() async throws {
        try await SyncthingPair.run(devices: ("twin", "twin"), settings: Self.smallParts) { pair in
            // Given both machines holding a seed of 300 records, published in parts
            try await pair.a.writeFile("seed.json", try Self.seedSnapshot(count: 300))
            let seeded = try await eventually(within: 60, every: 0.2) {
                try await pair.scanBoth()
                return pair.machines.allSatisfy { Self.partGenerations("twin", on: $0).count == 16 }
            }
            #expect(seeded, "\(pair.diagnostics())")

            // When, with the link cut, each puts new records whose ids are all in part 3
            try await pair.partition()
            var made: [String] = []
            for (index, machine) in pair.machines.enumerated() {
                for n in 0..<3 {
                    let id = String(format: "3%07X-0000-4000-8000-%012d", index * 16 + n, n)
                    made.append(try await machine.put(["text": "\(machine.syncthing.name) \(n)"], id: id))
                }
            }
            try await pair.heal()

            // Then Syncthing keeps one twin.3.json and turns the other into a conflict copy of the part
            let copied = try await eventually(within: 30, every: 0.1) {
                try await pair.scanBoth()
                return pair.machines.allSatisfy { machine in
                    machine.folderNames().contains { $0.hasPrefix("twin.3.sync-conflict-") && $0.hasSuffix(".json") }
                }
            }
            #expect(copied, "no twin.3.sync-conflict-*.json on both machines\n\(pair.diagnostics())")
            // And every record put on either machine reaches both stores
            let everything = try await eventually(within: 30, every: 0.2) {
                try await pair.scanBoth()
                for machine in pair.machines where !Set(try await machine.records().map(\.id)).isSuperset(of: made) {
                    return false
                }
                return true
            }
            #expect(everything, "\(pair.diagnostics())")
            // And both daemons report that another device uses their ID
            for machine in pair.machines {
                let warned = try await eventually(within: 30, every: 0.2) {
                    try await machine.statusWarnings().contains { $0.contains("ANOTHER DEVICE") }
                }
                #expect(warned, "\(machine.syncthing.name):\n\(machine.daemonLog)")
            }
        }
    }
}
