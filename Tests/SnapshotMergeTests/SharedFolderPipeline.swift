import Foundation
import SnapshotFormat
import SnapshotMerge

/// A pure, one-shot merge of a shared folder, built only from the code under test: list the folder,
/// keep the names the contract considers and the entries that are regular files (judged without
/// following symbolic links), read each with `SnapshotReader`, group every version by id, merge each
/// group with `RecordMerge.merge`, and print one canonical line per record, sorted by id.
enum SharedFolderPipeline {
    /// What one merge of a folder gave, with everything needed to explain a failure.
    struct Outcome {
        /// The merged records, sorted by id (byte order of the upper-case id).
        var records: [ReadOnly.Record]
        /// Names that `SourceFileName.isConsidered` rejects: never opened.
        var notConsidered: [String] = []
        /// Considered names that are not regular files (links, directories, FIFOs…): never opened.
        var notRegular: [String] = []
        /// Files skipped or rejected as a whole.
        var fileProblems: [String: SnapshotFileProblem] = [:]
        /// Records or conflict entries rejected on their own, by file.
        var recordProblems: [String: [RecordProblem]] = [:]
        /// Files whose versions were merged.
        var merged: [String] = []

        /// The expected.jsonl form: one RFC 8785 line per record, each ending in "\n".
        var jsonl: [UInt8] { SharedFolderPipeline.jsonl(records) }
    }

    /// Merges every source in `folder`.
    static func merge(folder: URL) throws -> Outcome {
        let manager = FileManager.default
        let names = try manager.contentsOfDirectory(atPath: folder.path).sorted()
        var outcome = Outcome(records: [])
        var versionsByID: [RecordID: [ReadOnly.Version]] = [:]
        for name in names {
            guard SourceFileName.isConsidered(name) else {
                outcome.notConsidered.append(name)
                continue
            }
            let path = folder.appendingPathComponent(name).path
            // attributesOfItem does not follow a final symbolic link: a link reports .typeSymbolicLink.
            let type = try manager.attributesOfItem(atPath: path)[.type] as? FileAttributeType
            guard type == .typeRegular else {
                outcome.notRegular.append(name)
                continue
            }
            guard let data = manager.contents(atPath: path) else {
                throw PipelineError(message: "cannot read \(path)")
            }
            do {
                let reading = try SnapshotReader.read(bytes: [UInt8](data), fileName: name)
                if !reading.problems.isEmpty { outcome.recordProblems[name] = reading.problems }
                outcome.merged.append(name)
                for version in reading.versions {
                    versionsByID[version.id, default: []].append(version)
                }
            } catch {
                outcome.fileProblems[name] = error
            }
        }
        outcome.records = mergeAll(versionsByID)
        return outcome
    }

    /// Merges grouped versions, one record per id, sorted by id.
    static func mergeAll(_ versionsByID: [RecordID: [ReadOnly.Version]]) -> [ReadOnly.Record] {
        versionsByID.keys.sorted { $0.rawValue.utf8.lexicographicallyPrecedes($1.rawValue.utf8) }
            .compactMap { RecordMerge.merge(versionsByID[$0]!) }
    }

    /// The records in the expected.jsonl form.
    static func jsonl(_ records: [ReadOnly.Record]) -> [UInt8] {
        var bytes: [UInt8] = []
        for record in records {
            bytes.append(contentsOf: JSONValue.object(record.normalForm).canonicalString.utf8)
            bytes.append(0x0A)
        }
        return bytes
    }

    /// A description of the first difference between two jsonl texts, or nil when they are equal.
    static func firstDifference(expected: [UInt8], got: [UInt8]) -> String? {
        guard expected != got else { return nil }
        let expectedLines = expected.split(separator: 0x0A, omittingEmptySubsequences: false)
        let gotLines = got.split(separator: 0x0A, omittingEmptySubsequences: false)
        for index in 0..<max(expectedLines.count, gotLines.count) {
            let want = index < expectedLines.count ? String(decoding: expectedLines[index], as: UTF8.self) : "(no line)"
            let have = index < gotLines.count ? String(decoding: gotLines[index], as: UTF8.self) : "(no line)"
            let wantBytes = index < expectedLines.count ? Array(expectedLines[index]) : nil
            let haveBytes = index < gotLines.count ? Array(gotLines[index]) : nil
            if wantBytes != haveBytes {  // bytes, never String's canonical equivalence
                return "line \(index + 1) differs (expected \(expectedLines.count - 1) lines, got \(gotLines.count - 1))\n"
                    + "expected: \(want)\n     got: \(have)"
            }
        }
        return "the texts differ in bytes only (\(expected.count) vs \(got.count) bytes)"
    }
}

struct PipelineError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
