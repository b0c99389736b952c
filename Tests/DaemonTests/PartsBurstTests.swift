import Foundation
import SnapshotFormat
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension DaemonTests {
    /// A peer's part `prefix` (one hex digit) holding `records` ids that start with it.
    static func peerPart(_ device: String, prefix: Int, records: Int, generation: Int = 1) -> (name: String, bytes: [UInt8]) {
        let digit = String(prefix, radix: 16).uppercased()
        let ids = (0..<records).map { String(format: "\(digit)000DAE0-0000-4000-8000-%012d", $0) }
        var top = JSONObject()
        top["format"] = .number(2)
        top["device"] = .string(device)
        top["part"] = .string(digit)
        top["generation"] = .number(Double(generation))
        top["records"] = .array(
            ids.map { id in
                var object = JSONObject()
                object["id"] = .string(id)
                object["type"] = .string("Note")
                object["lastModified"] = .string(Timestamp(milliseconds: Snapshots.base).written)
                object["modifiedBy"] = .string(device)
                object["versionVector"] = .object(JSONObject([(device, .number(1))]))
                object["fields"] = .object(Snapshots.fields("part \(digit)"))
                return .object(object)
            })
        return ("\(device).\(digit).json", JSONValue.object(top).canonicalBytes)
    }

    /// Sums `pass.filesRead=N` over the log's "merge pass done" lines, and counts the passes that read any.
    static func filesRead(in log: String) -> (files: Int, passes: Int) {
        var files = 0
        var passes = 0
        for line in log.split(separator: "\n") where line.contains("merge pass done") {
            guard let range = line.range(of: "pass.filesRead=") else { continue }
            let count = Int(line[range.upperBound...].prefix { $0.isNumber }) ?? 0
            files += count
            if count > 0 { passes += 1 }
        }
        return (files, passes)
    }

    @Test("a peer's 16 parts arriving together are read in one pass, each once, and every record reaches syncd's store")
    func burstOfParts() throws {
        // Given a running syncd that has published its (empty) snapshot
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let daemon = try Daemon("desk", in: sandbox)
        defer { daemon.stop() }
        try daemon.waitUntilReady()
        #expect(eventually(within: 10) { sandbox.read("desk.json") != nil })
        let before = Self.filesRead(in: daemon.log)

        // When a peer's 16 parts are renamed into the folder while syncd is held (SIGSTOP), so that
        // all their events wait in its queue, as when a sync engine delivers them in a burst
        let parts = (0..<16).map { Self.peerPart("phone", prefix: $0, records: 20) }
        for part in parts {
            try Data(part.bytes).write(to: URL(fileURLWithPath: sandbox.shared + "/.incoming-" + part.name))
        }
        daemon.launched.signal(SIGSTOP)
        for part in parts {
            rename(sandbox.shared + "/.incoming-" + part.name, sandbox.shared + "/" + part.name)
        }
        daemon.launched.signal(SIGCONT)

        // Then every record reaches its store, read by one pass, each part once
        let merged = eventually(within: 30, every: 0.1) {
            (try? Snapshots.records(try sandbox.syncctl(["list", "--json"] + sandbox.location("desk"))).count) == 320
        }
        #expect(merged, "\(daemon.log)")
        usleep(300_000)  // the events of its own publication are handled
        let after = Self.filesRead(in: daemon.log)
        #expect(after.files - before.files == 16, "files read: \(after.files - before.files)\n\(daemon.log)")
        #expect(after.passes - before.passes == 1, "passes that read files: \(after.passes - before.passes)\n\(daemon.log)")
    }
}

extension DaemonTests {
    @Test(
        "files that change while syncd's pass waits for another process's lock on the state directory are read by that pass, and bring no second pass"
    )
    func changesWhileWaitingForTheLock() throws {
        // Given a running syncd, logging at debug (each event it takes, each pass it starts)
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let daemon = try Daemon("desk", in: sandbox, logLevel: "debug")
        defer { daemon.stop() }
        try daemon.waitUntilReady()
        #expect(eventually(within: 10) { sandbox.read("desk.json") != nil })
        func starts() -> Int { daemon.log.components(separatedBy: "merge pass starting").count - 1 }
        func delivered(_ part: (name: String, bytes: [UInt8])) throws {
            try Data(part.bytes).write(to: URL(fileURLWithPath: sandbox.shared + "/.incoming-" + part.name))
            rename(sandbox.shared + "/.incoming-" + part.name, sandbox.shared + "/" + part.name)
        }

        // When another process holds the state directory's lock (as `syncctl put` does while it
        // merges and publishes), a peer's part arrives and syncd's pass starts and waits for the
        // lock, and a second part arrives meanwhile, its event taken
        let lock = open(sandbox.state("desk") + "/lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        try #require(lock >= 0 && flock(lock, LOCK_EX) == 0)
        var locked = true
        defer { if locked { close(lock) } }
        let before = starts()
        try delivered(Self.peerPart("phone", prefix: 1, records: 3))
        #expect(eventually(within: 30) { starts() == before + 1 }, "\(daemon.log)")
        try delivered(Self.peerPart("phone", prefix: 2, records: 3))
        #expect(
            eventually(within: 30) { daemon.log.contains("folder changed file=phone.2.json") }, "\(daemon.log)")
        // (and another process writes the store, as syncctl does: its event taken as well)
        let storeEvents = daemon.log.components(separatedBy: "store written").count
        let write = try sandbox.launch(
            "/usr/bin/sqlite3", [sandbox.state("desk") + "/store.sqlite"], stdin: ".timeout 30000\nPRAGMA user_version = 7;\n"
        ).wait(timeout: 60)
        try #require(write.status == 0 && write.stderr.isEmpty, "\(write)")
        #expect(
            eventually(within: 30) { daemon.log.components(separatedBy: "store written").count > storeEvents },
            "\(daemon.log)")
        let counted = Self.filesRead(in: daemon.log)
        close(lock)
        locked = false

        // Then the waiting pass reads both parts, and no pass starts after it for the second one
        // or the store (their changes came before the pass listed the folder), nor for the store
        // events of its own commit. Another part, later, is a pass of its own.
        #expect(eventually(within: 30) { Self.filesRead(in: daemon.log).files == counted.files + 2 }, "\(daemon.log)")
        try delivered(Self.peerPart("phone", prefix: 3, records: 3))
        #expect(eventually(within: 30) { Self.filesRead(in: daemon.log).files == counted.files + 3 }, "\(daemon.log)")
        #expect(starts() == before + 2, "\(daemon.log)")
        #expect(Self.filesRead(in: daemon.log).passes == counted.passes + 2, "\(daemon.log)")
    }
}

extension DaemonTests {
    @Test("a file of many rejected records gives syncd a few log lines a pass, not one per record")
    func rejectedRecordsLoggedBounded() throws {
        // Given a running syncd
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let daemon = try Daemon("desk", in: sandbox)
        defer { daemon.stop() }
        try daemon.waitUntilReady()

        // When a peer's part 2 holds 30 records whose ids start with 1 (each rejected: not its part's)
        var part = Self.peerPart("phone", prefix: 1, records: 30)
        let text = String(decoding: part.bytes, as: UTF8.self).replacingOccurrences(of: #""part":"1""#, with: #""part":"2""#)
        part = ("phone.2.json", Array(text.utf8))
        try Data(part.bytes).write(to: URL(fileURLWithPath: sandbox.shared + "/.incoming"))
        rename(sandbox.shared + "/.incoming", sandbox.shared + "/" + part.name)

        // Then its pass logs the first 10 one by one and the other 20 in one line
        #expect(eventually(within: 30) { daemon.log.contains("20 more record(s) rejected") }, "\(daemon.log)")
        #expect(daemon.log.components(separatedBy: "record rejected").count - 1 == 10, "\(daemon.log)")
    }
}
