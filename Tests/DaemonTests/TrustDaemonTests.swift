import Foundation
import SnapshotFormat
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension DaemonTests {
    /// Makes every device of `devices` trust every other one's key (`syncctl key`, `syncctl trust`);
    /// each device's key, by device.
    @discardableResult
    static func trustEachOther(_ devices: [SyncctlDevice]) throws -> [String: String] {
        let keys = try Dictionary(uniqueKeysWithValues: devices.map { ($0.device, try $0.key()) })
        for device in devices {
            for other in devices where other.device != device.device {
                try device.trust(other.device, keys[other.device]!)
            }
        }
        return keys
    }

    @Test(
        "two syncd run with one device ID and trust on: each rejects the other's files as an impostor's, says so, and slows down instead of publishing over them at every pass"
    )
    func twinsSlowDown() throws {
        // Given two state directories of "laptop" (two machines given one ID), both trusting phone
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let phoneKey = try SyncctlDevice("phone", in: sandbox).key()
        let states = [sandbox.state("twin-a"), sandbox.state("twin-b")]
        for state in states {
            let trusted = try sandbox.syncctl(["trust", "phone", phoneKey] + sandbox.location("laptop", state: state))
            try #require(trusted.status == 0, "\(trusted)")
        }

        // When a syncd runs on each
        let twins = try states.map { try Daemon("laptop", in: sandbox, state: $0) }
        defer { for twin in twins { twin.stop() } }
        for twin in twins { try twin.waitUntilReady() }

        // Then each says another device writes under its ID, and waits before publishing again
        let warned = eventually(within: 60) {
            twins.allSatisfy { $0.log.contains("waiting before publishing over them again") }
        }
        #expect(warned, "\(twins.map(\.log))")
        // And from then on passes come seconds apart, not one per file the other writes (17 a
        // second each without the wait): over 4 s, a handful at most
        let before = twins.map { $0.log.components(separatedBy: "merge pass done").count }
        usleep(4_000_000)
        let after = twins.map { $0.log.components(separatedBy: "merge pass done").count }
        for (twin, (was, now)) in zip(twins, zip(before, after)) {
            #expect(now - was <= 6, "\(now - was) passes in 4 s\n\(twin.log)")
        }
        for twin in twins { #expect(twin.stop() == 0, "\(twin.log)") }
    }

    @Test(
        "syncd picks up a trust change without a restart: files of trusted devices merge, an untrusted device's and an unsigned copy are rejected as a whole, an untrusted device's new files stop merging and merge once it is trusted again"
    )
    func trustChangeWithoutRestart() throws {
        // Given a running syncd for desk, and three devices of the folder driven by syncctl: phone
        // and laptop, and mallory, which no one trusts
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let daemon = try Daemon("desk", in: sandbox)
        defer { daemon.stop() }
        try daemon.waitUntilReady()
        let desk = SyncctlDevice("desk", in: sandbox)
        let phone = SyncctlDevice("phone", in: sandbox)
        let laptop = SyncctlDevice("laptop", in: sandbox)
        let mallory = SyncctlDevice("mallory", in: sandbox)

        // When desk, phone and laptop trust each other's keys (desk's while its syncd runs): phone
        // and laptop check too, or their files would carry mallory's records to desk (a signature
        // vouches for a file's publisher, not for each version's maker)
        let keys = try Self.trustEachOther([desk, phone, laptop])
        // Then desk's status lists the three keys
        #expect(try desk.trustStatus().trusted == keys)

        // When mallory publishes a record signed with its own key, a copy of phone's file that no
        // one signed appears, phone puts a record, and last laptop puts one: laptop's file is read
        // by a pass that lists the folder after every other file was written
        let ids = (
            malloryOwn: Snapshots.id(1), unsigned: Snapshots.id(2), phone: Snapshots.id(3), laptop: Snapshots.id(4)
        )
        try mallory.put(ids.malloryOwn, "by mallory")
        let unsignedCopy = "phone.sync-conflict-20261125-100000-UNSIGND.json"
        try sandbox.publish(
            unsignedCopy, Snapshots.file("phone", generation: 9, records: [(ids.unsigned, Snapshots.fields("forged"))]))
        try phone.put(ids.phone, "by phone")
        try laptop.put(ids.laptop, "by laptop")

        // Then desk's syncd merges phone's and laptop's records
        let merged = try eventually(within: 30, every: 0.1) { try desk.holds(ids.phone) && desk.holds(ids.laptop) }
        #expect(merged, "\(desk.trustReport)\n\(daemon.log)")
        // And rejects mallory's file and the unsigned copy as a whole, saying why: their records never reach its store
        #expect(try !desk.holds(ids.malloryOwn))
        #expect(try !desk.holds(ids.unsigned))
        var status = try desk.trustStatus()
        #expect(status.rejectedForTrust == ["mallory.json", unsignedCopy], "\(status)")
        #expect(status.sources["mallory.json"]?.isUntrusted == true, "\(status)")
        #expect(status.problem("mallory.json").contains("device mallory is not trusted"), "\(status)")
        #expect(status.problem("mallory.json").contains(try mallory.key()), "\(status)")
        #expect(status.problem(unsignedCopy).contains("not signed"), "\(status)")

        // When phone is lost: desk (while its syncd runs) and laptop stop trusting it (laptop too,
        // or its file would carry phone's records); then phone puts a record, and last laptop puts one
        try desk.untrust("phone")
        try laptop.untrust("phone")
        let later = (phone: Snapshots.id(5), laptop: Snapshots.id(6))
        try phone.put(later.phone, "by the lost phone")
        try laptop.put(later.laptop, "by laptop, later")

        // Then desk's syncd merges laptop's new record but not phone's: phone's file is rejected as a whole
        #expect(try eventually(within: 30, every: 0.1) { try desk.holds(later.laptop) }, "\(daemon.log)")
        #expect(try !desk.holds(later.phone))
        status = try desk.trustStatus()
        #expect(status.trusted.keys.sorted() == ["desk", "laptop"], "\(status)")
        #expect(status.rejectedForTrust == ["mallory.json", "phone.json", unsignedCopy], "\(status)")
        #expect(status.problem("phone.json").contains("device phone is not trusted"), "\(status)")
        // And what phone gave before stays
        #expect(try desk.holds(ids.phone))

        // When desk trusts phone's key again, while its syncd runs and no file changes
        let folderBefore = fingerprint(of: sandbox.shared).filter { $0.key != "desk.json" }
        try desk.trust("phone", keys["phone"]!)

        // Then desk's syncd reads phone's unchanged file again and merges its record
        let retrusted = try eventually(within: 30, every: 0.1) { try desk.holds(later.phone) }
        #expect(retrusted, "\(desk.trustReport)\n\(daemon.log)")
        status = try desk.trustStatus()
        #expect(status.rejectedForTrust == ["mallory.json", unsignedCopy], "\(status)")
        #expect(fingerprint(of: sandbox.shared).filter { $0.key != "desk.json" } == folderBefore)
        // And mallory's record never reached it
        #expect(try !desk.holds(ids.malloryOwn))
        #expect(try !desk.holds(ids.unsigned))

        // When syncd stops and syncctl merges desk's folder once more, every file read again
        #expect(daemon.stop() == 0, "\(daemon.log)")
        let merge = try desk.syncctl(["merge", "--reread"])
        // Then it reports the rejected files with exit code 3, and still merges nothing of theirs
        #expect(merge.status == 3, "\(merge)")
        #expect(try !desk.holds(ids.malloryOwn))
    }

    @Test(
        "a key rotated by syncctl on a peer whose syncd runs: desk's running syncd rejects the peer's files until it trusts the new key, then merges them, and the peer's syncd signs what it publishes next with the new key"
    )
    func rotatedKeyWithoutRestart() throws {
        // Given running syncd for desk and phone, which trust each other's keys, and a record of
        // phone that desk merged
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let deskDaemon = try Daemon("desk", in: sandbox)
        defer { deskDaemon.stop() }
        let phoneDaemon = try Daemon("phone", in: sandbox)
        defer { phoneDaemon.stop() }
        try deskDaemon.waitUntilReady()
        try phoneDaemon.waitUntilReady()
        let logs = { "--- desk\n\(deskDaemon.log)\n--- phone\n\(phoneDaemon.log)" }
        let desk = SyncctlDevice("desk", in: sandbox)
        let phone = SyncctlDevice("phone", in: sandbox)
        let keys = try Self.trustEachOther([desk, phone])
        let ids = (before: Snapshots.id(1), after: Snapshots.id(2), fromDesk: Snapshots.id(3))
        try phone.put(ids.before, "signed with the first key")
        #expect(try eventually(within: 30, every: 0.1) { try desk.holds(ids.before) }, "\(logs())")

        // When phone makes a new key and puts a record, while desk's syncd is held (SIGSTOP): every
        // phone.json that desk's syncd reads afterwards is signed with the new key and holds the record
        deskDaemon.launched.signal(SIGSTOP)
        let newKey: String
        do {
            defer { deskDaemon.launched.signal(SIGCONT) }
            newKey = try phone.rotateKey()
            try phone.put(ids.after, "signed with the new key")
        }
        #expect(newKey != keys["phone"])
        #expect(namedKey(sandbox.read("phone.json")) == newKey)

        // Then desk's syncd rejects phone's file, naming the new key, and does not merge the record
        let rejected = try eventually(within: 30, every: 0.1) {
            try desk.trustStatus().rejectedForTrust.contains("phone.json")
        }
        #expect(rejected, "\(desk.trustReport)\n\(logs())")
        var status = try desk.trustStatus()
        #expect(status.problem("phone.json").contains(newKey), "\(status)")
        #expect(try !desk.holds(ids.after))
        // And what phone's first key signed stays
        #expect(try desk.holds(ids.before))

        // When desk trusts phone's new key, while its syncd runs
        try desk.trust("phone", newKey)

        // Then desk's syncd reads phone's file again and merges the record
        #expect(try eventually(within: 30, every: 0.1) { try desk.holds(ids.after) }, "\(logs())")
        status = try desk.trustStatus()
        #expect(status.rejectedForTrust.isEmpty, "\(status)")
        #expect(status.trusted == ["desk": keys["desk"]!, "phone": newKey], "\(status)")

        // When desk puts a record, which phone's syncd merges and publishes again by itself
        let published = Snapshots.published(sandbox.read("phone.json"))?.generation ?? 0
        try desk.put(ids.fromDesk, "by desk")
        let republished = try eventually(within: 30, every: 0.1) {
            try phone.holds(ids.fromDesk)
                && (Snapshots.published(sandbox.read("phone.json"))?.generation ?? 0) > published
        }
        #expect(republished, "\(logs())")

        // Then phone's syncd signed it with the new key (it noticed the rotation), and desk's syncd
        // merges that file: its row reaches the file's generation, not rejected
        #expect(namedKey(sandbox.read("phone.json")) == newKey)
        var row: TrustStatus.Source?
        let accepted = try eventually(within: 30, every: 0.1) {
            let generation = Snapshots.published(sandbox.read("phone.json"))?.generation
            row = try desk.trustStatus().sources["phone.json"]
            return row?.generation == generation && row?.isUntrusted == false
        }
        #expect(accepted, "desk's row for phone.json: \(String(describing: row))\n\(logs())")
        #expect(try desk.trustStatus().rejectedForTrust.isEmpty)
        // And both daemons still run, and stop cleanly
        #expect(deskDaemon.stop() == 0, "\(deskDaemon.log)")
        #expect(phoneDaemon.stop() == 0, "\(phoneDaemon.log)")
    }
}
