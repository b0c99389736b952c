import Foundation
import SnapshotFormat
import SnapshotMerge
import Testing

/// One case folder of `merge/` or `random/`: `input/`, `expected.jsonl`, `about.txt`.
struct MergeCase: Sendable, CustomTestStringConvertible {
    /// e.g. "merge/01-dominance".
    let folder: String
    var testDescription: String { folder }

    static func all(in parent: String) -> [MergeCase] {
        MergeVectors.caseFolders(in: parent).map(MergeCase.init(folder:))
    }

    var about: String {
        (try? MergeVectors.bytes("\(folder)/about.txt")).map { String(decoding: $0, as: UTF8.self) } ?? ""
    }
}

/// What `random/*/input/.snapbench-manifest.json` promises.
struct BenchManifest {
    var records: Int
    var conflicted: Int
    var poisonIDs: [String]
    var mustIDs: [String]

    init(folder: String) throws {
        let value = try StrictJSON.parse(try MergeVectors.bytes("\(folder)/input/.snapbench-manifest.json"))
        guard case .object(let top) = value, case .object(let expected)? = top["expected"],
            let records = expected["records"]?.exactInteger, let conflicted = expected["conflicted"]?.exactInteger,
            case .array(let poison)? = top["poison_ids"], case .array(let must)? = top["must_ids"]
        else { throw VectorsUnavailable(message: "\(folder): the manifest lacks expected/poison_ids/must_ids") }
        self.records = Int(records)
        self.conflicted = Int(conflicted)
        poisonIDs = poison.compactMap { if case .string(let id) = $0 { id } else { nil } }
        mustIDs = must.compactMap { if case .string(let id) = $0 { id } else { nil } }
    }
}

@Suite("Merge vectors: a pure merge of each shared folder gives expected.jsonl byte for byte")
struct MergeVectorTests {
    @Test("Each merge/ case merges to its expected.jsonl", arguments: MergeCase.all(in: "merge"))
    func mergeCase(_ vector: MergeCase) throws {
        try checkCase(vector)
    }

    @Test("Each random/ case merges to its expected.jsonl", arguments: MergeCase.all(in: "random"))
    func randomCase(_ vector: MergeCase) throws {
        try checkCase(vector)
    }

    @Test("Each random/ case meets its manifest: record count, conflicted count, poison and must ids",
          arguments: MergeCase.all(in: "random"))
    func randomManifest(_ vector: MergeCase) throws {
        // Given the manifest the generator wrote beside the folder
        let manifest = try BenchManifest(folder: vector.folder)

        // When the folder is merged
        let outcome = try SharedFolderPipeline.merge(folder: try MergeVectors.url("\(vector.folder)/input"))

        // Then the counts and the ids are as promised
        let ids = Set(outcome.records.map(\.id.rawValue))
        #expect(outcome.records.count == manifest.records)
        #expect(outcome.records.filter { !$0.conflicts.isEmpty }.count == manifest.conflicted)
        #expect(!manifest.poisonIDs.isEmpty && !manifest.mustIDs.isEmpty)
        for poison in manifest.poisonIDs {
            #expect(!ids.contains(poison.uppercased()), "poison id \(poison) was merged")
        }
        for must in manifest.mustIDs {
            #expect(ids.contains(must.uppercased()), "must id \(must) is missing")
        }
    }

    @Test("There are 32 merge cases and 2 random cases")
    func caseCounts() {
        #expect(MergeCase.all(in: "merge").count == 32)
        #expect(MergeCase.all(in: "random").count == 2)
    }

    /// Given a case folder, when its input is merged, then the output is expected.jsonl exactly,
    /// no BADBADBA- record survives, and the output is stable under a second merge.
    private func checkCase(_ vector: MergeCase) throws {
        // Given
        let expected = try MergeVectors.bytes("\(vector.folder)/expected.jsonl")
        let input = try MergeVectors.url("\(vector.folder)/input")

        // When
        let outcome = try SharedFolderPipeline.merge(folder: input)
        let got = outcome.jsonl

        // Then
        let difference = SharedFolderPipeline.firstDifference(expected: expected, got: got)
        #expect(difference == nil, "\(vector.folder) (\(vector.about.trimmingCharacters(in: .newlines))):\n\(difference ?? "")")
        let poisoned = outcome.records.filter { $0.id.rawValue.hasPrefix("BADBADBA-") }
        #expect(poisoned.isEmpty, "records that must not merge: \(poisoned.map(\.id))")
        for record in outcome.records {
            let all = [record.version] + record.conflicts
            #expect(!all.contains { $0.id.rawValue.hasPrefix("BADBADBA-") })
            // Merging the merged state again changes nothing (what a device does with its own file).
            #expect(RecordMerge.merge(all) == record, "re-merging \(record.id) changed it")
        }
    }
}

@Suite("Shared folder entries that are not regular files are never read")
struct FolderEntryTypeTests {
    @Test("A symbolic link, a FIFO and a directory named *.json are skipped; their records never merge")
    func nonRegularEntriesAreSkipped() throws {
        // Given a folder with one valid snapshot, a link to a hidden valid snapshot, a FIFO and a directory
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("snapshot-merge-entries-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let good = "11111111-1111-4111-8111-111111111111"
        let poison = "BADBADBA-0000-4000-8000-000000000001"
        func snapshot(device: String, id: String) -> String {
            """
            {"format":1,"device":"\(device)","generation":1,"records":[{"id":"\(id)","type":"Note",\
            "lastModified":"2026-11-22T10:00:00.000Z","modifiedBy":"\(device)","versionVector":{"\(device)":1}}]}
            """
        }
        try snapshot(device: "laptop", id: good).write(to: folder.appendingPathComponent("laptop.json"), atomically: false, encoding: .utf8)
        try snapshot(device: "mallory", id: poison).write(to: folder.appendingPathComponent(".mallory-target"), atomically: false, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: folder.appendingPathComponent("mallory.json").path,
                                                   withDestinationPath: ".mallory-target")
        #expect(mkfifo(folder.appendingPathComponent("phone.json").path, 0o644) == 0, "mkfifo failed")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("archive.json"), withIntermediateDirectories: false)

        // When the folder is merged (a FIFO opened for reading would block here)
        let outcome = try SharedFolderPipeline.merge(folder: folder)

        // Then only laptop.json was read
        #expect(outcome.merged == ["laptop.json"])
        #expect(Set(outcome.notRegular) == ["mallory.json", "phone.json", "archive.json"])
        #expect(outcome.notConsidered == [".mallory-target"])
        #expect(outcome.records.map(\.id.rawValue) == [good])
    }

    @Test("The vector folders' mallory.json is not followed (a link) or not a snapshot (a flattened copy)",
          arguments: MergeCase.all(in: "random"))
    func malloryIsNotMerged(_ vector: MergeCase) throws {
        // Given the random case's mallory.json, meant to be a link to .mallory-target
        let input = try MergeVectors.url("\(vector.folder)/input")
        let path = input.appendingPathComponent("mallory.json").path
        let type = try FileManager.default.attributesOfItem(atPath: path)[.type] as? FileAttributeType

        // When the folder is merged
        let outcome = try SharedFolderPipeline.merge(folder: input)

        // Then the link is never read; a copy that lost the link is at worst an invalid file
        if type == .typeSymbolicLink {
            #expect(outcome.notRegular.contains("mallory.json"))
        } else {
            #expect(outcome.fileProblems["mallory.json"] != nil,
                    "mallory.json is a regular file here (the link was flattened) and it merged")
        }
        #expect(!outcome.merged.contains("mallory.json"))
    }
}
