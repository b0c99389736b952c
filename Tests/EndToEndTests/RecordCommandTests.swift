import Foundation
import SnapshotFormat
import Testing

@Suite("syncctl: inspecting and editing records")
struct RecordCommandTests {
    /// A workspace whose folder desk has merged once.
    static func merged() throws -> Workspace {
        let workspace = try Workspace()
        try CommandFolder.fill(workspace)
        let run = try workspace.run(["merge"] + workspace.location())
        guard run.status == 0 else {
            workspace.remove()
            throw HarnessError("the first merge failed: \(run)")
        }
        return workspace
    }

    @Test("status, list, get, export and conflicts print what the store holds")
    func inspect() throws {
        let workspace = try Self.merged()
        defer { workspace.remove() }
        let location = workspace.location(device: nil)

        let status = try workspace.run(["status", "--json"] + location)
        #expect(status.status == 0, "\(status)")
        let report = try jsonObject(status.stdout)
        #expect(report["device"] == .string("desk") && report["publishedGeneration"] == .number(1))
        #expect(
            report["counts"]
                == .object(CommandFolder.object(#"{"live": 4, "deleted": 0, "inConflict": 2, "benignOnly": 0}"#)))
        guard case .array(let sources)? = report["sources"] else { throw HarnessError("no sources: \(status)") }
        let names = sources.compactMap { source -> JSONValue? in
            guard case .object(let object) = source else { return nil }
            return object["name"]
        }
        #expect(names == [.string("desk.json"), .string("laptop.json"), .string("phone.json")])
        let statusText = try workspace.run(["status"] + location)
        #expect(statusText.status == 0 && statusText.stdout.contains("4 live, 0 deleted, 2 in conflict"))

        let list = try workspace.run(["list", "--json"] + location)
        #expect(list.status == 0)
        let records = try jsonArray(list.stdout)
        #expect(records.count == 4)
        let published = try Files.published(try workspace.read("desk.json"), name: "desk.json")
        #expect(records == published.records)
        let listText = try workspace.run(["list"] + location)
        #expect(listText.stdout.split(separator: "\n").count == 4 && listText.stdout.contains("[1 conflict(s)]"))

        let get = try workspace.run(["get", Files.id(1).rawValue.lowercased()] + location)
        #expect(get.status == 0, "\(get)")
        let one = try jsonObject(get.stdout)
        #expect(one["id"] == .string(Files.id(1).rawValue))
        #expect(.object(one) == records[0])
        guard case .array(let conflicts)? = one["conflicts"] else { throw HarnessError("no conflicts in \(get)") }
        #expect(conflicts.count == 1)

        let export = try workspace.run(["export"] + location)
        #expect(export.status == 0)
        let document = try jsonObject(export.stdout)
        #expect(document["device"] == .string("desk"))
        guard case .array(let exported)? = document["records"] else { throw HarnessError("no records in \(export)") }
        #expect(exported.count == 4)
        guard case .object(let first)? = exported.first else { throw HarnessError("\(export)") }
        #expect(Set(first.keys) == ["id", "type", "schemaVersion", "lastModified", "modifiedBy", "fields"])
        #expect(first["fields"] == .object(CommandFolder.object(#"{"v": "laptop one"}"#)))

        let conflictsJSON = try workspace.run(["conflicts", "--json"] + location)
        #expect(try jsonArray(conflictsJSON.stdout).count == 2)
        let conflictsText = try workspace.run(["conflicts"] + location)
        #expect(conflictsText.stdout.contains("resolve with: syncctl resolve \(Files.id(1).rawValue) --seen "))
        #expect(conflictsText.stdout.contains("phone one") && conflictsText.stdout.contains("laptop one"))
    }

    @Test(
        "export and list --json print exactly RFC 8785, written out a piece at a time: 3,000 records of nested, escaped fields (over a megabyte), and an empty store"
    )
    func streamedOutput() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let location = workspace.location()
        // Given an empty store
        #expect(try workspace.run(["merge"] + location).status == 0)
        #expect(try workspace.run(["export"] + location).stdout == #"{"device":"desk","records":[]}"# + "\n")
        #expect(try workspace.run(["list", "--json"] + location).stdout == "[]\n")
        #expect(try workspace.run(["list"] + location).stdout == "No records.\n")
        // And then 3,000 records (every tenth a tombstone, some without a time or a device)
        var versions: [ReadOnly.Version] = []
        for n in 0..<3000 {
            var fields = CommandFolder.object(
                #"{"note": "Crème brûlée \"quoted\" \\ tab\t 🍅 ☕", "nested": {"z": [1, 2.5, -0.001, 1e-7, {"b": null, "a": true}], "a": "x"}}"#
            )
            fields["text"] = .string(String(repeating: "lorem ipsum ", count: 40) + "\(n)")
            var version = Files.version(
                n, by: n % 2 == 0 ? "laptop" : "phone", at: Int64(n), fields: fields, deleted: n % 10 == 0)
            if n % 7 == 0 { version.lastModified = nil }
            if n % 11 == 0 { version.modifiedBy = nil }
            versions.append(version)
        }
        try workspace.write("laptop.json", Files.snapshot("laptop", generation: 1, versions: versions))
        #expect(try workspace.run(["merge"] + location).status == 0)

        // When every record is exported and listed
        let export = try workspace.run(["export"] + location)
        let list = try workspace.run(["list", "--json", "--deleted"] + location)

        // Then each output is more than a megabyte, and is its own RFC 8785 serialization, byte for byte
        for run in [export, list] {
            #expect(run.status == 0, "\(run.stderr)")
            #expect(run.stdout.utf8.count > 1 << 20)
            #expect(try StrictJSON.parse(Array(run.stdout.utf8)).interchangeString + "\n" == run.stdout)
        }
        // And export holds every live record in id order, its fields as put, nothing else
        let document = try jsonObject(export.stdout)
        guard case .array(let exported)? = document["records"] else { throw HarnessError("no records in export") }
        let live = versions.filter { !$0.deleted }
        #expect(exported.count == live.count)
        for (value, version) in zip(exported, live) {
            guard case .object(let object) = value else { throw HarnessError("not an object: \(value)") }
            #expect(object["id"] == .string(version.id.rawValue))
            #expect(object["fields"] == .object(version.fields))
            #expect(object["lastModified"] == (version.lastModified.map { .string($0.written) } ?? .null))
            #expect(object["modifiedBy"] == (version.modifiedBy.map { .string($0.rawValue) } ?? .null))
        }
        // And list --json holds every record, tombstones too, as this device publishes them
        #expect(try jsonArray(list.stdout) == (try Files.published(in: workspace.shared, device: "desk").records))
    }

    @Test("list's type column is as wide as the longest type, so every line's columns line up")
    func listColumns() throws {
        let workspace = try Self.merged()
        defer { workspace.remove() }
        let location = workspace.location(device: nil)
        let put = try workspace.run(["put", "--type", "org.example.shopping.ListItem"] + location, stdin: #"{"name": "Tea"}"#)
        #expect(put.status == 0, "\(put)")
        let lines = try workspace.run(["list"] + location).stdout.split(separator: "\n")
        #expect(lines.count > 1 && lines.contains { $0.contains("org.example.shopping.ListItem ") }, "\(lines)")
        // (the time stamp, "20…" after the id and the type, starts at the same column on every line)
        let columns = Set(lines.map { line in
            let afterID = line.dropFirst(38)
            return afterID.firstRange(of: " 20").map { afterID.distance(from: afterID.startIndex, to: $0.lowerBound) } ?? -1
        })
        #expect(columns == [29], "\(lines)")
    }

    @Test("put from stdin prints the id and publishes; put from a file edits; delete writes a tombstone")
    func putAndDelete() throws {
        let workspace = try Self.merged()
        defer { workspace.remove() }
        let location = workspace.location(device: nil)
        // When a record is put from standard input
        let put = try workspace.run(
            ["put", "--type", "ShoppingItem"] + location, stdin: #"{"name": "Bananas", "amount": "6"}"#)
        #expect(put.status == 0, "\(put)")
        let id = put.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(RecordID(id)?.rawValue == id, "put did not print the id alone: \(put)")
        // Then desk.json is republished holding it
        var published = try Files.published(try workspace.read("desk.json"), name: "desk.json")
        #expect(published.reading.generation == 2)
        let version = try #require(published.reading.versions.first { $0.id.rawValue == id })
        #expect(version.type == "ShoppingItem" && version.fields["name"] == .string("Bananas"))
        #expect(
            version.versionVector == VersionVector([DeviceID("desk")!: 1]) && version.modifiedBy == DeviceID("desk"))

        // When it is edited from a file with --id
        let file = workspace.path("fields.json")
        try Data(#"{"name": "Apples"}"#.utf8).write(to: URL(fileURLWithPath: file))
        let edit = try workspace.run(["put", "--type", "ShoppingItem", "--id", id, file] + location)
        #expect(edit.status == 0 && edit.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == id, "\(edit)")
        let get = try jsonObject(try workspace.run(["get", id] + location).stdout)
        #expect(get["fields"] == .object(CommandFolder.object(#"{"name": "Apples"}"#)))
        #expect(get["versionVector"] == .object(CommandFolder.object(#"{"desk": 2}"#)))

        // When it is edited with --json
        let report = try jsonObject(
            try workspace.run(["put", "--json", "--type", "ShoppingItem", "--id", id] + location, stdin: #"{"name": "Pears"}"#)
                .stdout)
        // Then the report holds the new version as an object, and as RFC 8785 text for older scripts
        guard case .object(let record)? = report["record"], case .string(let text)? = report["version"] else {
            Issue.record("no record object and version text in the put report: \(report)")
            return
        }
        #expect(try StrictJSON.parse(text) == .object(record))
        #expect(record["fields"] == .object(CommandFolder.object(#"{"name": "Pears"}"#)))
        #expect(record["versionVector"] == .object(CommandFolder.object(#"{"desk": 3}"#)))
        #expect(report["id"] == .string(id))

        // When it is deleted
        let delete = try workspace.run(["delete", id] + location)
        #expect(delete.status == 0, "\(delete)")
        published = try Files.published(try workspace.read("desk.json"), name: "desk.json")
        #expect(published.reading.generation == 5)
        #expect(published.reading.versions.first { $0.id.rawValue == id }?.deleted == true)
        // Then list and export leave it out, list --deleted shows it
        #expect(try jsonArray(try workspace.run(["list", "--json"] + location).stdout).count == 4)
        let all = try jsonArray(try workspace.run(["list", "--json", "--deleted"] + location).stdout)
        #expect(all.count == 5)
        let export = try jsonObject(try workspace.run(["export"] + location).stdout)
        if case .array(let records)? = export["records"] {
            #expect(records.count == 4)
        } else {
            Issue.record("no records in export")
        }
        #expect(!(try workspace.run(["export"] + location).stdout.contains(id)))
        #expect(
            try workspace.run(["list", "--type", "ShoppingItem"] + location).stdout.contains(
                "No records of type ShoppingItem"))
    }

    @Test(
        "resolve --take 1 and resolve --from phone clear conflicts with the chosen content; --device names this device, as everywhere"
    )
    func resolve() throws {
        let workspace = try Self.merged()
        defer { workspace.remove() }
        let location = workspace.location(device: nil)
        // Record 1: laptop's version is current, phone's is conflict 1
        let take = try workspace.run(["resolve", Files.id(1).rawValue, "--take", "1"] + location)
        #expect(take.status == 0, "\(take)")
        let one = try jsonObject(try workspace.run(["get", Files.id(1).rawValue] + location).stdout)
        #expect(one["fields"] == .object(CommandFolder.object(#"{"v": "phone one"}"#)) && one["conflicts"] == nil)
        #expect(one["versionVector"] == .object(CommandFolder.object(#"{"desk": 1, "laptop": 1, "phone": 1}"#)))
        // Record 4: by the device that made the version, with this device named by --device as in every subcommand
        let byDevice = try workspace.run(["resolve", Files.id(4).rawValue, "--from", "phone"] + workspace.location())
        #expect(byDevice.status == 0, "\(byDevice)")
        let four = try jsonObject(try workspace.run(["get", Files.id(4).rawValue] + location).stdout)
        #expect(four["fields"] == .object(CommandFolder.object(#"{"v": "phone four"}"#)) && four["conflicts"] == nil)
        #expect(four["modifiedBy"] == .string("desk"))
        // Then no conflict is left, here or in the published file
        #expect(try jsonArray(try workspace.run(["conflicts", "--json"] + location).stdout).isEmpty)
        #expect(try workspace.run(["conflicts"] + location).stdout.contains("No conflicts."))
        let published = try Files.published(try workspace.read("desk.json"), name: "desk.json")
        #expect(published.reading.generation == 3 && published.reading.versions.count == 4)
        // And resolving again has nothing to resolve
        let again = try workspace.run(["resolve", Files.id(4).rawValue, "--take", "0"] + location)
        #expect(again.status == 65 && again.stderr.contains("no conflicts"), "\(again)")
    }

    @Test(
        "resolve resolves only a record still as seen: by number it refuses when its own merge brought a version, with --seen when syncd merged one before it ran; by tag it keeps the version chosen and names what it superseded"
    )
    func resolveWhileVersionsArrive() throws {
        let workspace = try Self.merged()
        defer { workspace.remove() }
        let location = workspace.location(device: nil)
        let id = Files.id(1).rawValue
        // Given record 1 as conflicts shows it: laptop's version current, phone's as [1], with
        // their tags, the record's tag, and a hint that names it
        let phone = Files.version(1, by: "phone", at: 10, fields: CommandFolder.object(#"{"v": "phone one"}"#))
        let laptop = Files.version(1, by: "laptop", at: 20, fields: CommandFolder.object(#"{"v": "laptop one"}"#))
        let shown = try workspace.run(["conflicts"] + location)
        #expect(shown.stdout.contains("[1] phone") && shown.stdout.contains("tag \(phone.tag)"), "\(shown)")
        #expect(shown.stdout.contains("tag \(laptop.tag)  current"), "\(shown)")
        let recordTag = try #require(
            shown.stdout.split(separator: "\n").first { $0.hasPrefix(id) }?.split(separator: " ").last.map(String.init))
        #expect(shown.stdout.contains("resolve with: syncctl resolve \(id) --seen \(recordTag) --take TAG"), "\(shown)")
        // When tablet's concurrent edit of it, newer than both, lands in the folder (with a record
        // desk never held), before the person resolves
        let tablet = Files.version(1, by: "tablet", at: 30, fields: CommandFolder.object(#"{"v": "tablet one"}"#))
        let arriving = Files.version(9, by: "tablet", at: 30, fields: CommandFolder.object(#"{"v": "new"}"#))
        try workspace.write("tablet.json", Files.snapshot("tablet", generation: 1, versions: [tablet, arriving]))
        let generation = try Files.published(try workspace.read("desk.json"), name: "desk.json").reading.generation

        // Then resolve --take 1 (phone's, as shown; laptop's once tablet's is current) resolves nothing and says why
        let byNumber = try workspace.run(["resolve", id, "--take", "1"] + location)
        #expect(byNumber.status == 65 && byNumber.stderr.contains("changed as this command merged"), "\(byNumber)")
        // And it kept its merge: conflicts now shows tablet's version too, and desk published it
        let again = try workspace.run(["conflicts"] + location)
        #expect(
            again.stdout.contains("tag \(tablet.tag)  current") && again.stdout.contains("tag \(phone.tag)"), "\(again)"
        )
        #expect(
            try Files.published(try workspace.read("desk.json"), name: "desk.json").reading.generation == generation + 1
        )
        // And with the record's tag as first seen (as when syncd merged tablet's version before
        // resolve started), even phone's version by its tag is not taken: tablet's was never seen
        let stale = try workspace.run(["resolve", id, "--seen", recordTag, "--take", phone.tag] + location)
        #expect(
            stale.status == 65 && stale.stderr.contains("not as seen: its tag is")
                && stale.stderr.contains("not \(recordTag)"), "\(stale)")
        // And with the tag seen now, phone's content is kept, what was kept and superseded named
        let current = try #require(
            again.stdout.split(separator: "\n").first { $0.hasPrefix(id) }?.split(separator: " ").last.map(String.init))
        let byTag = try workspace.run(
            ["resolve", id, "--seen", current.uppercased(), "--take", phone.tag.uppercased()] + location)
        #expect(byTag.status == 0, "\(byTag)")
        let one = try jsonObject(try workspace.run(["get", id] + location).stdout)
        #expect(one["fields"] == .object(CommandFolder.object(#"{"v": "phone one"}"#)) && one["conflicts"] == nil)
        #expect(byTag.stderr.contains("kept the content of phone's version"), "\(byTag)")
        #expect(
            byTag.stderr.contains("superseded tablet's version")
                && byTag.stderr.contains("superseded laptop's version"), "\(byTag)")
        // And the same command run again says the record was resolved already, not that it changed
        let twice = try workspace.run(["resolve", id, "--seen", current, "--take", phone.tag] + location)
        #expect(
            twice.status == 65 && twice.stderr.contains("resolved already") && !twice.stderr.contains("changed as"),
            "\(twice)")
        // And a tag no version has any more is refused, even one of 8 decimal digits (not a number)
        let gone = try workspace.run(["resolve", Files.id(4).rawValue, "--take", laptop.tag] + location)
        #expect(gone.status == 65 && gone.stderr.contains("no version tagged"), "\(gone)")
        let digits = try workspace.run(["resolve", Files.id(4).rawValue, "--take", "00000001"] + location)
        #expect(digits.status == 65 && digits.stderr.contains("no version tagged 00000001"), "\(digits)")
        // And a record desk did not hold when resolve started is not resolved blindly
        let unseen = Files.id(8).rawValue
        let otherVersion = Files.version(8, by: "phone", at: 40, fields: CommandFolder.object(#"{"v": "p"}"#))
        let concurrent = Files.version(8, by: "tablet", at: 41, fields: CommandFolder.object(#"{"v": "t"}"#))
        try workspace.write(
            "tablet.json", Files.snapshot("tablet", generation: 2, versions: [tablet, arriving, concurrent]))
        try workspace.write("phone.json", Files.snapshot("phone", generation: 3, versions: [phone, otherVersion]))
        let blind = try workspace.run(["resolve", unseen, "--take", "1"] + location)
        #expect(blind.status == 65 && blind.stderr.contains("changed as this command merged"), "\(blind)")
        // And schema versions no reader accepts are refused before anything is opened (exit 64)
        for arguments in [
            ["delete", id, "--schema-version", "0"], ["delete", id, "--schema-version", "9007199254740992"],
            ["resolve", Files.id(4).rawValue, "--take", "1", "--schema-version", "2"],
            // (a negative number is the option's value, refused as such, not taken for an option)
            ["delete", id, "--schema-version", "-1"],
        ] {
            let refused = try workspace.run(arguments + location)
            #expect(refused.status == 64, "\(arguments): \(refused)")
            #expect(!refused.stderr.contains("Missing value"), "\(arguments): \(refused)")
        }
    }

    @Test("tidy removes a sync-tool copy that adds nothing and keeps own files")
    func tidy() throws {
        let workspace = try Self.merged()
        defer { workspace.remove() }
        try workspace.write("phone (1).json", try workspace.read("phone.json"))
        try workspace.write("laptop.sync-conflict-20261122-101010-ABCDEFG.json", try workspace.read("laptop.json"))
        // --dry-run says what it would remove, and removes nothing
        let before = Set(try FileManager.default.contentsOfDirectory(atPath: workspace.shared))
        let dry = try workspace.run(["tidy", "--dry-run"] + workspace.location(device: nil))
        #expect(dry.status == 0, "\(dry)")
        #expect(
            dry.stdout.contains("would remove  phone (1).json")
                && dry.stdout.contains("would remove  laptop.sync-conflict-20261122-101010-ABCDEFG.json"), "\(dry)")
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: workspace.shared)) == before)
        let dryJSON = try #require(
            try workspace.run(["tidy", "--dry-run", "--json"] + workspace.location(device: nil)).json()
                as? [String: Any])
        #expect(dryJSON["dryRun"] as? Bool == true && (dryJSON["removed"] as? [Any])?.count == 2, "\(dryJSON)")
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: workspace.shared)) == before)
        // Without it, it removes them
        let run = try workspace.run(["tidy"] + workspace.location(device: nil))
        #expect(run.status == 0, "\(run)")
        #expect(
            run.stdout.contains("removed  phone (1).json")
                && run.stdout.contains("removed  laptop.sync-conflict-20261122-101010-ABCDEFG.json"))
        #expect(
            Set(try FileManager.default.contentsOfDirectory(atPath: workspace.shared)) == [
                "desk.json", "laptop.json", "phone.json",
            ])
        let json = try workspace.run(["tidy", "--json"] + workspace.location(device: nil))
        let report = try #require(try json.json() as? [String: Any])
        #expect((report["removed"] as? [Any])?.isEmpty == true)
        #expect(try workspace.run(["tidy"] + workspace.location(device: nil)).stdout.contains("No sync-tool copies"))
    }
}
