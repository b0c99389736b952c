import Foundation
import SnapshotFormat
import SnapshotMerge
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A folder of three devices' files with `count` records each, overlapping: every fifth record
/// is in conflict between all three; in the others laptop's version dominates; some are deleted.
enum LargeFolder {
    static let devices = ["phone", "laptop", "tablet"]

    /// Writes the files and returns every record as the contract's merge makes it, in id order.
    @discardableResult
    static func write(into folder: String, count: Int, in workspace: Workspace) throws -> [JSONValue] {
        var all: [RecordID: [ReadOnly.Version]] = [:]
        for (k, device) in devices.enumerated() {
            var versions: [ReadOnly.Version] = []
            versions.reserveCapacity(count)
            for i in 0..<count {
                let vector: [String: Int64] =
                    i % 5 == 0
                    ? [device: 1]
                    : [["phone": 1], ["phone": 1, "tablet": 1, "laptop": Int64(1 + i % 3)], ["phone": 1, "tablet": 1]][k]
                var fields = JSONObject()
                fields["name"] = .string("item \(i) from \(device) ✓")
                fields["n"] = .number(Double(i))
                fields["tags"] = .array([.string(device), .bool(i % 2 == 0)])
                let deleted = i % 97 == 1 && k == 1
                let version = Files.version(
                    i, by: device, vector: vector, at: Int64(i * 3 + k), fields: deleted ? JSONObject() : fields, deleted: deleted)
                versions.append(version)
                all[version.id, default: []].append(version)
            }
            try workspace.write("\(device).json", Files.snapshot(device, generation: Int64(k + 1), versions: versions), in: folder)
        }
        return all.keys.sorted().map { .object(RecordMerge.merge(all[$0]!)!.normalForm) }
    }
}

@Suite("syncctl: crash safety and the state lock", .serialized)
struct CrashSafetyTests {
    @Test("merge killed with SIGKILL at random moments leaves a usable store and a valid own file; the final result equals a one-shot merge")
    func killedMerges() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let pristine = workspace.path("pristine")
        try FileManager.default.createDirectory(atPath: pristine, withIntermediateDirectories: true)
        let expected = try LargeFolder.write(into: workspace.shared, count: 3_000, in: workspace)
        try LargeFolder.write(into: pristine, count: 3_000, in: workspace)
        let location = workspace.location()

        // When merges are killed after random delays
        var delays: [Int] = []
        for _ in 0..<15 {
            let delay = Int.random(in: 0...300)
            delays.append(delay)
            let started = try workspace.start(["merge"] + location)
            usleep(useconds_t(delay * 1_000))
            started.kill()  // SIGKILL by PID, then reaped
            // Then at every moment the own file, if present, is a complete valid file
            if FileManager.default.fileExists(atPath: workspace.sharedPath("desk.json")) {
                let published = try Files.published(try workspace.read("desk.json"), name: "desk.json")
                #expect(published.reading.problems.isEmpty, "after a kill at \(delay) ms")
            }
        }

        // Then a final merge succeeds
        let final = try workspace.run(["merge"] + location, timeout: 180)
        #expect(final.status == 0, "delays \(delays): \(final)")
        // And the store opens and holds every record
        let status = try workspace.run(["status", "--json"] + location)
        #expect(status.status == 0, "\(status)")
        let counts = try jsonObject(status.stdout)["counts"]
        #expect(counts == .object(CommandFolder.object(#"{"live": 2975, "deleted": 25, "inConflict": 600, "benignOnly": 0}"#)), "\(status)")
        // And the store holds exactly the contract's merge of the files, which the own file holds too
        let held = try jsonArray(try workspace.run(["list", "--json", "--deleted"] + location).stdout)
        #expect(held.count == 3_000)
        #expect(held == expected)
        let published = try Files.published(try workspace.read("desk.json"), name: "desk.json")
        #expect(published.reading.problems.isEmpty)
        #expect(published.records == held)
        // And no temporary file is left
        let names = try FileManager.default.contentsOfDirectory(atPath: workspace.shared)
        #expect(names.sorted() == ["desk.json", "laptop.json", "phone.json", "tablet.json"], "left: \(names)")

        // And the result equals a one-shot merge of the same files by a fresh state directory
        let fresh = ["--shared", pristine, "--state", workspace.state("fresh"), "--device", "desk"]
        #expect(try workspace.run(["merge"] + fresh, timeout: 180).status == 0)
        let oneShot = try jsonArray(try workspace.run(["list", "--json", "--deleted"] + fresh).stdout)
        #expect(oneShot == held)
        let oneShotFile = try Files.published(try [UInt8](Data(contentsOf: URL(fileURLWithPath: pristine + "/desk.json"))), name: "desk.json")
        #expect(oneShotFile.records == published.records)
    }

    @Test("a first merge killed mid-transaction leaves its rollback journal; the next opening rolls the store back to empty, and a merge then gives every record")
    func killedFirstMergeRollsBack() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let expected = try LargeFolder.write(into: workspace.shared, count: 20_000, in: workspace)
        let location = workspace.location()
        // A first merge fills the empty store in rollback-journal mode: the journal exists from
        // the transaction's first write until its commit deletes it, and the records' pages go
        // straight to the end of store.sqlite (SQLite also writes a journal for a moment when it
        // creates the store and when it changes mode, with the file still small).
        let database = workspace.state() + "/store.sqlite"
        let journal = database + "-journal"
        func size(_ path: String) -> Int64 {
            var info = stat()
            return stat(path, &info) == 0 ? Int64(info.st_size) : -1
        }
        func liveCount() throws -> Int? {
            let status = try workspace.run(["status", "--json"] + location)
            #expect(status.status == 0, "\(status)")
            guard case .object(let counts)? = try jsonObject(status.stdout)["counts"] else { return nil }
            guard case .number(let live)? = counts["live"] else { return nil }
            return Int(live)
        }

        // When a first merge is killed while its journal is on disk and records are in the file
        // (tried until a kill lands before the commit)
        var sizeAtKill: Int64 = 0
        var rolledBack = false
        for _ in 0..<20 where !rolledBack {
            try? FileManager.default.removeItem(atPath: workspace.state())
            for name in try FileManager.default.contentsOfDirectory(atPath: workspace.shared)
            where PublishedSnapshot.isOwnName(name, of: "desk") {
                try? FileManager.default.removeItem(atPath: workspace.sharedPath(name))
            }
            let started = try workspace.start(["merge"] + location)
            while started.process.isRunning && !(size(journal) >= 0 && size(database) > 4 << 20) { usleep(100) }
            started.kill()  // SIGKILL by PID, then reaped
            sizeAtKill = size(database)
            guard size(journal) >= 0, sizeAtKill > 4 << 20 else { continue }
            // Then the next opening rolls the transaction back: the store is empty, the journal
            // gone, the file cut back to what it was before the merge. (All the records: the
            // kill came after the commit, while the store went back to WAL mode; try again.)
            let live = try liveCount()
            if live == 0 {
                rolledBack = true
            } else {
                let expectedLive = expected.filter {
                    guard case .object(let record) = $0 else { return true }
                    return record["deleted"] != .bool(true)
                }.count
                try #require(live == expectedLive, "a killed first merge left \(live ?? -1) records, neither none nor all")
            }
        }
        try #require(rolledBack, "no kill landed while the first merge's journal was on disk")
        #expect(!FileManager.default.fileExists(atPath: journal))
        #expect(size(database) < sizeAtKill / 4, "store.sqlite was \(sizeAtKill) bytes at the kill, \(size(database)) after")
        // And a merge then holds and publishes exactly the contract's merge of the files
        let final = try workspace.run(["merge"] + location, timeout: 180)
        #expect(final.status == 0, "\(final)")
        let held = try jsonArray(try workspace.run(["list", "--json", "--deleted"] + location).stdout)
        #expect(held.count == 20_000)
        #expect(held == expected)
        let published = try Files.published(in: workspace.shared, device: "desk")
        #expect(published.problems.isEmpty)
        #expect(published.records == held)
    }

    @Test("a command that opens the store during another process's first merge says it waits, then sees every record")
    func statusDuringFirstMerge() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        try LargeFolder.write(into: workspace.shared, count: 20_000, in: workspace)
        let location = workspace.location()
        let database = workspace.state() + "/store.sqlite"
        func size(_ path: String) -> Int64 {
            var info = stat()
            return stat(path, &info) == 0 ? Int64(info.st_size) : -1
        }
        // (Tried until a status starts while the first merge's transaction is still running.)
        var sawWait = false
        for _ in 0..<10 where !sawWait {
            try? FileManager.default.removeItem(atPath: workspace.state())
            try? FileManager.default.removeItem(atPath: workspace.sharedPath("desk.json"))
            // Given a first merge filling the store (its journal on disk, records in the file)
            let merging = try workspace.start(["merge"] + location)
            defer { merging.kill() }
            while merging.process.isRunning && !(size(database + "-journal") >= 0 && size(database) > 4 << 20) { usleep(100) }
            guard merging.process.isRunning else { continue }
            // When status opens the store meanwhile
            let status = try workspace.run(["status", "--json"] + location, timeout: 120)
            let merged = try merging.wait(timeout: 120)
            #expect(merged.status == 0, "\(merged)")
            #expect(status.status == 0, "\(status)")
            guard status.stderr.contains("waiting for another process") else { continue }
            sawWait = true
            // Then it said so, waited for the commit, and counted every record
            guard case .object(let counts)? = try jsonObject(status.stdout)["counts"],
                case .number(let live)? = counts["live"]
            else {
                Issue.record("no counts: \(status)")
                break
            }
            let listed = try jsonArray(try workspace.run(["list", "--json"] + location).stdout)
            #expect(Int(live) == listed.count && listed.count > 10_000, "\(status)")
        }
        #expect(sawWait, "no status ran during the first merge")
    }

    @Test("a merge waits while another process holds the state directory's lock, then succeeds")
    func waitsForLock() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        try CommandFolder.fill(workspace)
        #expect(try workspace.run(["merge"] + workspace.location()).status == 0)
        // Given this test process holds <state>/lock
        var descriptor = open(workspace.state() + "/lock", O_RDWR)
        try #require(descriptor >= 0)
        defer { if descriptor >= 0 { close(descriptor) } }
        #expect(flock(descriptor, LOCK_EX | LOCK_NB) == 0)
        try workspace.write("phone (1).json", try workspace.read("phone.json"))
        // When a merge starts, it waits
        let waiting = try workspace.start(["merge"] + workspace.location())
        defer { waiting.kill() }
        usleep(1_000_000)
        #expect(waiting.process.isRunning, "merge did not wait for the lock")
        // And when the lock is released it finishes
        close(descriptor)
        descriptor = -1
        let run = try waiting.wait(timeout: 60)
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.contains("phone (1).json"))
    }

    @Test("two concurrent merges and two concurrent puts on one state all succeed with consistent generations")
    func concurrentCommands() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        try LargeFolder.write(into: workspace.shared, count: 1_000, in: workspace)
        let location = workspace.location()
        // Given a state directory in use (creating it is not what this test is about)
        #expect(try workspace.run(["key"] + location).status == 0)
        // Two merges at once: one publishes generation 1, the other waits and finds it up to date
        let first = try workspace.start(["merge", "--json"] + location)
        let second = try workspace.start(["merge", "--json"] + location)
        defer {
            first.kill()
            second.kill()
        }
        let runs = [try first.wait(timeout: 180), try second.wait(timeout: 180)]
        for run in runs { #expect(run.status == 0, "\(run)") }
        let generations = try runs.map { run -> Int? in
            (try run.json() as? [String: Any])?["publishedGeneration"] as? Int
        }
        #expect(generations.compactMap { $0 } == [1], "published generations: \(generations)")
        #expect(try Files.published(try workspace.read("desk.json"), name: "desk.json").reading.generation == 1)

        // Two puts at once: each publishes its own generation, 2 and 3, and the file holds both
        let puts = try ["A", "B"].map { name in
            try workspace.start(["put", "--json", "--type", "Note"] + location, stdin: #"{"name": "\#(name)"}"#)
        }
        defer { puts.forEach { $0.kill() } }
        let reports = try puts.map { try $0.wait(timeout: 180) }
        for report in reports { #expect(report.status == 0, "\(report)") }
        let published = try reports.map { (try $0.json() as? [String: Any])?["publishedGeneration"] as? Int }
        #expect(published.compactMap { $0 }.sorted() == [2, 3], "\(published)")
        let ids = try reports.map { try #require((try $0.json() as? [String: Any])?["id"] as? String) }
        let file = try Files.published(try workspace.read("desk.json"), name: "desk.json")
        #expect(file.reading.generation == 3)
        for id in ids { #expect(file.reading.versions.contains { $0.id.rawValue == id }) }
        #expect(file.records == (try jsonArray(try workspace.run(["list", "--json", "--deleted"] + location).stdout)))
    }
}

extension CrashSafetyTests {
    /// `count` notes of `device`, their ids spread over every leading hex digit, at `count`'s
    /// version (a larger folder supersedes a smaller one record for record).
    static func spreadNotes(_ device: String, count: Int, edit: Int64 = 1) -> [UInt8] {
        let versions = (0..<count).map { n -> ReadOnly.Version in
            let leading = UInt32(truncatingIfNeeded: UInt64(n + 1) &* 2_654_435_761)
            var fields = JSONObject()
            fields["text"] = .string("note \(n), edit \(edit), " + String(repeating: "with text enough to fill the parts ", count: 16))
            return ReadOnly.Version(
                id: RecordID(String(format: "%08X-0000-4000-8000-%012d", leading, n))!, type: "Note",
                lastModified: Timestamp(milliseconds: Files.base + edit * 1000 + Int64(n)), modifiedBy: DeviceID(device),
                versionVector: VersionVector([DeviceID(device)!: edit]), fields: fields)
        }
        return Files.snapshot(device, generation: edit, versions: versions)
    }

    @Test("merges killed with SIGKILL while they split the snapshot into parts and join it again: at every moment the device's files are valid and hold every record it published; the next merge finishes the job")
    func killedSplitsAndJoins() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        var environment = workspace.environment
        environment["SYNCD_PART_SPLIT_KILOBYTES"] = "40"
        environment["SYNCD_PART_JOIN_KILOBYTES"] = "20"
        let location = workspace.location()
        // Given desk's snapshot of phone's 20 notes, in one file
        try workspace.write("phone.json", Self.spreadNotes("phone", count: 20))
        #expect(try workspace.run(["merge"] + location, environment: environment).status == 0)
        #expect(try PublishedSnapshot.read(folder: workspace.shared, device: "desk")?.files == ["desk.json"])
        // The records desk has published, and must never stop publishing
        var published = Set(try PublishedSnapshot.read(folder: workspace.shared, device: "desk")!.versions.map(\.id))

        // When phone grows to 80 notes (a split into parts) and then deletes 70 (a join), and
        // merges are killed at random moments on the way
        var delays: [Int] = []
        for (step, count) in [(2, 80), (3, 80)] {
            try workspace.write("phone.json", Self.spreadNotes("phone", count: count, edit: Int64(step)))
            for _ in 0..<8 {
                let delay = Int.random(in: 0...120)
                delays.append(delay)
                let started = try workspace.start(["merge", "--accept-deletions", "phone.json"] + location, environment: environment)
                usleep(useconds_t(delay * 1_000))
                started.kill()
                // Then desk's files are valid snapshots, and together hold every record desk published
                let snapshot = try #require(try PublishedSnapshot.read(folder: workspace.shared, device: "desk"))
                #expect(snapshot.problems.isEmpty, "after a kill at \(delay) ms: \(snapshot.files)")
                let held = Set(snapshot.versions.map(\.id))
                #expect(held.isSuperset(of: published), "after a kill at \(delay) ms (delays \(delays)): \(snapshot.files)")
                published.formUnion(held)
            }
            // And a merge that runs to its end leaves the layout the policy asks for, and no leftover
            #expect(try workspace.run(["merge", "--accept-deletions", "phone.json"] + location, environment: environment).status == 0)
            let final = try #require(try PublishedSnapshot.read(folder: workspace.shared, device: "desk"))
            #expect(final.files.count == 16 && final.recordCount == 80, "\(final.files)")
            published = Set(final.versions.map(\.id))
        }
        // When phone deletes 70 of its notes (tombstones carry no text: small parts, joined)
        let tombstones = (0..<80).map { n -> ReadOnly.Version in
            let leading = UInt32(truncatingIfNeeded: UInt64(n + 1) &* 2_654_435_761)
            var fields = JSONObject()
            if n < 10 { fields["text"] = .string("kept \(n)") }
            return ReadOnly.Version(
                id: RecordID(String(format: "%08X-0000-4000-8000-%012d", leading, n))!, type: "Note",
                lastModified: Timestamp(milliseconds: Files.base + 9_000_000 + Int64(n)), modifiedBy: DeviceID("phone"),
                versionVector: VersionVector([DeviceID("phone")!: 9]), deleted: n >= 10, fields: fields)
        }
        try workspace.write("phone.json", Files.snapshot("phone", generation: 9, versions: tombstones))
        for _ in 0..<8 {
            let delay = Int.random(in: 0...120)
            delays.append(delay)
            let started = try workspace.start(["merge", "--accept-deletions", "phone.json"] + location, environment: environment)
            usleep(useconds_t(delay * 1_000))
            started.kill()
            let snapshot = try #require(try PublishedSnapshot.read(folder: workspace.shared, device: "desk"))
            #expect(snapshot.problems.isEmpty, "after a kill at \(delay) ms: \(snapshot.files)")
            #expect(Set(snapshot.versions.map(\.id)).isSuperset(of: published), "after a kill at \(delay) ms: \(snapshot.files)")
        }
        #expect(try workspace.run(["merge", "--accept-deletions", "phone.json"] + location, environment: environment).status == 0)
        let joined = try #require(try PublishedSnapshot.read(folder: workspace.shared, device: "desk"))
        #expect(joined.files == ["desk.json"] && joined.recordCount == 80, "\(joined.files)")
        let names = try FileManager.default.contentsOfDirectory(atPath: workspace.shared)
        #expect(names.filter { $0.hasSuffix(".tmp") }.isEmpty, "\(names)")
    }
}
