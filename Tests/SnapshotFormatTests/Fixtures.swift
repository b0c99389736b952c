import Foundation
import TestSupport

/// Where the contract's conformance vectors are, and how tests load them.
enum Fixtures {
    /// The vectors folder (see ``ConformanceVectors``).
    static var vectors: URL { ConformanceVectors.root }

    /// A file in the vectors folder; throws, saying where it looked, when the folder is missing.
    static func vectorFile(_ name: String) throws -> URL {
        let folder = vectors
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder.path, isDirectory: &isDirectory),
            isDirectory.boolValue
        else { throw FixtureError.vectorsMissing(folder.path) }
        return folder.appendingPathComponent(name)
    }

    /// The vector file `name`, read as a JSON array of objects.
    static func jsonObjects(_ name: String) throws -> [[String: Any]] {
        let url = try vectorFile(name)
        let data = try Data(contentsOf: url)
        guard let objects = try JSONSerialization.jsonObject(with: data) as? [[String: Any]] else {
            throw FixtureError.malformed(url.path, "expected a JSON array of objects")
        }
        return objects
    }

    /// A whole number from a JSON value; nil for null or anything else.
    static func int64(_ value: Any?) -> Int64? {
        guard let number = value as? NSNumber else { return nil }
        return number.int64Value
    }
}

/// Why a test could not get at its vectors.
enum FixtureError: Error, CustomStringConvertible {
    case vectorsMissing(String)
    case malformed(String, String)

    var description: String {
        switch self {
        case .vectorsMissing(let path):
            return "the conformance vectors are not at \(path): "
                + "set SNAPSHOT_VECTORS to the shared/spec/vectors folder"
        case .malformed(let path, let problem):
            return "\(path): \(problem)"
        }
    }
}
