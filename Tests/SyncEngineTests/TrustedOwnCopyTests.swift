import Foundation
import SnapshotFormat
import SyncEngine
import Testing

/// This device's own files while it trusts keys: a file it wrote stays its own after its key changes.
@Suite("Own files under trust")
struct TrustedOwnCopyTests {
    @Test(
        "a sync tool's copy of a file this device signed with its earlier key merges, whatever copy name the tool gives it, with no impostor warning"
    )
    func copyOfOwnFileSignedWithEarlierKey() throws {
        // Given desk, which trusts phone, has published a record, and then made a new key
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let desk = try sandbox.device("desk")
        let phone = try sandbox.device("phone", state: sandbox.state("phone"))
        try desk.trust(phone.key.publicKey, for: DeviceID("phone")!)
        _ = try desk.put(id: Wire.id(1), type: "Note", fields: Wire.object(#"{"text":"one"}"#), schemaVersion: nil)
        let signedWithEarlierKey = try sandbox.read("desk.json")
        _ = try desk.rotateKey()

        for name in ["desk.sync-conflict-20261125-100000-ABCDEFG.json", "desk (1).json", "desk_conflict-20261125.json"]
        {
            // When a sync tool brings back a copy of desk's earlier file under one of the copy names
            // the format allows, alone in the pass that reads it
            try sandbox.write(name, signedWithEarlierKey)
            let report = try desk.merge()

            // Then desk merges it as its own earlier file: not rejected, no impostor warning
            #expect(report.source(name)?.status == .merged, "\(name): \(String(describing: report.source(name)))")
            #expect(try desk.status().rejectedForTrust.isEmpty, "\(name)")
            let said = [report.source(name)?.reason, report.source(name)?.warning].compactMap { $0 } + report.warnings
            #expect(!said.contains { $0.contains("ANOTHER DEVICE") }, "\(name): \(said)")
            try FileManager.default.removeItem(atPath: sandbox.sharedPath(name))
            _ = try desk.merge()
        }
    }
}
