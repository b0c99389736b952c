import Foundation
import SnapshotFormat
import SyncEngine
import Testing

/// Two machines misconfigured with one device ID, their folders kept in step by a sync tool:
/// loud warnings, nothing lost, and no endless rewriting of the shared file.
@Suite("Two devices with the same ID")
struct TwinDeviceTests {
    @Test(
        "twins that hold the same records, signed with one key (a cloned state directory), stop rewriting their file after one exchange; with two keys each publishes its own signed file again at each merge, as peers trusting one key need, warning each time",
        arguments: [true, false])
    func noPingPong(sharingKey: Bool) throws {
        // Given two folders (two machines) and two stores, both claiming device "twin"
        let first = try Sandbox()
        let second = try Sandbox()
        defer {
            first.remove()
            second.remove()
        }
        let one = try first.device("twin")
        if sharingKey {
            try FileManager.default.createDirectory(atPath: second.state(), withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: first.state() + "/signing.key", toPath: second.state() + "/signing.key")
        }
        let two = try second.device("twin")
        _ = try one.put(id: Wire.id(1), type: "Note", fields: Wire.object(#"{"text":"one"}"#), schemaVersion: nil)
        _ = try two.put(id: Wire.id(2), type: "Note", fields: Wire.object(#"{"text":"two"}"#), schemaVersion: nil)

        // When a sync tool copies twin.json back and forth, each side merging what arrives
        var generations: [Int64?] = []
        var warned: [String: Bool] = [:]
        for round in 0..<6 {
            let (from, to, device) = round % 2 == 0 ? (first, second, two) : (second, first, one)
            try to.write("twin.json", from.read("twin.json"))
            let report = try device.merge()
            generations.append(report.publishedGeneration)
            let name = round % 2 == 0 ? "two" : "one"
            warned[name] = (warned[name] ?? false) || report.warnings.contains { $0.contains("ANOTHER DEVICE") }
            // Each file in its folder is signed by the key of the device that merged last there
            let file = try SnapshotReader.read(bytes: try (round % 2 == 0 ? second : first).read("twin.json"), fileName: "twin.json")
            #expect(file.key == device.key.publicKey, "round \(round)")
        }

        // Then both hold both records, and after the first exchanges nobody rewrites the file when
        // both sign with one key; with two keys, each rewrites it at each merge
        #expect(Set(try one.records().map(\.id)) == [Wire.id(1), Wire.id(2)])
        #expect(Set(try two.records().map(\.id)) == [Wire.id(1), Wire.id(2)])
        if sharingKey {
            #expect(generations.suffix(3).allSatisfy { $0 == nil }, "published generations per round: \(generations)")
        } else {
            #expect(generations.allSatisfy { $0 != nil }, "published generations per round: \(generations)")
        }
        #expect(warned == ["one": true, "two": true])
    }
}
