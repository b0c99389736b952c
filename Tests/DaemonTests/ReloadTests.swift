import Foundation
import SnapshotFormat
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension DaemonTests {
    @Test("SIGHUP re-reads the configuration: RELOADING=1 then READY=1, and a shorter rescan interval applies at once")
    func reloadOnHangup() throws {
        // Given syncd started with a configuration file saying: rescan every hour
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let config = sandbox.path("config.json")
        try Data(#"{"rescanIntervalSeconds": 3600}"#.utf8).write(to: URL(fileURLWithPath: config))
        let daemon = try Daemon("desk", in: sandbox, extra: ["--config", config])
        defer { daemon.stop() }
        try daemon.waitUntilReady()

        // When the file says every second, and syncd gets SIGHUP
        try Data(#"{"rescanIntervalSeconds": 1}"#.utf8).write(to: URL(fileURLWithPath: config))
        daemon.launched.signal(SIGHUP)

        // Then it says it reloads, then that it is ready again, and logs the new timings
        let reloaded = daemon.notify.wait(for: 10) { _ in
            let texts = daemon.notify.texts
            guard let reloading = texts.firstIndex(of: "RELOADING=1") else { return false }
            return texts[reloading...].contains("READY=1")
        }
        #expect(reloaded, "\(daemon.notify.texts)")
        #expect(eventually(within: 5) { daemon.log.contains("configuration re-read") }, "\(daemon.log)")
        // And, with nothing happening in the folder, it rereads everything about every second: two
        // more passes come (with the hour it had before, none would); a busy machine may stretch
        // the seconds, so the bound is wide
        usleep(500_000)
        let passes = { daemon.log.components(separatedBy: "merge pass done").count - 1 }
        let before = passes()
        let rescanned = eventually(within: 30, every: 0.1) { passes() - before >= 2 }
        #expect(rescanned, "\(passes() - before) passes in 30 s after the rescan interval became 1 s:\n\(daemon.log)")
        #expect(daemon.stop() == 0, "\(daemon.log)")
    }

    @Test("the log level of the configuration file applies from the start, not only after SIGHUP; --log-level wins over it")
    func logLevelFromConfiguration() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let config = sandbox.path("config.json")
        try Data(#"{"logLevel": "info"}"#.utf8).write(to: URL(fileURLWithPath: config))
        let daemon = try Daemon("desk", in: sandbox, extra: ["--config", config], logLevel: nil)
        defer { daemon.stop() }
        try daemon.waitUntilReady()
        // "merge pass done" is logged at info: the default level (notice) would leave it out
        #expect(eventually(within: 10) { daemon.log.contains("merge pass done") }, "\(daemon.log)")
        #expect(daemon.stop() == 0, "\(daemon.log)")

        let quiet = try Daemon("desk", in: sandbox, extra: ["--config", config], logLevel: "warning")
        defer { quiet.stop() }
        try quiet.waitUntilReady()
        usleep(300_000)
        #expect(quiet.stop() == 0, "\(quiet.log)")
        #expect(!quiet.log.contains("merge pass done"), "\(quiet.log)")
    }

    @Test("SIGHUP with a changed setting that applies only at start (the largest file, the part sizes) says so and keeps what syncd started with")
    func reloadSaysWhatWaitsForARestart() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let config = sandbox.path("config.json")
        try Data(#"{"rescanIntervalSeconds": 3600}"#.utf8).write(to: URL(fileURLWithPath: config))
        let daemon = try Daemon("desk", in: sandbox, extra: ["--config", config])
        defer { daemon.stop() }
        try daemon.waitUntilReady()
        // When the file changes a timing and two settings a reload does not apply, and syncd gets SIGHUP
        try Data(#"{"rescanIntervalSeconds": 60, "maxFileSize": 5000000, "partSplitKilobytes": 4096}"#.utf8)
            .write(to: URL(fileURLWithPath: config))
        daemon.launched.signal(SIGHUP)
        // Then it says which wait for a restart, and re-reads the rest
        #expect(eventually(within: 10) { daemon.log.contains("configuration re-read") }, "\(daemon.log)")
        #expect(
            daemon.log.contains("the configuration changes maxFileSize, the part sizes")
                && daemon.log.contains("takes only when it starts"), "\(daemon.log)")
        let warning = daemon.log.split(separator: "\n").first { $0.contains("the configuration changes") } ?? ""
        #expect(!warning.contains("shared") && !warning.contains("device") && !warning.contains("state,"), "\(warning)")
        #expect(daemon.stop() == 0, "\(daemon.log)")
    }

    @Test("an interval of 0 from the configuration stops syncd at start with exit 78, naming the setting, and is refused on SIGHUP, the running settings kept")
    func zeroIntervalRefused() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let config = sandbox.path("config.json")
        try Data(#"{"rescanIntervalSeconds": 0}"#.utf8).write(to: URL(fileURLWithPath: config))
        let refused = try Daemon("desk", in: sandbox, extra: ["--config", config])
        defer { refused.stop() }
        #expect(refused.launched.exitStatus(within: 30) == 78, "\(refused.log)")
        #expect(refused.log.contains("rescanIntervalSeconds is 0"), "\(refused.log)")
        // (unless syncd's own option says otherwise: it wins over the file, as syncctl's checks know)
        let overridden = try Daemon("desk", in: sandbox, extra: ["--config", config, "--rescan-interval", "60"])
        defer { overridden.stop() }
        try overridden.waitUntilReady()
        #expect(overridden.stop() == 0, "\(overridden.log)")
        // And so is an interval whose deadline would overflow the clock (it trapped)
        let huge = try Daemon("desk", in: sandbox, environment: ["SYNCD_RESCAN_INTERVAL_SECONDS": "9223372036854775807"])
        defer { huge.stop() }
        #expect(huge.launched.exitStatus(within: 30) == 78, "\(huge.log)")
        #expect(huge.log.contains("rescanIntervalSeconds"), "\(huge.log)")

        // Given syncd running with an hour, when the file says 0 and syncd gets SIGHUP
        try Data(#"{"rescanIntervalSeconds": 3600}"#.utf8).write(to: URL(fileURLWithPath: config))
        let daemon = try Daemon("desk", in: sandbox, extra: ["--config", config])
        defer { daemon.stop() }
        try daemon.waitUntilReady()
        try Data(#"{"pollIntervalSeconds": 0, "alwaysPoll": true}"#.utf8).write(to: URL(fileURLWithPath: config))
        daemon.launched.signal(SIGHUP)

        // Then it says why, keeps running with what it had, and does not spin
        #expect(eventually(within: 10) { daemon.log.contains("pollIntervalSeconds is 0") }, "\(daemon.log)")
        usleep(1_000_000)
        let passes = daemon.log.components(separatedBy: "merge pass done").count - 1
        #expect(passes < 5, "\(passes) passes:\n\(daemon.log)")
        #expect(daemon.stop() == 0, "\(daemon.log)")
    }
}

extension DaemonTests {
    @Test("schema files: a relative path in the configuration file is beside it and may be a link; syncd logs the versions that do not fit, and SIGHUP re-reads the files, after which they merge")
    func schemasReloadOnHangup() throws {
        // Given a configuration file naming "note.schema.json", a link beside it to the schema itself
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let directory = sandbox.path("etc")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let schema = sandbox.path("note-v1.json")
        func declare(text type: String) throws {
            try Data(
                #"{"format": 1, "types": [{"type": "Note", "versions": [{"schemaVersion": 1, "fields": {"text": "\#(type)"}}]}]}"#
                    .utf8
            ).write(to: URL(fileURLWithPath: schema))
        }
        try declare(text: "string")
        try FileManager.default.createSymbolicLink(atPath: directory + "/note.schema.json", withDestinationPath: schema)
        let config = directory + "/config.json"
        try Data(#"{"schemas": ["note.schema.json"]}"#.utf8).write(to: URL(fileURLWithPath: config))
        // And a peer's Note whose text is a number
        try sandbox.publish(
            "phone.json",
            Snapshots.file("phone", records: [(Snapshots.id(1), JSONObject([("text", .number(42))]))]))

        // When syncd runs with it (from another working directory)
        let daemon = try Daemon("desk", in: sandbox, extra: ["--config", config])
        defer { daemon.stop() }
        try daemon.waitUntilReady()

        // Then it logs the version that does not fit, and does not merge it
        #expect(
            eventually(within: 10) { daemon.log.contains("versions do not fit their schema") }, "\(daemon.log)")
        #expect(daemon.log.contains(Snapshots.id(1)), "\(daemon.log)")
        #expect(try Snapshots.records(try sandbox.syncctl(["list", "--json"] + sandbox.location("desk"))).isEmpty)

        // And once the schema says a number, SIGHUP makes syncd read it, and the version merges
        try declare(text: "number")
        daemon.launched.signal(SIGHUP)
        let merged = eventually(within: 30, every: 0.1) {
            (Snapshots.published(sandbox.read("desk.json"))?.records.count ?? 0) == 1
        }
        #expect(merged, "\(daemon.log)")
        #expect(daemon.stop() == 0, "\(daemon.log)")
    }
}
