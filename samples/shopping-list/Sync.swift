import ArgumentParser
import SnapshotModels

extension ShoppingListCommand {
    struct Sync: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Merge the other devices' files from the shared folder, and publish this device's.")

        @OptionGroup var options: DeviceOptions

        func run() throws {
            let summary = try options.open().sync()
            var parts = ["\(summary.added) added", "\(summary.changed) changed", "\(summary.deleted) removed"]
            if summary.newConflicts > 0 { parts.append("\(summary.newConflicts) new conflicts") }
            print(
                "synced: " + parts.joined(separator: ", ")
                    + (summary.conflicts > 0 ? "; \(summary.conflicts) in conflict" : ""))
            for problem in summary.problems { print("  not merged: \(problem)") }
            for warning in summary.warnings { print("  warning: \(warning)") }
        }
    }
}
