import Foundation
import SnapshotFormat
import Testing

extension DaemonTests {
    @Test(
        "syncctl put on the state directory of a running syncd publishes the edit itself, and syncd leaves the file alone afterwards"
    )
    func putBesideDaemon() throws {
        // Given a running syncd
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let daemon = try Daemon("desk", in: sandbox)
        defer { daemon.stop() }
        try daemon.waitUntilReady()
        let before = try #require(Snapshots.published(sandbox.read("desk.json")))

        // When syncctl puts a record on the same state directory
        let put = try sandbox.syncctl(
            ["put", "--type", "Note", "--id", Snapshots.id(7)] + sandbox.location("desk"),
            stdin: #"{"text": "by syncctl"}"#)
        try #require(put.status == 0, "\(put)")

        // Then the file holds it as soon as syncctl returns, at a higher generation
        let after = try #require(Snapshots.published(sandbox.read("desk.json")))
        #expect(after.generation > before.generation)
        #expect(after.records.map(Snapshots.recordID) == [Snapshots.id(7)])
        // And syncd, which sees the store change, does not publish it again
        let settled = fingerprint(of: sandbox.shared)
        usleep(1_000_000)
        #expect(fingerprint(of: sandbox.shared) == settled, "\(daemon.log)")
        #expect(Snapshots.published(sandbox.read("desk.json"))?.generation == after.generation)
    }

    @Test(
        "a change written to the store by another process that does not publish (an app, here sqlite3) is noticed and published by syncd"
    )
    func storeChangedByAnotherProcess() throws {
        // Given a running syncd whose store holds one record, published
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let daemon = try Daemon("desk", in: sandbox)
        defer { daemon.stop() }
        try daemon.waitUntilReady()
        let put = try sandbox.syncctl(
            ["put", "--type", "Note", "--id", Snapshots.id(3)] + sandbox.location("desk"), stdin: #"{"text": "before"}"#
        )
        try #require(put.status == 0, "\(put)")
        let before = try #require(Snapshots.published(sandbox.read("desk.json")))
        usleep(500_000)

        // When another process changes the record's fields in the store, without publishing (it
        // rewrites the record's stored line, which holds the record since migration v5)
        let sql = """
            .timeout 30000
            UPDATE record SET line = CAST(replace(CAST(line AS TEXT), '"before"', '"changed by an app"') AS BLOB)
            WHERE id = '\(Snapshots.id(3))';
            """
        let update = try sandbox.launch("/usr/bin/sqlite3", [sandbox.state("desk") + "/store.sqlite"], stdin: sql).wait(
            timeout: 60)
        try #require(update.status == 0 && update.stderr.isEmpty, "\(update)")

        // Then syncd notices and publishes the changed content at a higher generation
        var fields: JSONValue?
        let published = eventually(within: 10) {
            guard let file = Snapshots.published(sandbox.read("desk.json")), file.generation > before.generation,
                case .object(let record)? = file.records.first
            else { return false }
            fields = record["fields"]
            return true
        }
        #expect(published, "desk.json was not republished:\n\(daemon.log)")
        #expect(fields == .object(JSONObject([("text", .string("changed by an app"))])))
    }
}

extension DaemonTests {
    @Test(
        "syncd says at the default level when records newly come into conflict, and at debug names each file a pass read and published"
    )
    func conflictsAndFilesLogged() throws {
        // Given syncd at the default level, and another at debug
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let quiet = try Daemon("desk", in: sandbox, logLevel: nil)
        defer { quiet.stop() }
        let chatty = try Daemon("tablet", in: sandbox, logLevel: "debug")
        defer { chatty.stop() }
        try quiet.waitUntilReady()
        try chatty.waitUntilReady()

        // When phone and laptop each write their own version of one record, neither seeing the other's
        let id = Snapshots.id(3)
        try sandbox.publish("phone.json", Snapshots.file("phone", records: [(id, Snapshots.fields("phone's"))]))
        try sandbox.publish("laptop.json", Snapshots.file("laptop", records: [(id, Snapshots.fields("laptop's"))]))

        // Then both say the record is in conflict, and how to settle it
        let said = eventually(within: 30) {
            [quiet, chatty].allSatisfy { $0.log.contains("records newly in conflict: syncctl conflicts shows them") }
        }
        #expect(said, "\(quiet.log)\n\(chatty.log)")
        #expect(quiet.log.contains("merge.newConflicts=1"), "\(quiet.log)")
        // And at debug, the files read and published are named; at the default level, they are not
        #expect(chatty.log.contains("read file=phone.json") && chatty.log.contains("read file=laptop.json"), "\(chatty.log)")
        #expect(chatty.log.contains("published file=tablet.json"), "\(chatty.log)")
        #expect(!quiet.log.contains("read file="), "\(quiet.log)")
    }
}
