import ArgumentParser

/// A shopping list that two devices keep in step through a shared folder.
@main
struct ShoppingListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shopping-list",
        abstract: "A shopping list shared by devices through a folder (a SnapshotModels sample).",
        discussion: """
            Every command works on this device's local store and syncs through the shared folder: \
            a change merges the folder first and then publishes this device's file. \
            --schema v1|v2 picks the release of the app; v2 adds an aisle to each item.
            """,
        subcommands: [
            Add.self, List.self, Edit.self, Remove.self, Sync.self, Conflicts.self, Resolve.self, GuessAisles.self,
            Watch.self,
        ])
}
