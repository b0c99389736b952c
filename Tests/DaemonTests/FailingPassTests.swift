import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension DaemonTests {
    @Test(
        "passes that keep failing are retried less and less often, not at every event; once the cause is gone, syncd publishes"
    )
    func failingPassesBackOff() throws {
        // Given a directory where syncd's next temporary file goes (a dot name, which no watcher
        // reports): every pass merges, then fails to publish
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let daemon = try Daemon("desk", in: sandbox)
        defer { daemon.stop() }
        try daemon.waitUntilReady()
        let obstacle = sandbox.shared + "/.desk.json.\(daemon.pid).whole.tmp"
        try FileManager.default.createDirectory(atPath: obstacle, withIntermediateDirectories: false)
        let failures = { daemon.log.components(separatedBy: "merge pass failed").count - 1 }

        // When a peer rewrites its file every 100 ms for 4 s
        for generation in 1...40 {
            let bytes = Snapshots.file(
                "phone", generation: generation,
                records: (1...generation).map { (Snapshots.id($0), Snapshots.fields("item \($0)")) })
            try Data(bytes).write(to: URL(fileURLWithPath: sandbox.shared + "/phone.json.tmp"))
            rename(sandbox.shared + "/phone.json.tmp", sandbox.shared + "/phone.json")
            usleep(100_000)
        }

        // Then syncd did not fail once per change: after two failures in a row it waited 1, 2 s …
        #expect(failures() >= 2, "\(daemon.log)")
        #expect(failures() <= 6, "\(failures()) failed passes in 4 s:\n\(daemon.log)")
        #expect(daemon.log.contains("waiting before the next pass"), "\(daemon.log)")
        // And once the directory is gone, a later pass publishes every record of the peer's last file
        try FileManager.default.removeItem(atPath: obstacle)
        let published = eventually(within: 40, every: 0.2) {
            guard let data = FileManager.default.contents(atPath: sandbox.shared + "/desk.json") else { return false }
            return String(decoding: data, as: UTF8.self).contains("item 40")
        }
        #expect(published, "\(daemon.log)")
        #expect(daemon.stop() == 0, "\(daemon.log)")
    }

    @Test("a pass that failed to publish is tried again without another change in the folder, and publishes once the cause is gone")
    func failedPassRetried() throws {
        // Given syncd running, and a directory where its next temporary file goes (a dot name, which
        // no watcher reports)
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let daemon = try Daemon("desk", in: sandbox)
        defer { daemon.stop() }
        try daemon.waitUntilReady()
        let obstacle = sandbox.shared + "/.desk.json.\(daemon.pid).whole.tmp"
        try FileManager.default.createDirectory(atPath: obstacle, withIntermediateDirectories: false)

        // When a peer's file arrives: its pass merges it, and fails to publish
        try sandbox.publish("phone.json", Snapshots.file("phone", records: [(Snapshots.id(1), Snapshots.fields("from phone"))]))
        #expect(eventually(within: 30) { daemon.log.contains("merge pass failed") }, "\(daemon.log)")
        // and what it merged is logged as any pass is, said to be unpublished
        let unpublished = daemon.log.split(separator: "\n").first { $0.contains("merge pass saved, not published") }
        #expect(unpublished?.contains("merge.added=1") == true, "\(daemon.log)")
        #expect(unpublished?.contains("publish.failed=true") == true, "\(daemon.log)")

        // Then, once the obstacle is gone and nothing else happens, syncd publishes the record
        try FileManager.default.removeItem(atPath: obstacle)
        let published = eventually(within: 60, every: 0.2) { Snapshots.published(sandbox.read("desk.json"))?.records.count == 1 }
        #expect(published, "\(daemon.log)")
        #expect(daemon.stop() == 0, "\(daemon.log)")
    }
}
