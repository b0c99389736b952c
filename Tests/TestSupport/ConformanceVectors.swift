import Foundation

/// Where the contract's conformance vectors (`shared/spec/vectors`) are, for every test target.
///
/// `$SNAPSHOT_VECTORS` wins; otherwise `<repository>/../shared/spec/vectors`, the repository being
/// three levels above this file once symbolic links are resolved. Nothing falls back silently:
/// tests fail with ``missingMessage`` when the folder is not there.
public enum ConformanceVectors {
    /// The vectors folder.
    public static var root: URL {
        if let path = ProcessInfo.processInfo.environment["SNAPSHOT_VECTORS"], !path.isEmpty {
            return URL(fileURLWithPath: path, isDirectory: true)
        }
        let repository = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return repository.deletingLastPathComponent()
            .appendingPathComponent("shared/spec/vectors", isDirectory: true).standardizedFileURL
    }

    /// Why the vectors cannot be used, or nil when ``root`` is a directory.
    public static var missingMessage: String? {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: root.path, isDirectory: &isDirectory), isDirectory.boolValue {
            return nil
        }
        return "conformance vectors not found at \(root.path); set SNAPSHOT_VECTORS to the shared/spec/vectors folder"
    }
}
