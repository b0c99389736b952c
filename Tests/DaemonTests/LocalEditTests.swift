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
