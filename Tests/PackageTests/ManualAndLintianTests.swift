import Foundation
import Testing

@Suite("Debian package: man pages and lintian")
struct ManualAndLintianTests {
    @Test(
        "syncctl(1), syncd(8) and snapshotsync(5) carry their sections, the commands' current options and the hand-written parts, and man renders them without a warning",
        arguments: [
            (
                "/usr/share/man/man1/syncctl.1.gz", ".Dt SYNCCTL 1",
                ["Fl -from", "Fl -device , -this-device", "Em trust", "EXIT STATUS", "SYNCD_DEVICE", "snapshotsync 5"]
            ),
            (
                "/usr/share/man/man8/syncd.8.gz", ".Dt SYNCD 8",
                ["Fl -settle-ms", "Fl -metrics-file", "SIGHUP", "syncd@", "/etc/syncd/README"]
            ),
            (
                "/usr/share/man/man5/snapshotsync.5.gz", ".Dt SNAPSHOTSYNC 5",
                ["Parts (format 2)", "Signatures (format 2)", "IMPLEMENTATION NOTES"]
            ),
        ])
    func manualPage(path: String, title: String, mentions: [String]) throws {
        // Given a packaged man page
        let package = try BuiltPackage.shared()
        let file = package.installed(path).path
        let source = try Command.succeed("gzip", ["-dc", file]).stdout
        // Then it has its section, and says what the commands and the hand-written parts say
        #expect(source.contains(title), "\(path) lacks \(title)")
        for text in mentions { #expect(source.contains(text), "\(path) does not mention \(text)") }
        // And man formats it without a single warning, checked as lintian checks (groff-message)
        let render = try Command.run(
            "man", ["--warnings", "-E", "UTF-8", "-l", "-Tutf8", "-Z", file],
            environment: ["LC_ALL": "C.UTF-8", "MANROFFSEQ": "", "MANWIDTH": "80"])
        #expect(render.status == 0 && render.stderr.isEmpty, "man --warnings -l \(path):\n\(render.stderr)")
        #expect(render.stdout.count > 1000, "man -l \(path) printed almost nothing")
    }

    @Test("lintian reports no error on the package")
    func lintian() throws {
        // Given the package
        let package = try BuiltPackage.shared()
        // When lintian checks it (root is fine here: a throwaway lab's package)
        let result = try Command.run("lintian", ["--allow-root", "--tag-display-limit", "0", package.path])
        // Then it has no error to report (warnings and notes are for docs/packaging.md)
        let errors = result.stdout.split(separator: "\n").filter { $0.hasPrefix("E:") }
        #expect(errors.isEmpty, "lintian errors:\n\(errors.joined(separator: "\n"))")
        // (lintian exits 1 for errors, 2 when it cannot run at all)
        #expect(result.status == 0, "lintian exited \(result.status):\n\(result.stdout)\(result.stderr)")
    }
}
