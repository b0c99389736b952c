import Foundation
import TestSupport
import Testing

/// `syncctl merge` against `bench/reference_merge.py`, a plain Python reading of the contract
/// written from the contract alone, through `bench/spec_check.py` (docs/format.md, "Checking
/// against an independent reading"). It found that a record nested deeper than 512 levels made
/// its whole file skipped.
@Suite("syncctl against an independent reading of the contract")
struct ReferenceMergeTests {
    @Test("hostile folders and the conformance vectors merge, record by record, as the reference reads the contract")
    func hostileFoldersAndVectors() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let output = workspace.path("spec_check.out")
        FileManager.default.createFile(atPath: output, contents: nil)
        var environment = ProcessInfo.processInfo.environment
        environment["SNAPSHOT_VECTORS"] = ConformanceVectors.root.path
        let process = try SpawnedProcess(
            "/usr/bin/python3",
            [
                repository.appendingPathComponent("bench/spec_check.py").path, "--syncctl", try SyncctlBinary.require(),
                "--generate", "--hostile-only", "--vectors", "--tmp", workspace.root.path,
            ],
            environment: environment, stdout: .file(output), stderr: .standardOutput)
        // Each syncctl it runs has a timeout of its own; the whole run is stopped by PID after 20 minutes.
        let run = try Started(process: process, stdoutPath: output, stderrPath: output).wait(timeout: 1_200)
        let text = run.stdout
        let summary = text.split(separator: "\n").last { $0.contains("folders,") }.map(String.init) ?? "(no summary)"
        #expect(run.status == 0, "\(summary)\n\(text.suffix(6_000))")
        #expect(summary.contains(" 0 folders with differences"), "\(summary)")
        // The hostile folders and every vector were checked, not an empty run.
        let folders = Int(summary.split(separator: " ").first ?? "") ?? 0
        #expect(folders >= 50, "\(summary)")
    }
}
