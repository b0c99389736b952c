import ArgumentParser
import SnapshotFormat
import SnapshotModels

extension ShoppingListCommand {
    struct Edit: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change an item, and publish the change.",
            discussion: """
                An item another device added is that device's content: the library refuses an \
                ordinary update of it. Because you name the item and ask for the change, this \
                command makes the explicit call (updateForeign) and says so.
                """)

        @OptionGroup var options: DeviceOptions
        @Argument(help: "The item's id, or the start of it.") var id: String
        @Option(help: "The new name.") var name: String?
        @Option(help: "The new amount (\"\" clears it).") var amount: String?
        @Option(help: "The new aisle (\"\" clears it; release v2 only).") var aisle: String?

        func validate() throws {
            if aisle != nil && options.schema == .v1 { throw ValidationError("--aisle needs release v2 (--schema v2)") }
            if name == nil && amount == nil && aisle == nil {
                throw ValidationError("say what to change: --name, --amount or --aisle")
            }
        }

        func run() throws {
            try edit(options.release)
        }

        private func edit<Release: ShoppingRelease>(_ release: Release.Type) throws {
            let store = try options.open()
            let record = try item(id, in: store, as: release)
            var entry = record.entry
            if let name { entry.name = name }
            if let amount { entry.amount = amount.isEmpty ? nil : amount }
            if let aisle { entry.aisle = aisle.isEmpty ? nil : aisle }
            if record.isMadeHere {
                try store.update(record, to: release.value(entry))
                print("changed \(short(record.id))  \(describe(entry))")
            } else {
                // A person asked for this edit of another device's item: the explicit call.
                try store.updateForeign(record, to: release.value(entry))
                print(
                    "changed \(short(record.id))  \(describe(entry))  (added by \(record.modifiedBy?.rawValue ?? "another device"); changed because you asked)"
                )
            }
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove an item (a deletion every device sees).")

        @OptionGroup var options: DeviceOptions
        @Argument(help: "The item's id, or the start of it.") var id: String

        func run() throws {
            try remove(options.release)
        }

        private func remove<Release: ShoppingRelease>(_ release: Release.Type) throws {
            let store = try options.open()
            let record = try item(id, in: store, as: release)
            if record.isMadeHere { try store.delete(record) } else { try store.deleteForeign(record) }
            print("removed \(short(record.id))  \(describe(record.entry))")
        }
    }
}
