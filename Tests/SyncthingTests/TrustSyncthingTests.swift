import Foundation
import Testing

extension Machine {
    /// `syncctl key`: this machine's public key, `ed25519:…`.
    func publicKey() async throws -> String {
        let run = try await syncctl(["key"])
        guard run.status == 0 else { throw HarnessError("key on \(syncthing.name) failed: \(run)") }
        return run.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `syncctl trust DEVICE KEY` on this machine, while its syncd runs.
    func trust(_ device: String, _ key: String) async throws {
        let run = try await syncctl(["trust", device, key])
        guard run.status == 0 else { throw HarnessError("trust on \(syncthing.name) failed: \(run)") }
    }

    /// `syncctl status --json`, parsed.
    func status() async throws -> [String: Any] {
        let run = try await syncctl(["status", "--json"])
        guard run.status == 0,
            let status = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
        else { throw HarnessError("status on \(syncthing.name) failed: \(run)") }
        return status
    }

    /// The files `syncctl status --json` lists as rejected for trust.
    func rejectedForTrust() async throws -> Set<String> {
        Set(try await status()["rejectedForTrust"] as? [String] ?? [])
    }

    /// The last problem of source `name` in `syncctl status --json`, "" when it has none.
    func problem(of name: String) async throws -> String {
        let sources = try await status()["sources"] as? [[String: Any]] ?? []
        return sources.first { $0["name"] as? String == name }?["lastProblem"] as? String ?? ""
    }
}

/// The `key` a snapshot file names at its top level, nil when the file is missing or names none.
func namedKey(_ path: String) -> String? {
    guard let data = FileManager.default.contents(atPath: path),
        let top = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
    else { return nil }
    return top["key"] as? String
}

extension SyncthingTests {
    /// Runs syncctl with a state directory and a shared folder of its own, as another machine
    /// would (no Syncthing): `syncctl ARGUMENTS --shared ROOT/shared --state ROOT/state --this-device DEVICE`.
    static func syncctl(_ arguments: [String], device: String, root: String, stdin: String = "") async throws -> ToolRun
    {
        try FileManager.default.createDirectory(atPath: root + "/shared", withIntermediateDirectories: true)
        let process = try ChildProcess(
            name: "syncctl \(arguments.first ?? "") as \(device)", executable: try Executables.built("syncctl"),
            arguments: arguments + ["--shared", root + "/shared", "--state", root + "/state", "--this-device", device],
            environment: ["PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": root, "LANG": "C.UTF-8"],
            outputPath: root + "/syncctl-" + UUID().uuidString.prefix(8), stdin: stdin)
        let run = try await process.finish(timeout: 60)
        guard run.status == 0 else { throw HarnessError("syncctl \(arguments) as \(device) failed: \(run)") }
        return run
    }

    /// A file claiming to be `device`'s, signed with a key of its own (a state directory that is not
    /// `device`'s): a snapshot of `device` holding `records` (id → text), made by syncctl elsewhere.
    static func forgedSnapshot(of device: String, records: [(id: String, text: String)], root: String) async throws
        -> (bytes: Data, key: String)
    {
        for record in records {
            _ = try await syncctl(
                ["put", "--type", "Note", "--id", record.id], device: device, root: root,
                stdin: #"{"text": "\#(record.text)"}"#)
        }
        let key = try await syncctl(["key"], device: device, root: root).stdout
        let bytes = try Data(contentsOf: URL(fileURLWithPath: root + "/shared/" + device + ".json"))
        return (bytes, key.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    @Test(
        "two syncd that trust each other over two real Syncthing instances: their edits merge both ways, a file forged in one's folder under the other's name (another key, or one byte changed) is rejected on both machines, and the genuine edits keep merging with nothing lost"
    )
    func trustThroughSyncthing() async throws {
        try await SyncthingPair.run { pair in
            // Given two machines whose syncd trust each other's keys (given while they run)
            let (a, b) = (pair.a, pair.b)
            let keys = (alpha: try await a.publicKey(), beta: try await b.publicKey())
            try await a.trust("beta", keys.beta)
            try await b.trust("alpha", keys.alpha)
            let trusted = try await a.status()["trusted"] as? [[String: Any]] ?? []
            #expect(trusted.compactMap { $0["key"] as? String }.sorted() == [keys.alpha, keys.beta].sorted())

            // When each puts a record
            let fromA = try await a.put(["text": "a one"])
            let fromB = try await b.put(["text": "b one"])
            // Then each reaches the other's store
            try await pair.waitFor(fromB, on: a) { $0.text == "b one" }
            try await pair.waitFor(fromA, on: b) { $0.text == "a one" }

            // When two files claiming to be beta's are dropped into a's folder (and travel to b's):
            // one signed with another key, holding a new record and a newer version of b's record,
            // and a copy of b's genuine file with one byte of b's record changed
            let invented = "F0F0F0F0-0000-4000-8000-000000000001"
            let forged = try await Self.forgedSnapshot(
                of: "beta", records: [(invented, "invented"), (fromB, "forged")], root: pair.root + "/forger")
            #expect(forged.key != keys.beta)
            let forgedName = "beta.sync-conflict-20261125-110000-FORGED1.json"
            try await a.writeFile(forgedName, forged.bytes)
            let genuine = try Data(contentsOf: URL(fileURLWithPath: a.folder + "/beta.json"))
            let text = String(decoding: genuine, as: UTF8.self)
            #expect(text.contains(#""b one""#))
            let tamperedName = "beta.sync-conflict-20261125-110001-TAMPERD.json"
            try await a.writeFile(
                tamperedName, Data(text.replacingOccurrences(of: #""b one""#, with: #""b onE""#).utf8))

            // Then a rejects both as a whole, saying why, on its own and with no restart
            let names: Set = [forgedName, tamperedName]
            var seen: Set<String> = []
            let rejected = try await eventually(within: 30, every: 0.1) {
                seen = try await a.rejectedForTrust()
                return seen == names
            }
            #expect(rejected, "a rejected \(seen)\n\(pair.diagnostics())")
            #expect(try await a.problem(of: forgedName).contains(forged.key))
            #expect(try await a.problem(of: tamperedName).contains("does not verify"))
            // And none of their versions reached a's store
            #expect(try await a.record(invented) == nil)
            #expect(try await a.record(fromB)?.text == "b one")
            // And b, which sees them under its own name but not signed by it, rejects them too
            let rejectedOnB = try await eventually(within: 30, every: 0.1) {
                try await pair.scanBoth()
                seen = try await b.rejectedForTrust()
                return seen == names
            }
            #expect(rejectedOnB, "b rejected \(seen)\n\(pair.diagnostics())")
            #expect(try await b.record(invented) == nil)

            // When, with the link cut, the forged file replaces beta.json itself in a's folder
            try await pair.partition()
            try await a.writeFile("beta.json", forged.bytes)
            // Then a rejects beta.json, and keeps what b's genuine file gave it
            let replacedRejected = try await eventually(within: 30, every: 0.1) {
                seen = try await a.rejectedForTrust()
                return seen == names.union(["beta.json"])
            }
            #expect(replacedRejected, "a rejected \(seen)\n\(pair.diagnostics())")
            #expect(try await a.record(invented) == nil)
            #expect(try await a.record(fromB)?.text == "b one")

            // When the link heals, and the forged beta.json reaches b
            try await pair.heal()
            // Then b publishes its own file again, signed, which a merges: beta.json is no longer rejected
            let restored = try await eventually(within: 60, every: 0.2) {
                try await pair.scanBoth()
                seen = try await a.rejectedForTrust()
                return seen == names && namedKey(a.folder + "/beta.json") == keys.beta
            }
            #expect(restored, "a rejected \(seen)\n\(pair.diagnostics())")
            #expect(try await a.record(invented) == nil)
            #expect(try await b.record(invented) == nil)

            // When b edits its record and puts a new one, and a puts one more
            try await b.put(["text": "b one, edited"], id: fromB)
            let laterB = try await b.put(["text": "b two"])
            let laterA = try await a.put(["text": "a two"])

            // Then b's genuine edits keep merging on a, and a's on b
            try await pair.waitFor(fromB, on: a) { $0.text == "b one, edited" }
            try await pair.waitFor(laterB, on: a) { $0.text == "b two" }
            try await pair.waitFor(laterA, on: b) { $0.text == "a two" }
            // And nothing is lost: both stores hold the same four records, none of them forged
            let records = try await pair.waitUntilStoresAgree { $0.count == 4 }
            #expect(Set(records.map(\.id)) == [fromA, fromB, laterA, laterB])
            #expect(Set(records.compactMap(\.text)) == ["a one", "b one, edited", "a two", "b two"])
            #expect(records.allSatisfy { $0.conflicts.isEmpty }, "\(records)")
            // And the forged files are still the only ones rejected
            #expect(try await a.rejectedForTrust() == names)
            #expect(try await b.rejectedForTrust() == names)
        }
    }
}
