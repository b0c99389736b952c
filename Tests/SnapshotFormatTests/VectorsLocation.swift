import Foundation
import TestSupport
import Testing

/// Where the conformance vectors (`shared/spec/vectors`) are.
enum Vectors {
    /// The vectors folder (see ``ConformanceVectors``).
    static var root: URL { ConformanceVectors.root }

    /// Why the vectors cannot be used, or nil when `root` is a directory.
    static var missingMessage: String? { ConformanceVectors.missingMessage }

    /// The sorted file names in `folder` (relative to `root`); a single placeholder name when the
    /// folder is missing or empty, so a parameterized test runs once and fails instead of passing empty.
    static func fileNames(in folder: String) -> [String] {
        let url = root.appendingPathComponent(folder, isDirectory: true)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []
        let files = names.filter { !$0.hasPrefix(".") }.sorted()
        return files.isEmpty ? [missingPlaceholder] : files
    }

    /// The name `fileNames(in:)` gives when there is nothing to test.
    static let missingPlaceholder = "(no vector files found)"

    /// Every input file of the merge and random vectors that can be read: its name and bytes.
    static func inputFiles() -> [(name: String, bytes: [UInt8])] {
        ["merge", "random"].flatMap { folder in
            fileNames(in: folder).filter { $0 != missingPlaceholder }.flatMap { vector in
                let input = "\(folder)/\(vector)/input"
                return fileNames(in: input).filter { $0 != missingPlaceholder }.compactMap { name in
                    (try? bytes(input, name)).map { (name, $0) }
                }
            }
        }
    }

    /// The bytes of `folder/name`; throws an error saying where it looked when it cannot read them.
    static func bytes(_ folder: String, _ name: String) throws -> [UInt8] {
        let url = root.appendingPathComponent(folder).appendingPathComponent(name)
        guard name != missingPlaceholder, let data = FileManager.default.contents(atPath: url.path) else {
            throw VectorsMissing(
                message: missingMessage
                    ?? "cannot read \(url.path); set SNAPSHOT_VECTORS to the vectors directory")
        }
        return [UInt8](data)
    }
}

/// The vectors are not where ``Vectors/root`` says.
struct VectorsMissing: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
