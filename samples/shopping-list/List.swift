import ArgumentParser
import SnapshotFormat
import SnapshotModels

extension ShoppingListCommand {
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the list as this device holds it (run sync first to see the others' changes).")

        @OptionGroup var options: DeviceOptions
        @Flag(help: "Sort by aisle (release v2), then by name.") var byAisle = false

        func run() throws {
            try list(options.release)
        }

        private func list<Release: ShoppingRelease>(_ release: Release.Type) throws {
            let store = try options.open()
            var order: [SortKey<Release>] = []
            if byAisle { order.append(.ascending(\.entry.aisle)) }
            order.append(.ascending(\.entry.name))
            let result = try store.fetch(release, sortedBy: order)
            if result.records.isEmpty && result.passedOver.isEmpty { print("The list is empty.") }
            for record in result.records {
                var line = "\(short(record.id))  \(describe(record.entry))"
                line += record.isMadeHere ? "" : "  [by \(record.modifiedBy?.rawValue ?? "?")]"
                if record.isMigrated { line += "  [stored as v\(record.storedSchemaVersion)]" }
                if record.unresolvedConflicts > 0 { line += "  [in conflict: see shopping-list conflicts]" }
                print(line)
            }
            for passed in result.passedOver {
                print("\(short(passed.id))  (not shown: \(passed.explanation))")
            }
        }
    }
}
