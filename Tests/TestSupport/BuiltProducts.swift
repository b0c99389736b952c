import Foundation

/// The executables built with the tests (`syncd`, `syncctl`).
public enum BuiltProducts {
    /// The first executable `name` found walking up from the test bundle: SwiftPM puts every
    /// product of a build in one directory (`.build/debug/`). Nil when it is not built.
    public static func find(_ name: String) -> String? {
        let manager = FileManager.default
        let starts = [Bundle.main.executableURL, Bundle.main.bundleURL, URL(fileURLWithPath: CommandLine.arguments[0])]
        for start in starts.compactMap({ $0?.resolvingSymlinksInPath() }) {
            var directory = start.deletingLastPathComponent()
            while directory.path != "/" {
                let candidate = directory.appendingPathComponent(name).path
                var isDirectory: ObjCBool = false
                if manager.fileExists(atPath: candidate, isDirectory: &isDirectory), !isDirectory.boolValue,
                    manager.isExecutableFile(atPath: candidate)
                {
                    return candidate
                }
                directory.deleteLastPathComponent()
            }
        }
        return nil
    }
}
