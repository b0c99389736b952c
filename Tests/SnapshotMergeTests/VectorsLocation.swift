import Foundation
import TestSupport
import Testing

/// Where the contract's conformance vectors (`shared/spec/vectors`) are, for this test target.
///
/// `$SNAPSHOT_VECTORS` wins; otherwise `<repo>/../shared/spec/vectors`, the repository being three
/// levels above this file once symbolic links are resolved. Nothing here falls back silently:
/// a missing folder makes every vector test fail with a message saying where it looked.
enum MergeVectors {
    static var root: URL { ConformanceVectors.root }

    /// The name a parameterized test gets when there is nothing to list, so that it runs once and fails.
    static let missingPlaceholder = "(no vector cases found)"

    /// Why the vectors cannot be used, or nil when `root` is a directory.
    static var missingMessage: String? { ConformanceVectors.missingMessage }

    /// The sorted sub-folder names of `folder` (e.g. "merge"), as `folder/name`; a single placeholder
    /// when there are none, so that the parameterized test fails instead of passing with no cases.
    static func caseFolders(in folder: String) -> [String] {
        let url = root.appendingPathComponent(folder, isDirectory: true)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []
        let cases = names.filter { name in
            var isDirectory: ObjCBool = false
            let path = url.appendingPathComponent(name).path
            return !name.hasPrefix(".") && FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
                && isDirectory.boolValue
        }.sorted()
        return cases.isEmpty ? [missingPlaceholder] : cases.map { "\(folder)/\($0)" }
    }

    /// The URL of `relative` under the vectors, after checking the folder is there.
    static func url(_ relative: String) throws -> URL {
        if let missingMessage { throw VectorsUnavailable(message: missingMessage) }
        guard relative != missingPlaceholder, !relative.hasSuffix(missingPlaceholder) else {
            throw VectorsUnavailable(message: "no vector cases were found under \(root.path)")
        }
        return root.appendingPathComponent(relative)
    }

    /// The bytes of a vector file; throws, saying where it looked, when it cannot be read.
    static func bytes(_ relative: String) throws -> [UInt8] {
        let url = try url(relative)
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw VectorsUnavailable(message: "cannot read \(url.path); set SNAPSHOT_VECTORS to the vectors directory")
        }
        return [UInt8](data)
    }
}

/// The vectors are not where ``MergeVectors/root`` says.
struct VectorsUnavailable: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
