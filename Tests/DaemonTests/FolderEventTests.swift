import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Sets `/proc/sys/fs/inotify/max_queued_events` (root only) and gives back the old value.
private func setMaxQueuedEvents(_ value: String) throws -> String {
    let path = "/proc/sys/fs/inotify/max_queued_events"
    let old = try String(contentsOfFile: path, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
    do {
        try Data((value + "\n").utf8).write(to: URL(fileURLWithPath: path))
    } catch {
        throw Failure("cannot write \(path) (the test needs root): \(error)")
    }
    return old
}

extension DaemonTests {
    @Test(
        "an inotify queue overflow while syncd cannot read makes it read every file again: all 300 peers' records reach its store and its file"
    )
    func overflowRereadsEverything() throws {
        // Given syncd started while fs.inotify.max_queued_events is 64 (it applies to new inotify instances)
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let original = try setMaxQueuedEvents("64")
        var restored = false
        defer { if !restored { _ = try? setMaxQueuedEvents(original) } }
        let daemon = try Daemon("desk", in: sandbox)
        defer { daemon.stop() }
        try daemon.waitUntilReady()
        _ = try setMaxQueuedEvents(original)
        restored = true
        usleep(300_000)  // its own first publication's events are read

        // When it is stopped (SIGSTOP) while 200 events of names it ignores fill its queue, and then
        // 300 peers publish (their events are all lost: only the overflow is reported)
        daemon.launched.signal(SIGSTOP)
        var resumed = false
        defer { if !resumed { daemon.launched.signal(SIGCONT) } }
        for n in 1...100 {
            try Data("not a snapshot".utf8).write(to: URL(fileURLWithPath: sandbox.shared + "/note-\(n).txt"))
        }
        for n in 1...300 {
            let bytes = Snapshots.file("peer-\(n)", records: [(Snapshots.id(n), Snapshots.fields("from peer \(n)"))])
            try Data(bytes).write(to: URL(fileURLWithPath: sandbox.shared + "/peer-\(n).json"))
        }
        daemon.launched.signal(SIGCONT)
        resumed = true

        // Then it reports the overflow and every record reaches its file and its store
        let published = eventually(within: 30, every: 0.2) {
            Snapshots.published(sandbox.read("desk.json"))?.records.count == 300
        }
        #expect(
            published,
            "desk.json holds \(Snapshots.published(sandbox.read("desk.json"))?.records.count ?? -1) records\n\(daemon.log)"
        )
        #expect(
            daemon.log.contains("overflowed"),
            "no overflow was reported (did the queue really overflow?):\n\(daemon.log)")
        let stored = try Snapshots.records(try sandbox.syncctl(["list", "--json"] + sandbox.location("desk")))
        #expect(Set(stored.map(Snapshots.recordID)) == Set((1...300).map(Snapshots.id)))
        #expect(daemon.stop() == 0, "\(daemon.log)")
    }

    @Test(
        "the shared folder deleted and recreated while syncd runs is watched again: a peer's file written there is merged and syncd republishes its own file"
    )
    func folderRecreated() throws {
        // Given a running syncd that has published its file
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let daemon = try Daemon("desk", in: sandbox)
        defer { daemon.stop() }
        try daemon.waitUntilReady()
        try #require(sandbox.read("desk.json") != nil)

        // When the shared folder is deleted, and syncd has noticed
        try FileManager.default.removeItem(atPath: sandbox.shared)
        let noticed = daemon.notify.wait(for: 10) { $0.hasPrefix("STATUS=") && $0.contains("is missing") }
        #expect(noticed, "no STATUS= saying the folder is missing: \(daemon.notify.texts)\n\(daemon.log)")
        // And it is recreated with a peer's file in it
        try FileManager.default.createDirectory(atPath: sandbox.shared, withIntermediateDirectories: false)
        try sandbox.publish(
            "laptop.json", Snapshots.file("laptop", records: [(Snapshots.id(1), Snapshots.fields("first"))]))

        // Then syncd merges it and republishes its own file in the new folder
        let republished = eventually(within: 15) {
            Snapshots.published(sandbox.read("desk.json"))?.records.map(Snapshots.recordID) == [Snapshots.id(1)]
        }
        #expect(
            republished,
            "desk.json: \(sandbox.read("desk.json").map { String(decoding: $0, as: UTF8.self) } ?? "missing")\n\(daemon.log)"
        )

        // When, a moment later, the peer publishes again into the recreated folder
        usleep(1_500_000)
        try sandbox.publish(
            "laptop.json",
            Snapshots.file(
                "laptop", generation: 2,
                records: [(Snapshots.id(1), Snapshots.fields("first")), (Snapshots.id(2), Snapshots.fields("second"))]))
        // Then the new watch sees it (the next full rescan is an hour away)
        let seen = eventually(within: 10) {
            Snapshots.published(sandbox.read("desk.json"))?.records.count == 2
        }
        #expect(seen, "the second file in the recreated folder was not merged:\n\(daemon.log)")
        let stored = try Snapshots.records(try sandbox.syncctl(["list", "--json"] + sandbox.location("desk")))
        #expect(stored.map(Snapshots.recordID) == [Snapshots.id(1), Snapshots.id(2)])
        #expect(daemon.stop() == 0, "\(daemon.log)")
    }
}
