import Foundation
import SnapshotFormat
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension DaemonTests {
    @Test(
        "SIGTERM during a large first merge (3 devices x 20,000 records): syncd exits 0 in bounded time, leaves no temporary file, and the store and its file are usable"
    )
    func terminatedDuringLargeMerge() throws {
        // Given a folder of 3 devices x 20,000 records made by bench/generate.py
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        try sandbox.generate(devices: 3, records: 20_000)

        // When syncd starts on it and gets SIGTERM as soon as it says it is merging (the pass
        // may be anywhere in its course then, or done on a fast machine: either must stop cleanly)
        let daemon = try Daemon("desk", in: sandbox)
        defer { daemon.stop() }
        var tries = 0
        while !daemon.notify.texts.contains(where: { $0.hasPrefix("STATUS=merging") }) && tries < 6_000 {
            usleep(10_000)
            tries += 1
        }
        let termAt = Date()
        daemon.launched.signal(SIGTERM)
        let status = daemon.launched.exitStatus(within: 60)
        let took = Date().timeIntervalSince(termAt)

        // Then it exits 0 (it finishes the merge in flight, then stops)
        #expect(status == 0, "exit \(String(describing: status)) \(took) s after SIGTERM:\n\(daemon.log)")
        #expect(daemon.notify.texts.last == "STOPPING=1", "\(daemon.notify.texts)")
        // And no temporary file is left in the folder
        let names = try FileManager.default.contentsOfDirectory(atPath: sandbox.shared)
        #expect(names.filter { $0.hasPrefix(".") && $0.hasSuffix(".tmp") }.isEmpty, "\(names)")
        // Nor the watcher's wake file in the state directory
        #expect(!FileManager.default.fileExists(atPath: sandbox.state("desk") + "/watcher.wake"))
        // And its own files, if published, are a complete valid snapshot of every record
        if let published = try PublishedSnapshot.read(folder: sandbox.shared, device: "desk") {
            #expect(
                published.problems.isEmpty && published.recordCount == 20_000,
                "\(published.problems.prefix(3)) \(published.recordCount) in \(published.files)")
        }
        // And the store opens, and a merge on the same state succeeds and holds every record
        let merge = try sandbox.syncctl(["merge"] + sandbox.location("desk"), timeout: 180)
        #expect(merge.status == 0, "\(merge)")
        let statusJSON = try sandbox.syncctl(["status", "--json"] + sandbox.location("desk"))
        #expect(statusJSON.status == 0, "\(statusJSON)")
        let listed = try Snapshots.records(
            try sandbox.syncctl(["list", "--deleted", "--json"] + sandbox.location("desk")))
        #expect(listed.count == 20_000)
        let published = try #require(try PublishedSnapshot.read(folder: sandbox.shared, device: "desk"))
        #expect(published.problems.isEmpty && published.recordCount == 20_000)
        // A snapshot of 20,000 records is published in parts.
        #expect(published.parts.count == 16, "\(published.files)")
    }

    @Test(
        "a second syncd on the same state directory is refused with exit 75 and says another is already running; the first keeps working"
    )
    func secondDaemonRefused() throws {
        // Given a running syncd
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let first = try Daemon("desk", in: sandbox)
        defer { first.stop() }
        try first.waitUntilReady()

        // When a second syncd starts on the same state directory
        let second = try Daemon("desk", in: sandbox)
        defer { second.stop() }
        let status = second.launched.exitStatus(within: 30)

        // Then it is refused, naming the first one's PID
        #expect(status == 75, "\(second.log)")
        #expect(second.log.contains("already running"), "\(second.log)")
        #expect(second.log.contains("\(first.pid)"), "the message does not name PID \(first.pid): \(second.log)")
        #expect(!second.notify.texts.contains("READY=1"))
        // And the first still runs and still merges what peers publish
        #expect(first.isRunning && kill(first.pid, 0) == 0)
        try sandbox.publish(
            "laptop.json", Snapshots.file("laptop", records: [(Snapshots.id(1), Snapshots.fields("x"))]))
        let merged = eventually(within: 10) { Snapshots.published(sandbox.read("desk.json"))?.records.count == 1 }
        #expect(merged, "\(first.log)")

        // When the first is killed with SIGKILL, another can start (the kernel released the lock)
        first.kill9()
        let third = try Daemon("desk", in: sandbox)
        defer { third.stop() }
        try third.waitUntilReady()
        #expect(third.stop() == 0, "\(third.log)")
    }

    @Test("a state directory inside the shared folder stops syncd with exit 73 before anything is made there")
    func stateInsideShared() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let inside = sandbox.shared + "/state"
        let daemon = try Daemon("desk", in: sandbox, state: inside)
        defer { daemon.stop() }
        #expect(daemon.launched.exitStatus(within: 30) == 73, "\(daemon.log)")
        #expect(!FileManager.default.fileExists(atPath: inside), "\(daemon.log)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.shared).isEmpty)
    }

    @Test("a state directory that cannot be made (a file in its way) stops syncd with exit 73, naming the path")
    func unusableStateDirectory() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let blocker = sandbox.path("blocker")
        #expect(FileManager.default.createFile(atPath: blocker, contents: Data("not a directory".utf8)))
        let daemon = try Daemon("desk", in: sandbox, state: blocker + "/state")
        defer { daemon.stop() }
        let status = daemon.launched.exitStatus(within: 30)
        #expect(status == 73, "\(daemon.log)")
        #expect(daemon.log.contains(blocker + "/state"), "\(daemon.log)")
    }
}
