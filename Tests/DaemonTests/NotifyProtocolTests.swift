import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension DaemonTests {
    @Test(
        "syncd speaks the notify protocol: READY=1 after the first pass, STATUS= lines, WATCHDOG=1 at half WATCHDOG_USEC, STOPPING=1 after SIGTERM, in that order"
    )
    func notifyProtocol() throws {
        // Given a notify socket and WATCHDOG_USEC=400000 (a ping every 200 ms)
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let daemon = try Daemon("desk", in: sandbox, watchdogMicroseconds: 400_000)
        defer { daemon.stop() }

        // When syncd has started and sent its first pings after READY=1 (on a busy machine the
        // 0.6 s they need can stretch: wait for them rather than for a fixed time)
        try daemon.waitUntilReady()
        let readyAt = Date()
        let pingsAfterReady = {
            daemon.notify.messages.drop { $0.text != "READY=1" }.dropFirst()
                .filter { $0.text == "WATCHDOG=1" }.map(\.at)
        }
        let pinged = eventually(within: 30) { pingsAfterReady().count >= 4 }
        // Then it pings the watchdog after READY=1, at about half WATCHDOG_USEC (200 ms): never
        // much faster, and not slower than a busy machine can explain
        #expect(pinged, "fewer than 4 pings in 30 s after READY=1: \(daemon.notify.texts)")
        let gaps = Self.gaps(pingsAfterReady())
        #expect(Self.median(gaps) >= 0.1 && Self.median(gaps) <= 1.0, "gaps between pings: \(gaps)")
        // And it reports its status
        let statuses = daemon.notify.texts.filter { $0.hasPrefix("STATUS=") }
        #expect(statuses.contains { $0.contains("records") && $0.contains("no conflicts") }, "\(daemon.notify.texts)")

        // When it gets SIGTERM
        let termAt = Date()
        daemon.launched.signal(SIGTERM)
        let status = daemon.launched.exitStatus(within: 10)
        // Then it exits 0, and STOPPING=1 came after SIGTERM, after READY=1 and the pings
        #expect(status == 0, "\(daemon.log)")
        #expect(daemon.notify.wait(for: 1) { $0 == "STOPPING=1" }, "\(daemon.notify.texts)")
        let messages = daemon.notify.messages
        let texts = messages.map(\.text)
        let ready = texts.firstIndex(of: "READY=1")
        let firstPingAfterReady = ready.flatMap { start in texts[start...].firstIndex(of: "WATCHDOG=1") }
        let stopping = texts.firstIndex(of: "STOPPING=1")
        #expect(ready != nil && firstPingAfterReady != nil && stopping != nil, "\(texts)")
        if let ready, let firstPingAfterReady, let stopping {
            #expect(ready < firstPingAfterReady && firstPingAfterReady < stopping, "\(texts)")
            #expect(messages[stopping].at >= termAt && messages[ready].at <= readyAt, "\(messages)")
            #expect(texts.filter { $0 == "READY=1" }.count == 1, "\(texts)")
            #expect(!texts[stopping...].contains("READY=1"), "\(texts)")
        }
    }

    @Test(
        "syncd settles after its first merge, of an empty folder or of records: once its own writes are handled, no pass runs while nothing changes"
    )
    func settlesAfterFirstMerge() throws {
        for count in [0, 2_000] {
            // Given a folder with no records, or a peer's 2,000 (a first merge in rollback-journal mode)
            let sandbox = try Sandbox()
            defer { sandbox.remove() }
            if count > 0 {
                let bytes = Snapshots.file("phone", records: (1...count).map { (Snapshots.id($0), Snapshots.fields("item \($0)")) })
                try Data(bytes).write(to: URL(fileURLWithPath: sandbox.shared + "/phone.json"))
            }
            let daemon = try Daemon("desk", in: sandbox)
            defer { daemon.stop() }
            try daemon.waitUntilReady()
            // Its own first writes (its file, its store) make events it handles: wait until it has
            // been quiet for a second (a fixed sleep is too short on a busy machine; a daemon that
            // keeps triggering itself is never quiet, and fails here)
            let quiet = Self.waitUntilQuiet(daemon, for: 1.0, within: 30)
            #expect(quiet, "\(count) records: syncd never stopped running passes: \(daemon.notify.texts)")

            // When nothing changes for 1.5 s
            let passesBefore = daemon.notify.texts.filter { $0.hasPrefix("STATUS=") }.count
            usleep(1_500_000)

            // Then it runs no pass (each pass ends with a STATUS= line)
            let texts = daemon.notify.texts
            #expect(
                texts.filter { $0.hasPrefix("STATUS=") }.count == passesBefore,
                "\(count) records: passes while nothing changed: \(texts)")
            #expect(texts.contains { $0.contains("\(count) records") }, "\(texts)")
            // (And the first merge of records did run in rollback-journal mode: the case this is about.)
            #expect(daemon.log.contains("pass.firstMergeJournaled=true") == (count > 0), "\(daemon.log)")
        }
    }

    @Test("with WATCHDOG_PID naming another process, syncd does not ping the watchdog")
    func watchdogForAnotherProcess() throws {
        // Given WATCHDOG_USEC set for a PID that is not syncd's (this test process)
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let daemon = try Daemon(
            "desk", in: sandbox, environment: ["WATCHDOG_PID": String(getpid())], watchdogMicroseconds: 200_000)
        defer { daemon.stop() }
        // When it runs for a second after READY=1
        try daemon.waitUntilReady()
        usleep(1_000_000)
        // Then no WATCHDOG=1 arrives, and it still stops cleanly
        #expect(!daemon.notify.texts.contains("WATCHDOG=1"), "\(daemon.notify.texts)")
        #expect(daemon.stop() == 0, "\(daemon.log)")
    }

    @Test(
        "the watchdog is pinged all through a long first merge (3 devices x 20,000 records), at the interval WATCHDOG_USEC asks for, so systemd would not kill syncd in it"
    )
    func watchdogDuringLongMerge() throws {
        // Given a large folder and WATCHDOG_USEC=400000: systemd wants a ping at least every 400 ms,
        // and syncd pings every 200 ms
        let interval = 0.2
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        try sandbox.generate(devices: 3, records: 20_000)

        // When syncd merges it for the first time
        let daemon = try Daemon("desk", in: sandbox, watchdogMicroseconds: 400_000)
        defer { daemon.stop() }
        try daemon.waitUntilReady(timeout: 120)
        let messages = daemon.notify.messages
        let start = try #require(messages.first { $0.text.hasPrefix("STATUS=merging the shared folder") }?.at)
        let end = try #require(messages.first { $0.text == "READY=1" }?.at)
        let merge = end.timeIntervalSince(start)
        let pings = messages.filter { $0.text == "WATCHDOG=1" && $0.at >= start && $0.at <= end }.map(\.at)

        // Then pings keep coming while it merges. A merge that held up the pinger would let one or
        // two through; a busy machine delays some, so the margins are wide: a quarter of the pings
        // the interval asks for, no silence longer than half the merge, and a median gap within
        // half to four times the interval.
        #expect(!pings.isEmpty, "no ping during a \(merge) s merge: \(messages)")
        if merge >= 8 * interval {
            #expect(Double(pings.count) >= merge / interval / 4, "\(pings.count) pings during a \(merge) s merge")
            let silences = Self.gaps([start] + pings + [end])
            #expect((silences.max() ?? 0) <= merge / 2, "silences during a \(merge) s merge: \(silences)")
            let median = Self.median(Self.gaps(pings))
            #expect(
                median >= interval / 2 && median <= 4 * interval, "median gap \(median) s; gaps \(Self.gaps(pings))")
        }
        #expect(daemon.stop() == 0, "\(daemon.log)")
    }

    @Test("a notify socket nobody reads does not stop syncd from merging, nor from stopping on SIGTERM")
    func unreadNotifySocket() throws {
        // Given a notify socket whose queue fills up (net.unix.max_dgram_qlen datagrams), never read
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let daemon = try Daemon("desk", in: sandbox, readingNotifications: false)
        defer { daemon.stop(grace: 2) }
        let published = eventually(within: 30) { sandbox.read("desk.json") != nil }
        try #require(published, "syncd never published its file:\n\(daemon.log)")

        // When peers publish 20 files one after the other (each merge pass sends STATUS=)
        var merged = 0
        for n in 1...20 {
            try sandbox.publish(
                "peer-\(n).json", Snapshots.file("peer-\(n)", records: [(Snapshots.id(n), Snapshots.fields("n\(n)"))]))
            // (30 s is far above a merge of one record: a stalled syncd never gets there)
            let seen = eventually(within: 30) {
                Snapshots.published(sandbox.read("desk.json"))?.records.count == n
            }
            guard seen else { break }
            merged = n
        }
        // Then every file is merged and published
        #expect(merged == 20, "only \(merged) of 20 peer files were merged before syncd stalled:\n\(daemon.log)")
        // And SIGTERM still stops it (a send blocked on the full queue would hold it for good)
        daemon.launched.signal(SIGTERM)
        let status = daemon.launched.exitStatus(within: 30)
        #expect(status == 0, "syncd (PID \(daemon.pid)) did not exit within 30 s of SIGTERM:\n\(daemon.log)")
    }
}

extension DaemonTests {
    /// The time between each instant and the next, in seconds.
    static func gaps(_ instants: [Date]) -> [Double] {
        zip(instants, instants.dropFirst()).map { $1.timeIntervalSince($0) }
    }

    /// The middle value (0 for none).
    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
    }

    /// Waits until `daemon` has sent no `STATUS=` line (each pass ends with one) for `quiet` seconds;
    /// false when that does not happen within `timeout` seconds.
    static func waitUntilQuiet(_ daemon: Daemon, for quiet: Double, within timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let passes = daemon.notify.texts.filter { $0.hasPrefix("STATUS=") }.count
            usleep(useconds_t(quiet * 1_000_000))
            if daemon.notify.texts.filter({ $0.hasPrefix("STATUS=") }).count == passes { return true }
        }
        return false
    }
}
