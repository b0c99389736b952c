import Foundation
import Testing

// The maintainer scripts, read (dpkg-deb -e) and run: `dpkg --root` installs the package into a
// throwaway root with --force-script-chrootless, so the scripts run on this machine with
// DPKG_ROOT set; systemd-sysusers and deb-systemd-helper then write into the root. The snippets
// that talk to a running systemd (systemctl, deb-systemd-invoke) act only where
// /run/systemd/system exists, and not all of them look at DPKG_ROOT: `systemctl` and
// `deb-systemd-invoke` are stubs here that only record their arguments, so no unit of this
// machine is ever reloaded or started (shared/notes/linux.md).
@Suite("Debian package: maintainer scripts", .serialized)
struct MaintainerScriptTests {
    @Test(
        "dpkg-deb -e: /etc/syncd's files are conffiles, postinst creates user syncd with sysusers, every script is valid sh"
    )
    func controlArea() throws {
        // Given the package's control area
        let package = try BuiltPackage.shared()
        let control = try TemporaryDirectory.make("control")
        defer { try? FileManager.default.removeItem(at: control) }
        try Command.succeed("dpkg-deb", ["-e", package.path, control.path])
        func read(_ name: String) throws -> String {
            try String(contentsOf: control.appendingPathComponent(name), encoding: .utf8)
        }
        // Then the example configuration and its README are conffiles (an edited one is kept on upgrade)
        let conffiles = try read("conffiles").split(separator: "\n").map(String.init).sorted()
        #expect(conffiles == ["/etc/syncd/README", "/etc/syncd/config.json.example"])
        // And postinst creates the user the units run as, from the packaged sysusers.d file
        let postinst = try read("postinst")
        #expect(postinst.contains(#"systemd-sysusers ${DPKG_ROOT:+--root="$DPKG_ROOT"} snapshotsync.conf"#))
        #expect(
            try package.text("/usr/lib/sysusers.d/snapshotsync.conf").contains(
                #"u syncd - "SnapshotSync daemon" /nonexistent /usr/sbin/nologin"#))
        // And only syncd.service (not the template) gets start and restart code, run only under a
        // running systemd (deb-systemd-invoke then starts it only if the administrator enabled it)
        let invoke = try #require(postinst.range(of: "deb-systemd-invoke $_dh_action 'syncd.service'"), "\(postinst)")
        let guardLine = try #require(postinst.range(of: "if [ -d /run/systemd/system ]; then"), "\(postinst)")
        #expect(guardLine.lowerBound < invoke.lowerBound)
        #expect(!postinst.contains("syncd@.service"))
        // And enable runs only for a unit installed and enabled before (dh_installsystemd --no-enable):
        // a first installation enables nothing (the throwaway root below shows it)
        #expect(postinst.contains("if deb-systemd-helper debian-installed 'syncd.service'; then"))
        // And an upgrade restarts the running syncd@NAME instances too, a removal stops them, both
        // only under a running systemd (debhelper's code covers syncd.service alone)
        let restart = try #require(postinst.range(of: "systemctl try-restart 'syncd@*.service'"), "\(postinst)")
        let upgradeGuard = try #require(
            postinst.range(of: #"if [ "$1" = "configure" ] && [ -n "$2" ] && [ -d /run/systemd/system ]; then"#),
            "\(postinst)")
        #expect(upgradeGuard.upperBound < restart.lowerBound)
        let prerm = try read("prerm")
        let stop = try #require(prerm.range(of: "systemctl stop 'syncd@*.service'"), "\(prerm)")
        let removeGuard = try #require(
            prerm.range(of: #"if [ "$1" = "remove" ] && [ -d /run/systemd/system ]; then"#), "\(prerm)")
        #expect(removeGuard.upperBound < stop.lowerBound)
        // And a reload works where the package installs: ExecReload= runs /bin/kill, from procps
        #expect(try Command.succeed("dpkg-deb", ["-f", package.path, "Depends"]).stdout.contains("procps"))
        // And every maintainer script parses
        for script in ["preinst", "postinst", "prerm", "postrm"] {
            let path = control.appendingPathComponent(script).path
            guard FileManager.default.fileExists(atPath: path) else { continue }
            let check = try Command.run("sh", ["-n", path])
            #expect(check.status == 0, "\(script): \(check.stderr)")
        }
    }

    @Test(
        "dpkg --root installs it into a throwaway root: user syncd there, no unit enabled, a reinstall (upgrade) works, purge leaves only the user"
    )
    func installIntoThrowawayRoot() throws {
        // Given an empty root with an empty dpkg database, and this machine's accounts as they are
        let package = try BuiltPackage.shared()
        let root = try TemporaryDirectory.make("dpkg-root")
        defer { try? FileManager.default.removeItem(at: root) }
        for directory in ["var/lib/dpkg/info", "var/lib/dpkg/updates", "var/lib/dpkg/triggers", "etc", "var/log"] {
            try FileManager.default.createDirectory(
                at: root.appendingPathComponent(directory), withIntermediateDirectories: true)
        }
        _ = FileManager.default.createFile(
            atPath: root.appendingPathComponent("var/lib/dpkg/status").path, contents: nil)
        let hostAccounts = try String(contentsOfFile: "/etc/passwd", encoding: .utf8)
        let stubs = try Self.systemdStubs(
            in: root.deletingLastPathComponent().appendingPathComponent(root.lastPathComponent + "-stubs"))
        defer { try? FileManager.default.removeItem(at: stubs.directory) }
        // The root has no libc6 & co. installed: the dependencies are this machine's business.
        let dpkg = ["--root=\(root.path)", "--force-script-chrootless", "--force-depends"]
        func run(_ arguments: [String]) throws -> Command {
            try Command.run(
                "dpkg", dpkg + arguments,
                environment: [
                    "PATH": stubs.directory.path + ":"
                        + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/sbin:/usr/bin:/sbin:/bin")
                ])
        }
        func installed(_ path: String) -> Bool {
            FileManager.default.fileExists(atPath: root.appendingPathComponent(path).path)
        }

        // When dpkg installs the package there
        let install = try run(["--install", package.path])
        #expect(install.status == 0, "dpkg --install: \(install.stdout)\(install.stderr)")

        // Then its files are in the root, configured
        #expect(
            try Command.succeed("dpkg-query", ["--root=\(root.path)", "-W", "-f=${Status}", "snapshotsync"]).stdout
                == "install ok installed")
        for path in [
            "usr/bin/syncd", "usr/bin/syncctl", "lib/systemd/system/syncd.service", "etc/syncd/config.json.example",
        ] {
            #expect(installed(path), "\(path) is not installed")
        }
        // And postinst made the static user and group the units run as, in the root only
        let accounts = try String(contentsOf: root.appendingPathComponent("etc/passwd"), encoding: .utf8)
        let user = try #require(
            accounts.split(separator: "\n").first { $0.hasPrefix("syncd:") }, "no user syncd:\n\(accounts)")
        #expect(user.hasSuffix(":SnapshotSync daemon:/nonexistent:/usr/sbin/nologin"), "\(user)")
        #expect(try String(contentsOf: root.appendingPathComponent("etc/group"), encoding: .utf8).contains("syncd:x:"))
        #expect(
            try String(contentsOfFile: "/etc/passwd", encoding: .utf8) == hostAccounts,
            "the machine's /etc/passwd changed")
        // And no unit is enabled: syncd needs a device ID first; every user enables their own
        #expect(!installed("etc/systemd/system/multi-user.target.wants/syncd.service"))
        #expect(!installed("etc/systemd/user/default.target.wants/syncd.service"))

        // When it is installed again (dpkg runs the upgrade path: configure with the old version)
        let again = try run(["--install", package.path])
        // Then that works too, and still enables nothing
        #expect(again.status == 0, "dpkg --install again: \(again.stdout)\(again.stderr)")
        #expect(!installed("etc/systemd/system/multi-user.target.wants/syncd.service"))

        // When it is purged
        let purge = try run(["--purge", "snapshotsync"])
        // Then its files and conffiles are gone; the user stays (files in shared folders may be its)
        #expect(purge.status == 0, "dpkg --purge: \(purge.stdout)\(purge.stderr)")
        for path in [
            "usr/bin/syncd", "lib/systemd/system/syncd.service", "etc/syncd/config.json.example", "etc/syncd/README",
        ] {
            #expect(!installed(path), "\(path) is still there after purge")
        }
        #expect(try String(contentsOf: root.appendingPathComponent("etc/passwd"), encoding: .utf8).contains("syncd:"))
        // And no script ever asked to start syncd (only a restart on upgrade, of an enabled unit, would be right)
        let calls = (try? String(contentsOf: stubs.log, encoding: .utf8)) ?? ""
        #expect(!calls.contains("deb-systemd-invoke start"), "\(calls)")
    }

    /// `systemctl` and `deb-systemd-invoke` that append their arguments to `log` and do nothing else.
    static func systemdStubs(in directory: URL) throws -> (directory: URL, log: URL) {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let log = directory.appendingPathComponent("calls.log")
        for name in ["systemctl", "deb-systemd-invoke"] {
            let stub = directory.appendingPathComponent(name)
            try "#!/bin/sh\necho \"\(name) $*\" >>'\(log.path)'\n".write(to: stub, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: stub.path)
        }
        return (directory, log)
    }
}
