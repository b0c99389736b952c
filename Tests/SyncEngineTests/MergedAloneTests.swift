import Dispatch
import SnapshotFormat
@testable import SyncEngine
import Testing

@Suite("a cold merge's records, merged in the background chunk by chunk")
struct MergedAloneTests {
    /// 5,000 records, each with two versions (from two devices, the second one newer).
    static func incoming() -> IncomingVersions {
        var incoming = IncomingVersions()
        incoming.add((0..<5000).map { Wire.version($0, by: "laptop") })
        incoming.add((0..<5000).reversed().map { Wire.version($0, by: "phone", vector: ["laptop": 1, "phone": 1], at: 10) })
        return incoming
    }

    @Test("every record comes out once, in id order, merged from all its versions")
    func merges() {
        let merged = MergedAlone(Self.incoming())
        var ids: [RecordID] = []
        merged.forEach { record, line in
            ids.append(record.id)
            #expect(record.version.modifiedBy == DeviceID("phone"))
            #expect(line.line == record.interchangeLine)
        }
        merged.waitUntilDone()
        #expect(ids.count == 5000)
        #expect(ids == ids.sorted())
    }

    @Test("cancelled before it starts, it merges nothing, and whoever waits for it is not kept waiting")
    func cancels() {
        let held = DispatchQueue(label: "held back")
        held.suspend()
        let merged = MergedAlone(Self.incoming(), on: held)
        #expect(merged.chunkCount > 1)
        merged.cancel()
        held.resume()
        var count = 0
        merged.forEach { _ in count += 1 }
        merged.waitUntilDone()
        #expect(count == 0)
    }
}
