import Foundation
import TestSupport
import Testing

// Checks the systemd units in systemd/ with the real `systemd-analyze` (systemd need not be PID 1):
// the sandbox scores an exposure of 1.0 or lower, `verify` has nothing at all to say, and every
// hardening line is explained by the comment just above it. Without systemd-analyze these tests
// fail: they are never skipped.

/// One unit as the tests load it.
struct UnitUnderTest: Sendable, CustomTestStringConvertible {
    /// Path of the unit file from the repository root.
    let file: String
    /// The name given to systemd-analyze: an instance name for a template.
    let loadAs: String
    /// A unit for the per-user manager (`systemd-analyze --user`).
    let user: Bool

    var testDescription: String { user ? "\(loadAs) (user)" : loadAs }

    static let system = UnitUnderTest(file: "systemd/syncd.service", loadAs: "syncd.service", user: false)
    static let templateInstance = UnitUnderTest(
        file: "systemd/syncd@.service", loadAs: "syncd@lists.service", user: false)
    static let user = UnitUnderTest(file: "systemd/user/syncd.service", loadAs: "syncd.service", user: true)
}

/// The repository root, found from this file (through a symbolic link, if the file is one).
private let repositoryRoot: URL = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
    .deletingLastPathComponent()  // SystemdUnitTests
    .deletingLastPathComponent()  // Tests
    .deletingLastPathComponent()

private struct UnitTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

private func findExecutable(_ name: String) -> String? {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
    let directories = path.split(separator: ":").map(String.init) + ["/usr/bin", "/bin", "/usr/sbin", "/sbin"]
    for directory in directories where !directory.isEmpty {
        let candidate = (directory as NSString).appendingPathComponent(name)
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
    }
    return nil
}

/// `systemd-analyze` (or the binary `$SYSTEMD_ANALYZE` names), or a failure that says to install systemd.
private func systemdAnalyze() throws -> String {
    let found: String?
    if let given = ProcessInfo.processInfo.environment["SYSTEMD_ANALYZE"], !given.isEmpty {
        found = FileManager.default.isExecutableFile(atPath: given) ? given : nil
    } else {
        found = findExecutable("systemd-analyze")
    }
    guard let path = found else {
        throw UnitTestError(
            "systemd-analyze is not installed: install systemd (`apt-get install systemd`; it need not run as PID 1). "
                + "The systemd unit checks are never skipped.")
    }
    return path
}

/// Runs a program to completion with its output captured in files (no pipe can fill up).
private func run(_ executable: String, _ arguments: [String], environment extra: [String: String] = [:]) throws
    -> CapturedRun
{
    var environment = ProcessInfo.processInfo.environment
    // Every warning must show, uncoloured and unpaged.
    environment["SYSTEMD_LOG_LEVEL"] = "info"
    environment["SYSTEMD_COLORS"] = "0"
    environment["SYSTEMD_PAGER"] = ""
    environment.merge(extra) { _, new in new }
    return try CapturedRun.run(executable, arguments, environment: environment)
}

private func temporaryDirectory(_ label: String) throws -> URL {
    let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("syncd-unit-\(label)-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

private func unitText(_ unit: UnitUnderTest) throws -> String {
    try String(contentsOf: repositoryRoot.appendingPathComponent(unit.file), encoding: .utf8)
}

/// The unit with the program of every `Exec…=` line replaced by an existing binary (`true`), keeping
/// prefixes and arguments: `verify` refuses a unit whose binary is not installed yet.
private func withExistingBinaries(_ text: String, binary: String) -> String {
    text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
        guard line.hasPrefix("Exec"), let equals = line.firstIndex(of: "=") else { return String(line) }
        let key = line[..<equals]
        var value = line[line.index(after: equals)...]
        let prefix = value.prefix { "-@:+!".contains($0) }
        value = value.dropFirst(prefix.count)
        guard !value.isEmpty else { return String(line) }
        let arguments = value.firstIndex(of: " ").map { value[$0...] } ?? ""
        return "\(key)=\(prefix)\(binary)\(arguments)"
    }.joined(separator: "\n")
}

/// Names of the settings that sandbox or confine the service.
private let hardeningKeys: Set<String> = [
    "User", "Group", "DynamicUser", "SupplementaryGroups", "UMask", "StateDirectoryMode",
    "ReadWritePaths", "ReadOnlyPaths", "InaccessiblePaths", "ExecPaths", "NoExecPaths", "TemporaryFileSystem",
    "BindPaths", "BindReadOnlyPaths", "NoNewPrivileges", "CapabilityBoundingSet", "AmbientCapabilities",
    "SecureBits", "LockPersonality", "MemoryDenyWriteExecute", "RemoveIPC", "KeyringMode", "DevicePolicy",
    "DeviceAllow", "ProcSubset", "MountAPIVFS", "NotifyAccess",
]
private let hardeningPrefixes = ["Protect", "Private", "Restrict", "SystemCall", "IPAddress", "SocketBind"]

private func isHardening(_ key: String) -> Bool {
    hardeningKeys.contains(key) || hardeningPrefixes.contains { key.hasPrefix($0) }
}

@Suite("systemd units")
struct SystemdUnitTests {
    @Test(
        "systemd-analyze security --offline=true rates the system unit and a template instance at 1.0 or lower",
        arguments: [UnitUnderTest.system, .templateInstance])
    func exposure(unit: UnitUnderTest) throws {
        let analyze = try systemdAnalyze()
        // Loaded from the repository as it is: a template's instance is found through the template.
        let path = repositoryRoot.appendingPathComponent(unit.file).deletingLastPathComponent()
            .appendingPathComponent(unit.loadAs).path
        let result = try run(analyze, ["security", "--offline=true", "--no-pager", path])
        #expect(result.status == 0, "systemd-analyze security exited \(result.status): \(result.stderr)")
        let line = result.stdout.split(separator: "\n").first { $0.contains("Overall exposure level for") }
        let found = try #require(line, "no overall exposure in:\n\(result.stdout)\n\(result.stderr)")
        let score = try #require(
            // "…for syncd.service: 0.3 SAFE 😀"; without a UTF-8 locale the face is ":-}", so split
            // at the first colon only.
            found.split(separator: ":", maxSplits: 1).last?.split(separator: " ").first.flatMap { Double($0) },
            "cannot read the exposure in: \(found)")
        #expect(score <= 1.0, "\(found)")
    }

    @Test(
        "systemd-analyze verify prints nothing and exits 0 for each unit (binaries replaced by true)",
        arguments: [UnitUnderTest.system, .templateInstance, .user])
    func verify(unit: UnitUnderTest) throws {
        let analyze = try systemdAnalyze()
        let binary = try #require(findExecutable("true"), "no `true` binary to stand in for syncd")
        let directory = try temporaryDirectory("verify")
        defer { try? FileManager.default.removeItem(at: directory) }
        let fileName = URL(fileURLWithPath: unit.file).lastPathComponent
        try withExistingBinaries(try unitText(unit), binary: binary)
            .write(to: directory.appendingPathComponent(fileName), atomically: true, encoding: .utf8)
        var arguments = ["verify"]
        var environment: [String: String] = [:]
        if unit.user {
            arguments.insert("--user", at: 0)
            // The user manager needs a runtime directory; give it a private one.
            let runtime = directory.appendingPathComponent("runtime")
            try FileManager.default.createDirectory(
                at: runtime, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
            environment["XDG_RUNTIME_DIR"] = runtime.path
        }
        arguments.append(directory.appendingPathComponent(unit.loadAs).path)
        let result = try run(analyze, arguments, environment: environment)
        #expect(result.status == 0, "systemd-analyze \(arguments.joined(separator: " ")) exited \(result.status)")
        // verify exits 0 on unknown keys and bad values: any output at all is a failure.
        #expect(result.stdout.isEmpty, "verify printed on stdout:\n\(result.stdout)")
        #expect(result.stderr.isEmpty, "verify printed on stderr:\n\(result.stderr)")
    }

    @Test(
        "every hardening line in each unit has its own # comment just above it",
        arguments: [UnitUnderTest.system, .templateInstance, .user])
    func hardeningIsExplained(unit: UnitUnderTest) throws {
        let lines = try unitText(unit).split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: .whitespaces) }
        var hardeningLines = 0
        for (index, line) in lines.enumerated() {
            guard !line.isEmpty, !line.hasPrefix("#"), !line.hasPrefix(";"), !line.hasPrefix("["),
                let equals = line.firstIndex(of: "=")
            else { continue }
            let key = String(line[..<equals]).trimmingCharacters(in: .whitespaces)
            guard isHardening(key) else { continue }
            hardeningLines += 1
            let previous = index > 0 ? lines[index - 1] : ""
            // systemd has no trailing comments ("yes # why" would be the value), so the comment goes above.
            #expect(
                previous.hasPrefix("#") && previous.dropFirst().trimmingCharacters(in: .whitespaces).count >= 10,
                "\(unit.file):\(index + 1): \(line) is not preceded by a # comment saying what it does and why")
        }
        #expect(hardeningLines >= 10, "\(unit.file) has only \(hardeningLines) hardening lines")
    }

    @Test(
        "each unit keeps the daemon's contract: Type=notify, NotifyAccess=main, WatchdogSec=30, reload by SIGHUP",
        arguments: [UnitUnderTest.system, .templateInstance, .user])
    func contract(unit: UnitUnderTest) throws {
        let settings = Set(
            try unitText(unit).split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) })
        for required in [
            "Type=notify", "NotifyAccess=main", "WatchdogSec=30", "Restart=on-failure",
            "ExecReload=/bin/kill -HUP $MAINPID",
        ] {
            #expect(settings.contains(required), "\(unit.file) lacks \(required)")
        }
        #expect(settings.contains { $0.hasPrefix("ExecStart=") && $0.contains("/bin/syncd") })
        if !unit.user {
            #expect(settings.contains("User=syncd") && settings.contains("Group=syncd"))
            #expect(!settings.contains { $0.hasPrefix("DynamicUser=") })
            #expect(settings.contains("StateDirectoryMode=0700"))
        }
    }
}
