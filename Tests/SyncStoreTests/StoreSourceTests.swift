import SnapshotFormat
import SyncStore
import Testing

@Suite("Store: identity, sources and publications")
struct StoreSourceTests {
    @Test("A new store has no owner; claiming records it; a second claim is refused")
    func identity() throws {
        let store = try SyncStore()
        #expect(try store.reading { try $0.owner() } == nil)
        try store.transaction { try $0.claim(for: Sample.device("laptop"), at: Sample.now) }
        #expect(try store.reading { try $0.owner() } == Sample.device("laptop"))
        #expect(throws: (any Error).self) {
            try store.transaction { try $0.claim(for: Sample.device("phone"), at: Sample.now) }
        }
        #expect(try store.reading { try $0.owner() } == Sample.device("laptop"))
    }

    @Test("Source rows round-trip, list by name, and update in place")
    func sourcesRoundTrip() throws {
        let store = try SyncStore()
        var phone = Sample.source("phone.json", inode: 7, device: "phone", generation: 3)
        phone.lastMergedAt = Sample.now.milliseconds - 5
        phone.lastProblem = "1 record(s) rejected, first: record #2: type is missing"
        let copy = Sample.source("phone (1).json", inode: 8, device: "phone", generation: 2)
        let unreadable = Sample.source("broken.json", inode: 9)
        try store.transaction { session in
            for row in [phone, copy, unreadable] { try session.save(row) }
        }
        #expect(try store.reading { try $0.source(named: "phone.json") } == phone)
        #expect(try store.reading { try $0.source(named: "missing.json") } == nil)
        #expect(try store.reading { try $0.sources() } == [unreadable, copy, phone])
        // When a row is saved again with a new stat and generation
        var newer = phone
        newer.inode = 70
        newer.generation = 4
        newer.highestGeneration = 4
        newer.lastProblem = nil
        try store.transaction { try $0.save(newer) }
        // Then it replaces the old row
        #expect(try store.reading { try $0.source(named: "phone.json") } == newer)
        #expect(try store.reading { try $0.sources() }.count == 3)
        #expect(!newer.hasSameStat(as: phone))
        #expect(phone.hasSameStat(as: phone))
    }

    @Test("markAbsent marks every source not named as absent, and forgets none")
    func markAbsent() throws {
        let store = try SyncStore()
        try store.transaction { session in
            for (index, name) in ["a.json", "b.json", "c.json"].enumerated() {
                try session.save(Sample.source(name, inode: Int64(index)))
            }
            try session.markAbsent(except: ["b.json"])
        }
        let rows = try store.reading { try $0.sources() }
        #expect(rows.map(\.name) == ["a.json", "b.json", "c.json"])
        #expect(rows.map(\.present) == [false, true, false])
    }

    @Test("Publications: intents, completion, the latest of each, and forgetting an intent")
    func publications() throws {
        let store = try SyncStore()
        #expect(try store.reading { try $0.hasPublished() } == false)
        #expect(try store.reading { try $0.latestPublication() } == nil)
        func publication(_ generation: Int64) -> StoredPublication {
            StoredPublication(
                generation: generation, contentDigest: "content\(generation)", fileDigest: "file\(generation)",
                writtenAt: Sample.now.milliseconds + generation, isPublished: false)
        }
        // Given generation 1 published and 2 only intended
        try store.transaction { session in
            try session.recordIntent(publication(1))
            try session.markPublished(generation: 1)
            try session.recordIntent(publication(2))
        }
        var published = publication(1)
        published.isPublished = true
        #expect(try store.reading { try $0.hasPublished() })
        #expect(try store.reading { try $0.latestPublication() } == publication(2))
        #expect(try store.reading { try $0.latestCompletedPublication() } == published)
        #expect(try store.reading { try $0.publication(generation: 1) } == published)
        #expect(try store.reading { try $0.publication(generation: 3) } == nil)
        // When the intent of 2 is forgotten
        try store.transaction { try $0.forgetIntent(generation: 2) }
        #expect(try store.reading { try $0.latestPublication() } == published)
        // And 10 is published later
        try store.transaction { session in
            try session.recordIntent(publication(10))
            try session.markPublished(generation: 10)
        }
        #expect(try store.reading { try $0.latestCompletedPublication() }?.generation == 10)
    }
}
