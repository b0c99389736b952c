import ArgumentParser
import SnapshotFormat
import SnapshotModels

/// Where the list lives and which release of the app runs: every command takes these.
struct DeviceOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The shared folder every device's <device>.json lives in.", valueName: "dir"))
    var shared: String

    @Option(help: ArgumentHelp("This device's state directory (its local store).", valueName: "dir"))
    var state: String

    @Option(
        help: ArgumentHelp(
            "This device's ID (1-64 of a-z 0-9 . _ -); needed the first time, the store remembers it.",
            valueName: "id"))
    var device: String?

    @Option(help: "Which release of the app to run: v1 (name, amount) or v2 (adds aisle).")
    var schema: SchemaRelease = .v2

    func validate() throws {
        if let device, let problem = DeviceID.validationProblem(device) {
            throw ValidationError("the device ID \"\(device)\" \(problem)")
        }
    }

    /// The store for this device.
    func open() throws -> ModelStore {
        try ModelStore(sharedFolder: shared, stateDirectory: state, device: device.flatMap(DeviceID.init))
    }

    /// The model of the chosen release.
    var release: any ShoppingRelease.Type {
        switch schema {
        case .v1: ShoppingItemRelease1.self
        case .v2: ShoppingItemRelease2.self
        }
    }
}

/// The app's releases, as `--schema` names them.
enum SchemaRelease: String, ExpressibleByArgument, CaseIterable {
    case v1, v2
}
