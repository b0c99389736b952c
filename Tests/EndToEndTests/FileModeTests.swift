import Foundation
import Testing

@Suite("syncctl: modes of the files it publishes")
struct FileModeTests {
    @Test(
        "under a umask of 077 (the user unit's), this device's published files are still 0644: sync tools carry a file's mode to other machines, where another user's syncd reads it; the store stays private"
    )
    func publishedFilesReadable() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let umask077 = ["/bin/sh", "-c", #"umask 077; exec "$0" "$@""#]
        let run = try workspace.run(
            ["put", "--type", "Note"] + workspace.location(), stdin: #"{"text": "a"}"#, prefix: umask077)
        #expect(run.status == 0, "\(run)")

        func mode(_ path: String) throws -> Int {
            try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
        }
        #expect(try mode(workspace.sharedPath("desk.json")) == 0o644)
        #expect(try mode(workspace.state()) == 0o700)
        #expect(try mode(workspace.state() + "/signing.key") == 0o600)
        #expect(try mode(workspace.state() + "/store.sqlite") & 0o077 == 0)
    }
}
