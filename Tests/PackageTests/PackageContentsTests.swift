import Foundation
import Testing

@Suite("Debian package: contents")
struct PackageContentsTests {
    /// Every file the package must hold, with its mode: what the units, man and the shells look for.
    static let expectedFiles: [(path: String, mode: String)] = [
        ("/usr/bin/syncd", "-rwxr-xr-x"),
        ("/usr/bin/syncctl", "-rwxr-xr-x"),
        ("/lib/systemd/system/syncd.service", "-rw-r--r--"),
        ("/lib/systemd/system/syncd@.service", "-rw-r--r--"),
        ("/usr/lib/systemd/user/syncd.service", "-rw-r--r--"),
        ("/usr/lib/sysusers.d/snapshotsync.conf", "-rw-r--r--"),
        ("/usr/share/man/man1/syncctl.1.gz", "-rw-r--r--"),
        ("/usr/share/man/man5/snapshotsync.5.gz", "-rw-r--r--"),
        ("/usr/share/man/man8/syncd.8.gz", "-rw-r--r--"),
        ("/usr/share/bash-completion/completions/syncctl", "-rw-r--r--"),
        ("/usr/share/bash-completion/completions/syncd", "-rw-r--r--"),
        ("/usr/share/zsh/vendor-completions/_syncctl", "-rw-r--r--"),
        ("/usr/share/zsh/vendor-completions/_syncd", "-rw-r--r--"),
        ("/usr/share/fish/vendor_completions.d/syncctl.fish", "-rw-r--r--"),
        ("/usr/share/fish/vendor_completions.d/syncd.fish", "-rw-r--r--"),
        ("/etc/syncd/config.json.example", "-rw-r--r--"),
        ("/etc/syncd/README", "-rw-r--r--"),
        ("/usr/share/doc/snapshotsync/README.Debian", "-rw-r--r--"),
        ("/usr/share/lintian/overrides/snapshotsync", "-rw-r--r--"),
        ("/usr/share/doc/snapshotsync/copyright", "-rw-r--r--"),
        ("/usr/share/doc/snapshotsync/changelog.gz", "-rw-r--r--"),
        ("/usr/share/doc/snapshotsync/README.md", "-rw-r--r--"),
        ("/usr/share/doc/snapshotsync/daemon.md", "-rw-r--r--"),
        ("/usr/share/doc/snapshotsync/syncctl.md", "-rw-r--r--"),
        ("/usr/share/doc/snapshotsync/format.md", "-rw-r--r--"),
        ("/usr/share/doc/snapshotsync/parts.md", "-rw-r--r--"),
        ("/usr/share/doc/snapshotsync/trust.md", "-rw-r--r--"),
    ]

    @Test(
        "dpkg-deb -c lists binaries, units, man pages, completions, /etc/syncd and docs where the units and Debian look, all owned by root"
    )
    func fileList() throws {
        // Given the package's file list
        let package = try BuiltPackage.shared()
        let listing = try Command.succeed("dpkg-deb", ["-c", package.path]).stdout
        // "-rw-r--r-- root/root 1234 2026-11-25 12:00 ./usr/bin/syncd"
        var entries: [String: (mode: String, owner: String)] = [:]
        for line in listing.split(separator: "\n") {
            let columns = line.split(separator: " ", omittingEmptySubsequences: true)
            guard columns.count >= 6 else { continue }
            let path = String(columns[5].dropFirst())  // "./usr/…" → "/usr/…"
            entries[path] = (String(columns[0]), String(columns[1]))
        }
        // Then every expected file is there, with its mode
        for (path, mode) in Self.expectedFiles {
            let entry = try #require(entries[path], "\(path) is not in the package:\n\(listing)")
            #expect(entry.mode == mode, "\(path): \(entry.mode), expected \(mode)")
        }
        // And everything belongs to root; nothing goes to /usr/local, /srv or /var (the
        // administrator's and systemd's places)
        for (path, entry) in entries {
            #expect(entry.owner == "root/root", "\(path) is owned by \(entry.owner)")
            for forbidden in ["/usr/local", "/srv", "/var", "/home"] {
                #expect(!path.hasPrefix(forbidden + "/"), "\(path) is under \(forbidden)")
            }
        }
    }

    @Test(
        "the packaged units are systemd/'s with only debian/units.sed's edits, and run the packaged syncd with the packaged pages as documentation",
        arguments: [
            ("systemd/syncd.service", "/lib/systemd/system/syncd.service"),
            ("systemd/syncd@.service", "/lib/systemd/system/syncd@.service"),
            ("systemd/user/syncd.service", "/usr/lib/systemd/user/syncd.service"),
        ])
    func units(source: String, installed: String) throws {
        // Given the unit in the package
        let package = try BuiltPackage.shared()
        let text = try package.text(installed)
        // Then it is the repository's unit through debian/units.sed, nothing more
        let expected = try Command.succeed("sed", ["-f", Repository.path("debian/units.sed"), Repository.path(source)])
        #expect(text == expected.stdout, "\(installed) differs from \(source) through debian/units.sed")
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            #expect(!line.contains("/usr/local") && !line.contains(".local/bin"), "\(installed): \(line)")
            // And its ExecStart= runs a program the package installs
            if line.hasPrefix("ExecStart=") {
                let program = String(line.dropFirst("ExecStart=".count).prefix { $0 != " " })
                #expect(program == "/usr/bin/syncd", "\(line)")
                #expect(FileManager.default.isExecutableFile(atPath: package.installed(program).path), "\(line)")
            }
            // And its Documentation= names pages and files the package installs
            if line.hasPrefix("Documentation=") {
                let references = line.dropFirst("Documentation=".count).split(separator: " ")
                #expect(references.contains("man:syncd(8)"), "\(line)")
                for reference in references {
                    let path =
                        reference.hasPrefix("man:syncd(8)")
                        ? "/usr/share/man/man8/syncd.8.gz" : String(reference.dropFirst("file:".count))
                    #expect(FileManager.default.fileExists(atPath: package.installed(path).path), "\(reference)")
                }
            }
        }
    }

    @Test("the packaged binaries load only Debian's libraries (no Swift runtime), which Depends names")
    func linkedLibraries() throws {
        // Given the package's binaries and control fields
        let package = try BuiltPackage.shared()
        let depends = try Command.succeed("dpkg-deb", ["-f", package.path, "Depends"]).stdout
        for binary in ["/usr/bin/syncd", "/usr/bin/syncctl"] {
            let path = package.installed(binary).path
            // Then ldd finds nothing but libc, libm, libstdc++, libgcc, SQLite, libinotifytools and OpenSSL's libcrypto
            let ldd = try Command.succeed("ldd", [path]).stdout
            let libraries = ldd.split(separator: "\n").compactMap {
                $0.split(separator: " ").first.map { String($0.trimmingCharacters(in: .whitespaces)) }
            }
            let allowed: Set<String> = [
                "linux-vdso.so.1", "/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux-aarch64.so.1", "libc.so.6",
                "libm.so.6", "libdl.so.2", "libpthread.so.0", "librt.so.1", "libutil.so.1", "libstdc++.so.6",
                "libgcc_s.so.1", "libsqlite3.so.0", "libinotifytools.so.0", "libcrypto.so.3",
            ]
            #expect(Set(libraries).isSubset(of: allowed), "\(binary) loads:\n\(ldd)")
            #expect(!ldd.contains("not found") && !ldd.contains("swift"), "\(binary):\n\(ldd)")
            // And no search path leads to a toolchain
            let dynamic = try Command.succeed("readelf", ["-d", path]).stdout
            #expect(!dynamic.contains("RUNPATH") && !dynamic.contains("RPATH"), "\(binary):\n\(dynamic)")
        }
        // And Depends names the packages of those libraries
        for name in ["libc6", "libsqlite3-0", "libinotifytools0", "libssl3", "libstdc++6", "libgcc-s1"] {
            #expect(depends.contains(name), "Depends lacks \(name): \(depends)")
        }
    }

    @Test("the packaged syncctl refuses /etc/syncd/config.json.example until its device placeholder is replaced, and merges with it then")
    func exampleConfiguration() throws {
        // Given the example configuration, with the folder and store given on the command line
        let package = try BuiltPackage.shared()
        let scratch = try TemporaryDirectory.make("example")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let shared = scratch.appendingPathComponent("shared")
        try FileManager.default.createDirectory(at: shared, withIntermediateDirectories: true)
        // When the packaged syncctl merges with it, with no Swift toolchain in its environment
        func merge(_ extra: [String]) throws -> Command {
            try Command.run(
                package.installed("/usr/bin/syncctl").path,
                [
                    "merge", "--config", package.installed("/etc/syncd/config.json.example").path, "--shared", shared.path,
                    "--state", scratch.appendingPathComponent("state").path,
                ] + extra,
                replacingEnvironment: ["PATH": "/usr/bin:/bin", "HOME": scratch.path, "LANG": "C.UTF-8"])
        }
        // Then its placeholder device ID is refused (exit 78), saying what an ID is
        let refused = try merge([])
        #expect(refused.status == 78 && refused.stderr.contains("CHANGE-ME"), "\(refused.stdout)\(refused.stderr)")
        // And with a device ID given, every other key of it is accepted
        let merged = try merge(["--device", "nas"])
        #expect(merged.status == 0, "\(merged.stdout)\(merged.stderr)")
        #expect(FileManager.default.fileExists(atPath: shared.appendingPathComponent("nas.json").path))
    }

    @Test("the completions are the ones the packaged commands generate")
    func completions() throws {
        let package = try BuiltPackage.shared()
        let shells: [(shell: String, directory: String, name: (String) -> String)] = [
            ("bash", "/usr/share/bash-completion/completions", { $0 }),
            ("zsh", "/usr/share/zsh/vendor-completions", { "_" + $0 }),
            ("fish", "/usr/share/fish/vendor_completions.d", { $0 + ".fish" }),
        ]
        for command in ["syncctl", "syncd"] {
            for (shell, directory, name) in shells {
                let generated = try Command.succeed(
                    package.installed("/usr/bin/\(command)").path, ["--generate-completion-script", shell])
                var expected = generated.stdout
                // A bash completion file is sourced, not run: the build drops its #! line.
                if shell == "bash", expected.hasPrefix("#!") {
                    expected = String(expected.drop { $0 != "\n" }.dropFirst())
                }
                let installed = try package.text("\(directory)/\(name(command))")
                #expect(installed == expected, "\(directory)/\(name(command))")
                #expect(!installed.hasPrefix("#!"), "\(directory)/\(name(command)) starts with #!")
            }
        }
        // And they complete resolve's options, --from among them
        #expect(try package.text("/usr/share/bash-completion/completions/syncctl").contains("--from"))
    }
}
