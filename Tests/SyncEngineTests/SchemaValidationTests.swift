import Foundation
import SnapshotFormat
import SyncEngine
import Testing

/// Runtime schema files: versions of declared types that do not fit are not merged, before
/// anything is stored; undeclared types pass through untouched.
@Suite("Schema files in the merge and in local edits")
struct SchemaValidationTests {
    static let schema = #"""
        {"format": 1, "types": [{"type": "Note", "versions": [
            {"schemaVersion": 1, "fields": {"text": "string", "pinned": {"type": "boolean", "optional": true}}}]}]}
        """#

    func device(_ sandbox: Sandbox) throws -> SyncDevice {
        let schemaPath = sandbox.outside + "/note.schema.json"
        try Data(Self.schema.utf8).write(to: URL(fileURLWithPath: schemaPath))
        var settings = SyncSettings(sharedFolder: sandbox.shared, stateDirectory: sandbox.state(), device: DeviceID("desk"))
        settings.schemaFiles = [schemaPath]
        let clock = sandbox.clock
        return try SyncDevice(settings: settings, logger: quietLogger, clock: { clock.now })
    }

    @Test("a version that does not fit its schema is rejected with its id and rule; the rest merges")
    func incoming() throws {
        // Given phone's file with a fitting Note, a Note whose text is a number, and an undeclared type
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        try sandbox.write(
            "phone.json",
            Wire.snapshot(
                "phone", generation: 1,
                versions: [
                    Wire.version(1, by: "phone", fields: #"{"text": "milk"}"#),
                    Wire.version(2, by: "phone", fields: #"{"text": 42}"#),
                    Wire.version(3, by: "phone", type: "Undeclared", fields: #"{"anything": [1]}"#),
                ]))
        let desk = try device(sandbox)

        // When desk merges with the schema
        let report = try desk.merge()

        // Then the misfit is rejected alone, naming its id and the field, and nothing of it is stored
        let rejected = try #require(report.source("phone.json")?.rejectedRecords)
        #expect(rejected.count == 1)
        #expect(rejected.first?.contains(Wire.id(2).rawValue) == true)
        #expect(rejected.first?.contains("text") == true)
        #expect(report.hasRejections)
        #expect(Set(try desk.records().map(\.id)) == [Wire.id(1), Wire.id(3)])
        #expect(try desk.record(Wire.id(2)) == nil)
    }

    @Test("a local edit whose fields do not fit the schema is refused and nothing is published")
    func localEdit() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let desk = try device(sandbox)
        _ = try desk.put(id: Wire.id(1), type: "Note", fields: Wire.object(#"{"text": "ok"}"#), schemaVersion: 1)
        let published = try sandbox.read("desk.json")

        #expect(throws: EngineError.self) {
            _ = try desk.put(id: Wire.id(1), type: "Note", fields: Wire.object(#"{"pinned": "yes"}"#), schemaVersion: 1)
        }
        #expect(try desk.record(Wire.id(1))?.version.fields == Wire.object(#"{"text": "ok"}"#))
        #expect(try sandbox.read("desk.json") == published)
    }

    @Test("a schema file with an error stops the device from opening, naming the file")
    func badSchemaFile() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let path = sandbox.outside + "/broken.json"
        try Data(#"{"format": 1, "types": [{"type": "Note", "versions": [{"schemaVersion": 1, "fields": {"t": "text"}}]}]}"#.utf8)
            .write(to: URL(fileURLWithPath: path))
        var settings = SyncSettings(sharedFolder: sandbox.shared, stateDirectory: sandbox.state(), device: DeviceID("desk"))
        settings.schemaFiles = [path]
        #expect {
            _ = try SyncDevice(settings: settings, logger: quietLogger)
        } throws: { error in
            (error as? SettingsError).map { "\($0)".contains("broken.json") } ?? false
        }
    }

    @Test("a version newer than the schema files declare merges unchecked, and the report's warnings say so (merge's text output shows them)")
    func newerVersionNoted() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        var newer = Wire.version(1, by: "phone", fields: #"{"text": 7, "shape": "of version 3"}"#)
        newer.schemaVersion = 3
        try sandbox.write("phone.json", Wire.snapshot("phone", generation: 1, versions: [newer]))
        let report = try device(sandbox).merge()
        #expect(report.warnings.contains { $0.contains("phone.json") && $0.contains("newer than the schema files declare") }, "\(report.warnings)")
        #expect(!report.hasRejections)
    }

    @Test("a schema file reached through a symbolic link is read (a configuration file often is one)")
    func schemaThroughLink() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let target = sandbox.outside + "/note.schema.json"
        try Data(Self.schema.utf8).write(to: URL(fileURLWithPath: target))
        let link = sandbox.outside + "/linked.json"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        var settings = SyncSettings(sharedFolder: sandbox.shared, stateDirectory: sandbox.state(), device: DeviceID("desk"))
        settings.schemaFiles = [link]
        let desk = try SyncDevice(settings: settings, logger: quietLogger)
        #expect(throws: EngineError.self) {
            _ = try desk.put(id: Wire.id(1), type: "Note", fields: Wire.object(#"{"text": 5}"#), schemaVersion: 1)
        }
    }

    @Test("a new record put without a schema version is of the newest version the schema files declare for its type, and is checked against it; an existing record keeps its own")
    func putDefaultsToNewestDeclared() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let path = sandbox.outside + "/two.json"
        try Data(
            #"{"format": 1, "types": [{"type": "Note", "versions": [{"schemaVersion": 1, "fields": {"text": "string"}}, {"schemaVersion": 2, "fields": {"title": "string"}, "additionalFields": false}]}]}"#
                .utf8
        ).write(to: URL(fileURLWithPath: path))
        var settings = SyncSettings(sharedFolder: sandbox.shared, stateDirectory: sandbox.state(), device: DeviceID("desk"))
        settings.schemaFiles = [path]
        let desk = try SyncDevice(settings: settings, logger: quietLogger)
        #expect(throws: EngineError.self) {
            _ = try desk.put(id: nil, type: "Note", fields: Wire.object(#"{"text": "of version 1"}"#), schemaVersion: nil)
        }
        _ = try desk.put(id: Wire.id(1), type: "Note", fields: Wire.object(#"{"title": "v2"}"#), schemaVersion: nil)
        #expect(try desk.record(Wire.id(1))?.version.schemaVersion == 2)
        _ = try desk.put(id: Wire.id(2), type: "Note", fields: Wire.object(#"{"text": "v1"}"#), schemaVersion: 1)
        _ = try desk.put(id: Wire.id(2), type: "Note", fields: Wire.object(#"{"text": "still v1"}"#), schemaVersion: nil)
        #expect(try desk.record(Wire.id(2))?.version.schemaVersion == 1)
    }
}
