import Foundation
import TestSupport
import Logging
import SnapshotFormat
import SnapshotModels
import SyncEngine

/// A clock the test moves by hand.
typealias TestClock = ManualClock

/// A temporary directory with a shared folder and a state directory per device.
struct Sandbox {
    let root: URL
    let clock = TestClock()

    init() throws {
        root = FileManager.default.temporaryDirectory
            .appendingPathComponent("SnapshotModelsTests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(
            at: root.appendingPathComponent("shared"), withIntermediateDirectories: true)
    }

    var shared: String { root.appendingPathComponent("shared").path }
    func path(_ name: String) -> String { root.appendingPathComponent(name).path }

    func remove() { try? FileManager.default.removeItem(at: root) }

    /// The device `name`, state in `<root>/<name>`, on `folder` (the shared folder by default).
    func device(_ name: String, folder: String? = nil) throws -> SyncDevice {
        let settings = SyncSettings(
            sharedFolder: folder ?? shared, stateDirectory: path(name), device: DeviceID(name)!)
        let clock = self.clock
        return try SyncDevice(settings: settings, logger: quietLogger, clock: { clock.now })
    }

    /// A model store for device `name`.
    func store(_ name: String, folder: String? = nil) throws -> ModelStore {
        ModelStore(device: try device(name, folder: folder))
    }

    /// A copy of the shared folder, as a device that goes offline keeps it.
    func copyOfShared(_ name: String) throws -> String {
        let copy = path(name)
        try FileManager.default.copyItem(atPath: shared, toPath: copy)
        return copy
    }

    /// Copies `device`'s file from `folder` into the shared folder, as a sync tool does on reconnecting.
    func deliver(_ device: String, from folder: String) throws {
        let target = shared + "/\(device).json"
        try? FileManager.default.removeItem(atPath: target)
        try FileManager.default.copyItem(atPath: folder + "/\(device).json", toPath: target)
    }

    /// `device`'s published file, as a reader takes it.
    func published(_ device: String) throws -> SnapshotReading {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: shared + "/\(device).json")))
        return try SnapshotReader.read(bytes: bytes, fileName: "\(device).json")
    }
}

let quietLogger = Logger(label: "SnapshotModelsTests") { _ in SwiftLogNoOpLogHandler() }

func fields(_ json: String) -> JSONObject {
    guard case .object(let object) = try! StrictJSON.parse(json) else { fatalError("not an object: \(json)") }
    return object
}
