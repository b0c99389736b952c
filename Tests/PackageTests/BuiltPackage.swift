import Foundation
import Testing

/// The Debian package `make deb` built, unpacked once for every test that reads its files.
///
/// The tests do not build it: a static release build takes minutes of both cores, which would
/// starve the timing-sensitive daemon tests running beside them. CI's `.ci/run` runs `make deb`
/// before `swift test`; by hand, run `make deb` first. A package older than the packaging files
/// (debian/, systemd/, man/, the scripts and docs it ships) fails the tests instead of passing on
/// stale contents.
struct BuiltPackage: Sendable {
    /// The `.deb` file.
    let path: String
    /// `dpkg -x` of it: the files as the package installs them, without its maintainer scripts.
    let root: URL

    /// The package, unpacked on first use; every test shares it.
    static func shared() throws -> BuiltPackage { try unpacked.get() }

    private static let unpacked: Result<BuiltPackage, any Error> = Result {
        let path = try locate()
        let root = try TemporaryDirectory.make("root")
        // 140 MB that no single test owns: removed when the test process ends.
        atexit {
            if case .success(let package) = BuiltPackage.unpacked {
                try? FileManager.default.removeItem(at: package.root)
            }
        }
        try Command.succeed("dpkg-deb", ["-x", path, root.path])
        return BuiltPackage(path: path, root: root)
    }

    /// A file of the unpacked package, by its installed path (`/usr/bin/syncd`).
    func installed(_ path: String) -> URL { root.appendingPathComponent(String(path.drop { $0 == "/" })) }

    /// The text of an installed file.
    func text(_ path: String) throws -> String { try String(contentsOf: installed(path), encoding: .utf8) }

    /// `$SNAPSHOTSYNC_DEB`, else the one `.deb` of this version in `.build-deb/packages`.
    private static func locate() throws -> String {
        if let given = ProcessInfo.processInfo.environment["SNAPSHOTSYNC_DEB"], !given.isEmpty {
            guard FileManager.default.fileExists(atPath: given) else {
                throw PackageTestError("SNAPSHOTSYNC_DEB names \(given), which does not exist")
            }
            return given
        }
        let version = try Command.succeed(
            "dpkg-parsechangelog", ["-l", Repository.path("debian/changelog"), "-S", "Version"]
        )
        .stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let architecture = try Command.succeed("dpkg", ["--print-architecture"]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let path = Repository.path(".build-deb/packages/snapshotsync_\(version)_\(architecture).deb")
        guard FileManager.default.fileExists(atPath: path) else {
            throw PackageTestError(
                "\(path) is not built: run `make deb` first (CI's .ci/run does, before swift test)")
        }
        if let newer = try Repository.packagingInputs().first(where: { try modified($0) > modified(path) }) {
            throw PackageTestError("\(path) is older than \(newer): run `make deb` again")
        }
        return path
    }

    private static func modified(_ path: String) throws -> Date {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return attributes[.modificationDate] as? Date ?? .distantPast
    }
}

/// The checkout these tests belong to.
enum Repository {
    /// The repository root, found from this file.
    static let root: URL = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
        .deletingLastPathComponent()  // PackageTests
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent()

    static func path(_ relative: String) -> String { root.appendingPathComponent(relative).path }

    /// The files the package is made from, besides the Swift sources: a package older than any
    /// of them is stale.
    static func packagingInputs() throws -> [String] {
        var files = [
            "Makefile", "README.md", "man/snapshotsync.5", "man/syncctl.1.tail", "man/syncd.8.tail",
            "scripts/build-deb.sh", "scripts/generate-manuals-and-completions.sh", "systemd/syncd.service",
            "systemd/syncd@.service", "systemd/user/syncd.service", "docs/daemon.md", "docs/syncctl.md",
            "docs/format.md", "docs/parts.md", "docs/schemas.md", "docs/trust.md",
        ].map(path)
        // debian/'s own files, not what a build leaves there (debian/files, debian/snapshotsync/…)
        let tracked = try Command.succeed("git", ["-C", root.path, "ls-files", "--", "debian"]).stdout
        files += tracked.split(separator: "\n").map { path(String($0)) }
        return files
    }
}

/// A directory of its own under the temporary directory.
enum TemporaryDirectory {
    static func make(_ label: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("snapshotsync-package-\(label)-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}

struct PackageTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
