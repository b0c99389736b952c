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
    @Test("a *.json whose name is not valid UTF-8 is named in one warning, not at every pass, and counted in the metrics")
    func nameNotUTF8WarnedOnce() throws {
        // Given syncd running, and a copy of a peer's file under a Latin-1 name
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let daemon = try Daemon("desk", in: sandbox)
        defer { daemon.stop() }
        try daemon.waitUntilReady()
        let bytes = Snapshots.file("phone", records: [(Snapshots.id(1), Snapshots.fields("from phone"))])
        let path = Array(sandbox.shared.utf8) + Array("/phone (caf".utf8) + [0xE9] + Array(").json".utf8) + [0]
        let descriptor = path.withUnsafeBufferPointer { $0.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_WRONLY | O_CREAT, 0o644) } }
        try #require(descriptor >= 0)
        #expect(bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) } == bytes.count)
        close(descriptor)

        // When passes run (its arrival, then another file's)
        let warnings = { daemon.log.components(separatedBy: "not read: its name is not valid UTF-8").count - 1 }
        #expect(eventually(within: 30) { warnings() == 1 }, "\(daemon.log)")
        try sandbox.publish("tablet.json", Snapshots.file("tablet", records: [(Snapshots.id(2), Snapshots.fields("from tablet"))]))
        #expect(eventually(within: 30) { Snapshots.published(sandbox.read("desk.json"))?.records.count == 1 }, "\(daemon.log)")

        // Then it was named once, with its bad byte shown, and the metrics count it
        #expect(warnings() == 1, "\(daemon.log)")
        #expect(daemon.log.contains(#"phone (caf\xE9).json"#), "\(daemon.log)")
        let metrics = (try? String(contentsOfFile: sandbox.state("desk") + "/metrics.prom", encoding: .utf8)) ?? ""
        #expect(metrics.contains(#"snapshotsync_files_rejected{reason="name_not_utf8"} 1"#), "\(metrics)")
        #expect(daemon.stop() == 0, "\(daemon.log)")
    }

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
        "the shared folder moved away and back while syncd runs: one alarm that it is gone, one note that it is back (the move back is no second alarm), and it is watched again"
    )
    func folderMovedAwayAndBack() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let daemon = try Daemon("desk", in: sandbox)
        defer { daemon.stop() }
        try daemon.waitUntilReady()
        // When the folder is moved away, and back once syncd said it is gone
        #expect(rename(sandbox.shared, sandbox.path("away")) == 0)
        #expect(eventually(within: 30) { daemon.log.contains("the shared folder is gone") }, "\(daemon.log)")
        #expect(rename(sandbox.path("away"), sandbox.shared) == 0)
        #expect(eventually(within: 30) { daemon.log.contains("the shared folder is back") }, "\(daemon.log)")
        // Then a peer's file arriving after is merged (the folder is watched again)
        let bytes = Snapshots.file("laptop", records: [(Snapshots.id(1), Snapshots.fields("after the move back"))])
        try Data(bytes).write(to: URL(fileURLWithPath: sandbox.path("laptop.json.tmp")))
        #expect(rename(sandbox.path("laptop.json.tmp"), sandbox.shared + "/laptop.json") == 0)
        let merged = eventually(within: 60) {
            Snapshots.published(sandbox.read("desk.json"))?.records.map(Snapshots.recordID) == [Snapshots.id(1)]
        }
        #expect(merged, "\(daemon.log)")
        // And the log raised the alarm once
        #expect(daemon.log.components(separatedBy: "the shared folder is gone").count == 2, "\(daemon.log)")
        #expect(daemon.log.components(separatedBy: "the shared folder is back").count == 2, "\(daemon.log)")
        #expect(daemon.stop() == 0, "\(daemon.log)")
    }

    @Test(
        "the shared folder's symbolic link re-pointed while syncd runs (no inotify event) is followed: the new directory is watched and read"
    )
    func folderLinkRepointed() throws {
        // Given the shared folder a link to directory A, and syncd running on it
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let (first, second) = (sandbox.path("A"), sandbox.path("B"))
        try FileManager.default.createDirectory(atPath: first, withIntermediateDirectories: false)
        try FileManager.default.createDirectory(atPath: second, withIntermediateDirectories: false)
        try FileManager.default.removeItem(atPath: sandbox.shared)
        try FileManager.default.createSymbolicLink(atPath: sandbox.shared, withDestinationPath: first)
        let daemon = try Daemon("desk", in: sandbox)
        defer { daemon.stop() }
        try daemon.waitUntilReady()
        #expect(FileManager.default.fileExists(atPath: first + "/desk.json"))

        // When B holds a peer's file and the link is re-pointed to B (ln -sfn: a new link renamed over)
        let bytes = Snapshots.file("laptop", records: [(Snapshots.id(1), Snapshots.fields("behind the link"))])
        try Data(bytes).write(to: URL(fileURLWithPath: second + "/laptop.json"))
        try FileManager.default.createSymbolicLink(atPath: sandbox.path("link.new"), withDestinationPath: second)
        #expect(rename(sandbox.path("link.new"), sandbox.shared) == 0)

        // Then syncd merges it and publishes its own file in B, and the log says why
        let followed = eventually(within: 60) {
            Snapshots.published(FileManager.default.contents(atPath: second + "/desk.json").map(Array.init))?.records
                .map(Snapshots.recordID) == [Snapshots.id(1)]
        }
        #expect(followed, "\(daemon.log)")
        #expect(daemon.log.contains("names another directory now"), "\(daemon.log)")
        #expect(daemon.stop() == 0, "\(daemon.log)")
    }

    @Test(
        "a shared folder that is a mount point: unmounted, nothing is published on the bare directory; mounted again (no inotify event), it is watched and read",
        .enabled(if: canMountTemporaryFileSystems(), "mounting a tmpfs needs root and a system that allows it")
    )
    func folderRemounted() throws {
        // Given the shared folder a mounted file system, and syncd running on it
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        try #require(mountTemporaryFileSystem(on: sandbox.shared))
        var mounted = true
        defer { if mounted { umount(sandbox.shared) } }
        let daemon = try Daemon("desk", in: sandbox)
        defer { daemon.stop() }
        try daemon.waitUntilReady()
        try #require(sandbox.read("desk.json") != nil)

        // When it is unmounted
        #expect(umount(sandbox.shared) == 0)
        mounted = false
        let noticed = daemon.notify.wait(for: 30) { $0.hasPrefix("STATUS=") && $0.contains("is missing") }
        #expect(noticed, "\(daemon.notify.texts)\n\(daemon.log)")
        // Then nothing is published on the bare directory under it, even when a rescan is asked for
        daemon.launched.signal(SIGHUP)
        usleep(1_500_000)
        #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.shared).isEmpty, "\(daemon.log)")

        // When a file system holding a peer's file is mounted there (inotify says nothing)
        let staging = sandbox.path("staging")
        try FileManager.default.createDirectory(atPath: staging, withIntermediateDirectories: false)
        try #require(mountTemporaryFileSystem(on: staging))
        defer { umount(staging) }
        try Data(Snapshots.file("laptop", records: [(Snapshots.id(1), Snapshots.fields("mounted"))]))
            .write(to: URL(fileURLWithPath: staging + "/laptop.json"))
        #expect(mount(staging, sandbox.shared, nil, UInt(MS_BIND), nil) == 0)
        mounted = true

        // Then syncd watches it again, merges the peer's file and publishes its own there
        let merged = eventually(within: 60) {
            Snapshots.published(sandbox.read("desk.json"))?.records.map(Snapshots.recordID) == [Snapshots.id(1)]
        }
        #expect(merged, "\(daemon.log)")
        #expect(daemon.stop() == 0, "\(daemon.log)")
    }

    @Test(
        "a file system mounted on the folder after syncd started is followed; unmounted again, nothing is published on the bare directory",
        .enabled(if: canMountTemporaryFileSystems(), "mounting a tmpfs needs root and a system that allows it")
    )
    func mountedLateThenUnmounted() throws {
        // Given syncd started on a plain directory
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let daemon = try Daemon("desk", in: sandbox)
        defer { daemon.stop() }
        try daemon.waitUntilReady()
        try FileManager.default.removeItem(atPath: sandbox.shared + "/desk.json")

        // When a file system holding a peer's file is mounted on it
        let staging = sandbox.path("staging")
        try FileManager.default.createDirectory(atPath: staging, withIntermediateDirectories: false)
        try #require(mountTemporaryFileSystem(on: staging))
        defer { umount(staging) }
        try Data(Snapshots.file("laptop", records: [(Snapshots.id(1), Snapshots.fields("late mount"))]))
            .write(to: URL(fileURLWithPath: staging + "/laptop.json"))
        #expect(mount(staging, sandbox.shared, nil, UInt(MS_BIND), nil) == 0)
        var mounted = true
        defer { if mounted { umount(sandbox.shared) } }

        // Then it is followed: the record is merged and published there, and syncd says it follows
        // the mount (a pass may read the mount before syncd looks at the path again: the unmount
        // below is known as one only once syncd has said so), and it reads the mount again
        #expect(eventually(within: 60) { published("late mount", in: sandbox) }, "\(daemon.log)")
        let followed = eventually(within: 30) {
            daemon.log.components(separatedBy: "path names another directory now").last?.contains("merge pass done")
                == true
                && daemon.log.contains("path names another directory now")
        }
        #expect(followed, "\(daemon.log)")

        // When it is unmounted (a bind mount: inotify reports no unmount) between passes, then a
        // rescan is asked for (an unmount in the middle of a pass can find its publication half done)
        #expect(umount(sandbox.shared) == 0)
        mounted = false
        daemon.launched.signal(SIGHUP)
        // Then the pass finds the bare directory, says the folder is missing and what to do if the
        // folder is that directory, and holds nothing of syncd's there
        #expect(daemon.notify.wait(for: 30) { $0.hasPrefix("STATUS=") && $0.contains("is missing") }, "\(daemon.log)")
        #expect(eventually(within: 30) { daemon.log.contains("if the folder is meant to be that directory now, restart syncd") }, "\(daemon.log)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.shared).isEmpty, "\(daemon.log)")
        #expect(daemon.stop() == 0, "\(daemon.log)")
    }

    @Test(
        "the folder a link to a mount point, re-pointed to a plain directory: followed, not taken for an unmounted drive",
        .enabled(if: canMountTemporaryFileSystems(), "mounting a tmpfs needs root and a system that allows it")
    )
    func linkMovedOffMountPoint() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let (mounted, plain) = (sandbox.path("M"), sandbox.path("B"))
        try FileManager.default.createDirectory(atPath: mounted, withIntermediateDirectories: false)
        try FileManager.default.createDirectory(atPath: plain, withIntermediateDirectories: false)
        try #require(mountTemporaryFileSystem(on: mounted))
        defer { umount(mounted) }
        try FileManager.default.removeItem(atPath: sandbox.shared)
        try FileManager.default.createSymbolicLink(atPath: sandbox.shared, withDestinationPath: mounted)
        let daemon = try Daemon("desk", in: sandbox)
        defer { daemon.stop() }
        try daemon.waitUntilReady()

        try Data(Snapshots.file("laptop", records: [(Snapshots.id(1), Snapshots.fields("off the mount"))]))
            .write(to: URL(fileURLWithPath: plain + "/laptop.json"))
        try FileManager.default.createSymbolicLink(atPath: sandbox.path("link.new"), withDestinationPath: plain)
        #expect(rename(sandbox.path("link.new"), sandbox.shared) == 0)

        let followed = eventually(within: 60) {
            Snapshots.published(FileManager.default.contents(atPath: plain + "/desk.json").map(Array.init))?.records
                .map(Snapshots.recordID) == [Snapshots.id(1)]
        }
        #expect(followed, "\(daemon.log)")
        #expect(!daemon.log.contains("was a mount point when last watched"), "\(daemon.log)")
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

extension DaemonTests {
    @Test(
        "the shared folder deleted and made again read-only (as syncd's systemd sandbox shows it): started by systemd, syncd exits 74 so that systemd starts it again with the new folder; run by hand (or from a service's child, which inherits INVOCATION_ID), it keeps trying",
        .enabled(if: canMountTemporaryFileSystems(), "mounting a tmpfs needs root and a system that allows it"),
        arguments: [
            ("systemd", ["INVOCATION_ID": "0123456789abcdef"]),
            ("a service's child", ["INVOCATION_ID": "0123456789abcdef", "SYSTEMD_EXEC_PID": "1"]),
            ("by hand", [:]),
        ] as [(String, [String: String])]
    )
    func folderMadeAgainReadOnly(startedBy: String, environment: [String: String]) throws {
        let startedBySystemd = startedBy == "systemd"
        // Given a shared folder reached through a link, as base/shared (so that base can become a
        // read-only file system, as the rest of the system is inside syncd's sandbox)
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let base = sandbox.path("base")
        try FileManager.default.createDirectory(atPath: base + "/shared", withIntermediateDirectories: true)
        try FileManager.default.removeItem(atPath: sandbox.shared)
        try FileManager.default.createSymbolicLink(atPath: sandbox.shared, withDestinationPath: base + "/shared")
        // And a running syncd (started by systemd, which sets INVOCATION_ID, or by hand) that has published its file
        let daemon = try Daemon("desk", in: sandbox, environment: environment)
        // The read-only file system, made aside and moved onto base in one step (no moment when
        // syncd could publish into the new folder); where it is mounted, for the cleanup.
        let staging = sandbox.path("staging")
        var mountedAt: String? = nil
        defer {
            daemon.stop()
            if let mountedAt, umount(mountedAt) != 0 {
                Issue.record("could not unmount \(mountedAt): errno \(errno)")
            }
        }
        try daemon.waitUntilReady()
        try #require(sandbox.read("desk.json") != nil)
        try FileManager.default.createDirectory(atPath: staging, withIntermediateDirectories: false)
        try #require(mountTemporaryFileSystem(on: staging))
        mountedAt = staging
        try FileManager.default.createDirectory(atPath: staging + "/shared", withIntermediateDirectories: false)
        try #require(mount(nil, staging, nil, UInt(MS_REMOUNT | MS_RDONLY), nil) == 0)

        // When the folder is deleted and made again on a read-only file system, not as a mount
        // point of its own: as syncd sees a folder made again where ReadWritePaths= bound the old one
        try FileManager.default.removeItem(atPath: base + "/shared")
        try #require(mount(staging, base, nil, UInt(MS_MOVE), nil) == 0)
        mountedAt = base

        if startedBySystemd {
            // Then syncd cannot publish there, says why, and exits 74 (Restart=on-failure starts it again)
            let status = daemon.launched.exitStatus(within: 60)
            #expect(status == 74, "\(daemon.log)")
            #expect(daemon.log.contains("deleted and made again since syncd started"), "\(daemon.log)")
        } else {
            // Then, with no sandbox to blame, the folder is read-only for real: syncd says so and
            // keeps trying (a failed pass is tried again at once: two failures, still running)
            let failed = eventually(within: 60) {
                daemon.log.components(separatedBy: "Read-only file system").count > 2
            }
            #expect(failed, "\(daemon.log)")
            #expect(daemon.isRunning, "\(daemon.log)")
            #expect(!daemon.log.contains("deleted and made again since syncd started"), "\(daemon.log)")
            #expect(daemon.stop() == 0, "\(daemon.log)")
        }
    }
}

/// Mounts an empty tmpfs on `path` (read-only if asked); false when the system does not allow it.
func mountTemporaryFileSystem(on path: String, readOnly: Bool = false) -> Bool {
    mount("snapshotsync-test", path, "tmpfs", readOnly ? UInt(MS_RDONLY) : 0, "size=16m") == 0
}

/// Whether this process may mount a tmpfs (root, and a system that allows it): tried once.
func canMountTemporaryFileSystems() -> Bool {
    let probe = "/tmp/syncd-test-mount-probe-\(getpid())"
    guard mkdir(probe, 0o700) == 0 else { return false }
    defer { rmdir(probe) }
    guard mountTemporaryFileSystem(on: probe) else { return false }
    umount(probe)
    return true
}
