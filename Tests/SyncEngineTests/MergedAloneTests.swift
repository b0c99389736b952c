import Dispatch
import Foundation
import SyncStore
import Synchronization
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

@Suite("a first merge's rounds, produced ahead of their consumers by a bounded window")
struct BoundedMergedAloneTests {
    /// One record per chunk, chunk `n` holding record `n`.
    static func record(_ n: Int) -> MergedAlone.Merged {
        let record = ReadOnly.Record(version: Wire.version(n, by: "laptop"))
        return (record, StoredLine(of: record))
    }

    @Test("no chunk is produced more than the window ahead of the chunks both consumers went through")
    func staysWithinTheWindow() {
        let window = 3
        let consumed = Mutex(0)
        let furthestAhead = Mutex(0)
        let merged = MergedAlone(chunkCount: 60, releasing: (consumers: 2, window: window)) { chunk in
            furthestAhead.withLock { $0 = max($0, chunk - consumed.withLock { $0 }) }
            return [Self.record(chunk)]
        }
        // A slow consumer, and a second that counts a chunk as gone through once both did.
        let slowDone = DispatchSemaphore(value: 0)
        Thread {
            merged.forEach { _ in usleep(2000) }
            slowDone.signal()
        }.start()
        var ids: [RecordID] = []
        merged.forEach { record, _ in
            ids.append(record.id)
            consumed.withLock { $0 = ids.count - 1 }
        }
        slowDone.wait()
        merged.waitUntilDone()
        #expect(ids == (0..<60).map { Wire.id($0) })
        // The slow consumer holds the window back: production never ran far ahead of this one's count.
        #expect(furthestAhead.withLock { $0 } <= window + 1)
        #expect(merged.failure == nil)
    }

    @Test("a chunk that fails stops the chunks after it, and the failure is kept")
    func failureStops() {
        struct Broken: Error {}
        let merged = MergedAlone(chunkCount: 40, releasing: (consumers: 1, window: 2)) { chunk in
            if chunk == 5 { throw Broken() }
            return [Self.record(chunk)]
        }
        var count = 0
        merged.forEach { _ in count += 1 }
        merged.waitUntilDone()
        #expect(count <= 6)
        #expect(merged.failure is Broken)
    }
}
