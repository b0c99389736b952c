import Foundation
import TestSupport
import Testing

@Suite("syncctl's progress line")
struct ProgressTests {
    @Test("on a terminal, a merge longer than the silence shows its progress on standard error; in a pipe, nothing")
    func progressOnTerminal() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        for device in ["phone", "tablet"] {
            let location = workspace.location(state: workspace.state(device), device: device)
            #expect(try workspace.run(["put", "--type", "Note"] + location, stdin: #"{"text": "from \#(device)"}"#).status == 0)
        }
        let desk = workspace.location(state: workspace.state("desk"), device: "desk")

        // A pipe: no progress, however long the merge (the silence set to nothing)
        var quiet = workspace.environment
        quiet["SYNCCTL_PROGRESS_AFTER_MS"] = "0"
        let piped = try workspace.run(["merge"] + desk, environment: quiet)
        #expect(piped.status == 0, "\(piped)")
        #expect(!piped.stderr.contains("syncctl: read"), "\(piped)")

        // A terminal (script(1) gives the command one): the progress, then its last line, ended
        let command = ([try SyncctlBinary.require(), "merge", "--reread"] + desk).map { "'\($0)'" }.joined(separator: " ")
        let output = workspace.path("script.out")
        let status = try SpawnedProcess.run(
            "/usr/bin/script", ["-qec", command, "/dev/null"], environment: quiet, stdout: .file(output))
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        #expect(status == 0, "\(text)")
        #expect(text.contains("syncctl: read 3 file(s)"), "\(text)")  // its own, phone's and tablet's
        #expect(text.contains("merged") && text.contains("versions in"), "\(text)")
        #expect(text.contains("Merged "), "\(text)")
    }
}
