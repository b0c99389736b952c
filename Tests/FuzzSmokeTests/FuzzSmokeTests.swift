import Foundation
import TestSupport
import Testing

// Runs every libFuzzer target of fuzz/targets briefly, through the script a person uses
// (scripts/fuzz.sh, docs/fuzzing.md): each replays its regressions (fuzz/regressions/TARGET, the
// inputs that once failed) and then fuzzes for FUZZ_SMOKE_SECONDS (10 by default) from its seeds,
// in a fresh corpus. Any crash, failed check, leak, hang (an input taking over FUZZ_TIMEOUT, 10 s)
// or OOM fails the test, with libFuzzer's report; the input stays in fuzz/findings/TARGET/.
// The first test builds the targets (about a minute on two cores); the others reuse the build.

@Suite("fuzz targets, briefly (scripts/fuzz.sh)", .serialized)
struct FuzzSmokeTests {
    @Test(
        "the fuzz target replays its regressions and fuzzes from its seeds without a crash, leak or hang",
        arguments: FuzzTargets.names)
    func fuzzBriefly(target: String) async throws {
        let corpus = FileManager.default.temporaryDirectory
            .appendingPathComponent("fuzz-smoke-\(ProcessInfo.processInfo.processIdentifier)-\(target)")
        defer { try? FileManager.default.removeItem(at: corpus) }
        let run = try await FuzzScript.run(
            [target, String(FuzzScript.seconds)],
            environment: ["FUZZ_CORPUS": corpus.path, "SNAPSHOT_VECTORS": ConformanceVectors.root.path])
        #expect(run.status == 0, "scripts/fuzz.sh \(target) failed (status \(run.status)):\n\(run.output)")
    }
}

/// The targets: one per file in fuzz/targets.
enum FuzzTargets {
    static let names: [String] = {
        let folder = FuzzScript.repositoryRoot.appendingPathComponent("fuzz/targets")
        let files = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        let names = files.filter { $0.hasSuffix(".swift") }.map { String($0.dropLast(".swift".count)) }.sorted()
        // A placeholder that fails, rather than no test at all, when the folder is not there.
        return names.isEmpty ? ["(no targets in \(folder.path))"] : names
    }()
}

/// scripts/fuzz.sh, run to completion with its output in a file (no pipe can fill up).
enum FuzzScript {
    static let repositoryRoot = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
        .deletingLastPathComponent()  // FuzzSmokeTests
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent()

    /// How long each target fuzzes: `FUZZ_SMOKE_SECONDS`, 10 by default.
    static let seconds = ProcessInfo.processInfo.environment["FUZZ_SMOKE_SECONDS"].flatMap { Int($0) } ?? 10

    struct Run {
        var status: Int32
        var output: String
    }

    static func run(_ arguments: [String], environment extra: [String: String]) async throws -> Run {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("fuzz-smoke-\(UUID().uuidString).log")
        defer { try? FileManager.default.removeItem(at: log) }
        let process = try SpawnedProcess(
            "/bin/bash", [repositoryRoot.appendingPathComponent("scripts/fuzz.sh").path] + arguments,
            environment: ProcessInfo.processInfo.environment.merging(extra) { _, given in given },
            directory: repositoryRoot.path, stdout: .file(log.path), stderr: .standardOutput)
        await process.exited()
        let output = (try? String(contentsOf: log, encoding: .utf8)) ?? "(no output)"
        return Run(status: process.terminationStatus, output: output)
    }
}
