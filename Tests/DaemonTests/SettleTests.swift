import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The settle delay applies to files written in place, not to files that arrive complete.
extension DaemonTests {
    /// Whether `desk.json` publishes a record whose text is `text`.
    func published(_ text: String, in sandbox: Sandbox) -> Bool {
        Snapshots.published(sandbox.read("desk.json"))?.records.contains { "\($0)".contains(text) } ?? false
    }

    @Test("a peer's file renamed into the folder is merged at once, even with a settle delay of two minutes")
    func renamedFileSkipsSettle() throws {
        // Given syncd with a settle delay far longer than the test waits
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let daemon = try Daemon("desk", in: sandbox, settleMilliseconds: 120_000)
        defer { daemon.stop() }
        try daemon.waitUntilReady()

        // When a peer publishes its file atomically (written to a temporary name, renamed over)
        let bytes = Snapshots.file("phone", records: [(Snapshots.id(1), Snapshots.fields("renamed in"))])
        try Data(bytes).write(to: URL(fileURLWithPath: sandbox.shared + "/.phone.json.tmp"))
        #expect(rename(sandbox.shared + "/.phone.json.tmp", sandbox.shared + "/phone.json") == 0)

        // Then its record is merged and republished long before the settle delay would have ended
        #expect(eventually(within: 30) { published("renamed in", in: sandbox) }, "\(daemon.log)")
        #expect(daemon.stop() == 0, "\(daemon.log)")
    }

    @Test("a peer's file that arrives by a hard link (no write, no rename: only IN_CREATE) is merged")
    func hardLinkArrival() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let daemon = try Daemon("desk", in: sandbox, settleMilliseconds: 100)
        defer { daemon.stop() }
        try daemon.waitUntilReady()
        let outside = sandbox.path("phone-outside.json")
        let bytes = Snapshots.file("phone", records: [(Snapshots.id(1), Snapshots.fields("linked in"))])
        try Data(bytes).write(to: URL(fileURLWithPath: outside))
        #expect(link(outside, sandbox.shared + "/phone.json") == 0)
        #expect(eventually(within: 30) { published("linked in", in: sandbox) }, "\(daemon.log)")
        #expect(daemon.stop() == 0, "\(daemon.log)")
    }

    @Test("a file written in place without a pause does not hold back another peer's file for ever: the pass runs after ten settle delays (at least 10 s)")
    func endlessWriterDoesNotStarve() throws {
        // Given syncd with a settle delay of 500 ms, and a file the folder's *.json written to every 100 ms
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let daemon = try Daemon("desk", in: sandbox, settleMilliseconds: 500)
        defer { daemon.stop() }
        try daemon.waitUntilReady()
        let descriptor = open(sandbox.shared + "/log.json", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        try #require(descriptor >= 0)
        let writing = Synchronization.Atomic<Bool>(true)
        let writer = Thread {
            while writing.load(ordering: .relaxed) {
                _ = write(descriptor, "x", 1)
                usleep(100_000)
            }
        }
        writer.start()
        defer {
            writing.store(false, ordering: .relaxed)
            usleep(200_000)
            close(descriptor)
        }
        usleep(300_000)

        // When a peer renames its file in, while that writing goes on
        let bytes = Snapshots.file("phone", records: [(Snapshots.id(1), Snapshots.fields("not starved"))])
        try Data(bytes).write(to: URL(fileURLWithPath: sandbox.shared + "/.phone.json.tmp"))
        #expect(rename(sandbox.shared + "/.phone.json.tmp", sandbox.shared + "/phone.json") == 0)

        // Then it is merged while the writer still writes, and the log says what was waited for
        #expect(eventually(within: 90) { published("not starved", in: sandbox) }, "\(daemon.log)")
        let stillWriting = writing.load(ordering: .relaxed)
        #expect(stillWriting)
        #expect(daemon.log.contains("still being written") && daemon.log.contains("log.json"), "\(daemon.log)")
    }

    @Test(
        "a peer's file written in place is not read while its writer is at it, and is merged as soon as the writer closes it"
    )
    func inPlaceWriteWaitsForClose() throws {
        // Given syncd with a settle delay of two minutes
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let daemon = try Daemon("desk", in: sandbox, settleMilliseconds: 120_000)
        defer { daemon.stop() }
        try daemon.waitUntilReady()
        let passes = { daemon.log.components(separatedBy: "merge pass done").count - 1 }
        usleep(300_000)  // its own first publication's events are handled
        let before = passes()

        // When a peer writes half of its file in place and pauses for 1.5 s, the file still open
        let bytes = Snapshots.file("phone", records: [(Snapshots.id(1), Snapshots.fields("written in place"))])
        let descriptor = open(sandbox.shared + "/phone.json", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        try #require(descriptor >= 0)
        var closed = false
        defer { if !closed { close(descriptor) } }
        let half = bytes.count / 2
        #expect(bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, half) } == half)
        usleep(1_500_000)

        // Then no pass reads the half-written file
        #expect(passes() == before, "a pass ran while the file was being written:\n\(daemon.log)")

        // When the writer writes the rest and closes the file
        #expect(bytes.withUnsafeBytes { write(descriptor, $0.baseAddress! + half, bytes.count - half) } == bytes.count - half)
        close(descriptor)
        closed = true

        // Then the record is merged without waiting for the settle delay, and the file was never
        // reported as unreadable
        #expect(eventually(within: 30) { published("written in place", in: sandbox) }, "\(daemon.log)")
        #expect(!daemon.log.contains("source not merged"), "\(daemon.log)")
        #expect(daemon.stop() == 0, "\(daemon.log)")
    }

    @Test(
        "a file left open and unfinished is read once its writer has been quiet for the settle delay: reported, nothing lost, merged when finished"
    )
    func stalledWriterIsReadAfterSettle() throws {
        // Given syncd with a settle delay of 1 s that has merged a peer's first version
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let daemon = try Daemon("desk", in: sandbox, settleMilliseconds: 1_000)
        defer { daemon.stop() }
        try daemon.waitUntilReady()
        let first = Snapshots.file("phone", records: [(Snapshots.id(1), Snapshots.fields("first version"))])
        try Data(first).write(to: URL(fileURLWithPath: sandbox.shared + "/.phone.json.tmp"))
        rename(sandbox.shared + "/.phone.json.tmp", sandbox.shared + "/phone.json")
        try #require(eventually(within: 30) { published("first version", in: sandbox) }, "\(daemon.log)")

        // When its writer rewrites it in place, stops half way and keeps it open
        let second = Snapshots.file(
            "phone", generation: 2, records: [(Snapshots.id(1), Snapshots.fields("second version"))])
        let descriptor = open(sandbox.shared + "/phone.json", O_WRONLY | O_TRUNC)
        try #require(descriptor >= 0)
        var closed = false
        defer { if !closed { close(descriptor) } }
        let half = second.count / 2
        #expect(second.withUnsafeBytes { write(descriptor, $0.baseAddress, half) } == half)

        // Then after the settle delay a pass reads it, reports it and keeps the first version
        #expect(eventually(within: 30) { daemon.log.contains("source not merged") }, "\(daemon.log)")
        #expect(published("first version", in: sandbox), "\(daemon.log)")

        // And when the writer finishes, the second version is merged
        #expect(
            second.withUnsafeBytes { write(descriptor, $0.baseAddress! + half, second.count - half) } == second.count - half)
        close(descriptor)
        closed = true
        #expect(eventually(within: 30) { published("second version", in: sandbox) }, "\(daemon.log)")
        #expect(daemon.stop() == 0, "\(daemon.log)")
    }

    @Test("SIGTERM while a peer's file is being written in place stops syncd at once, not after the settle delay")
    func terminatedWhileSettling() throws {
        // Given syncd with a settle delay of two minutes
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let daemon = try Daemon("desk", in: sandbox, settleMilliseconds: 120_000)
        defer { daemon.stop() }
        try daemon.waitUntilReady()

        // And a peer that has written half of its file in place and keeps it open
        let bytes = Snapshots.file("phone", records: [(Snapshots.id(1), Snapshots.fields("never finished"))])
        let descriptor = open(sandbox.shared + "/phone.json", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        #expect(bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, bytes.count / 2) } == bytes.count / 2)
        usleep(500_000)  // the daemon is waiting for the writer

        // When it gets SIGTERM
        let termAt = Date()
        daemon.launched.signal(SIGTERM)
        let status = daemon.launched.exitStatus(within: 60)
        let took = Date().timeIntervalSince(termAt)

        // Then it exits 0 before the settle delay could have passed (exitStatus waits 60 s of
        // the delay's 120), without reading the half-written file
        #expect(status == 0, "exit \(String(describing: status)) \(took) s after SIGTERM:\n\(daemon.log)")
        #expect(!daemon.log.contains("source not merged"), "\(daemon.log)")
        #expect(daemon.notify.texts.last == "STOPPING=1", "\(daemon.notify.texts)")
    }
}
