import ArgumentParser
import SnapshotModels

extension ShoppingListCommand {
    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add an item to the list, and publish it.")

        @OptionGroup var options: DeviceOptions
        @Argument(help: "What to buy.") var name: String
        @Option(help: "How much: free text, such as 6 or \"2 kg\".") var amount: String?
        @Option(help: "Which aisle (release v2 only).") var aisle: String?

        func validate() throws {
            if aisle != nil && options.schema == .v1 { throw ValidationError("--aisle needs release v2 (--schema v2)") }
        }

        func run() throws {
            try add(options.release)
        }

        private func add<Release: ShoppingRelease>(_ release: Release.Type) throws {
            let store = try options.open()
            let entry = ShoppingEntry(name: name, amount: amount, aisle: aisle)
            let record = try store.insert(release.value(entry), as: release)
            print("added \(short(record.id))  \(describe(entry))")
        }
    }
}
