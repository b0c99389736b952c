import Foundation
import TestSupport

/// Where the programs under test are.
enum Executables {
    /// `syncd` or `syncctl` from this package's build.
    ///
    /// `$SYNCD_BIN_DIR/NAME` when that variable is set; otherwise the first executable `NAME`
    /// found walking up from the test bundle (SwiftPM puts every product of a build next to it,
    /// in `.build/debug/`).
    static func built(_ name: String) throws -> String {
        let manager = FileManager.default
        if let directory = ProcessInfo.processInfo.environment["SYNCD_BIN_DIR"], !directory.isEmpty {
            let candidate = URL(fileURLWithPath: directory).appendingPathComponent(name).path
            guard manager.isExecutableFile(atPath: candidate) else {
                throw HarnessError(
                    "SYNCD_BIN_DIR is \(directory), but it holds no executable \(name): build it with swift build --product \(name)"
                )
            }
            return candidate
        }
        if let found = BuiltProducts.find(name) { return found }
        throw HarnessError(
            "\(name) was not found next to the test bundle (\(CommandLine.arguments[0])): run swift build --product syncd --product syncctl first, or set SYNCD_BIN_DIR to the directory holding them"
        )
    }

    /// The `syncthing` binary: `$SYNCTHING` if set, else the first on `PATH`.
    static func syncthing() throws -> String {
        let environment = ProcessInfo.processInfo.environment
        if let given = environment["SYNCTHING"], !given.isEmpty {
            guard FileManager.default.isExecutableFile(atPath: given) else {
                throw HarnessError("SYNCTHING is \(given), which is not an executable")
            }
            return given
        }
        let path = (environment["PATH"] ?? "") + ":/usr/bin:/usr/local/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/syncthing"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw HarnessError(
            "syncthing is not installed: apt-get install -y syncthing (scripts/install-prerequisites.sh installs it), or set SYNCTHING"
        )
    }
}
