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

        // When syncd has started and run for a while
        try daemon.waitUntilReady()
        let readyAt = Date()
        usleep(1_200_000)
        // Then it pings the watchdog after READY=1, about every 200 ms
        let afterReady = daemon.notify.messages.drop { $0.text != "READY=1" }.dropFirst()
        let pings = afterReady.filter { $0.text == "WATCHDOG=1" }
        #expect(pings.count >= 3, "pings in 1.2 s after READY=1: \(daemon.notify.texts)")
        #expect(pings.count <= 12, "too many pings: \(daemon.notify.texts)")
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
            usleep(1_000_000)  // the events of its own first writes (its file, its store) are handled

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
        "the watchdog is pinged all through a long first merge (3 devices x 20,000 records), so systemd would not kill syncd in it"
    )
    func watchdogDuringLongMerge() throws {
        // Given a large folder and WATCHDOG_USEC=1000000 (systemd would kill syncd after 1 s without a ping)
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        try sandbox.generate(devices: 3, records: 20_000)
        // When syncd merges it for the first time
        let daemon = try Daemon("desk", in: sandbox, watchdogMicroseconds: 1_000_000)
        defer { daemon.stop() }
        let started = Date()
        try daemon.waitUntilReady(timeout: 120)
        let took = Date().timeIntervalSince(started)
        // Then the pings, every 500 ms, never stop for as long as the watchdog allows
        let pings = daemon.notify.messages.filter { $0.text == "WATCHDOG=1" }.map(\.at)
        let gaps = zip(pings, pings.dropFirst()).map { $1.timeIntervalSince($0) }
        #expect(took < 1.5 || pings.count >= 2, "\(pings.count) pings in a \(took) s merge")
        #expect(
            (gaps.max() ?? 0) < 1.0, "the longest gap between pings was \(gaps.max() ?? 0) s during a \(took) s merge")
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
            let seen = eventually(within: 5) {
                Snapshots.published(sandbox.read("desk.json"))?.records.count == n
            }
            guard seen else { break }
            merged = n
        }
        // Then every file is merged and published
        #expect(merged == 20, "only \(merged) of 20 peer files were merged before syncd stalled:\n\(daemon.log)")
        // And SIGTERM still stops it promptly
        daemon.launched.signal(SIGTERM)
        let status = daemon.launched.exitStatus(within: 5)
        #expect(status == 0, "syncd (PID \(daemon.pid)) did not exit within 5 s of SIGTERM:\n\(daemon.log)")
    }
}
