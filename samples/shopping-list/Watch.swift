import ArgumentParser
import SnapshotFormat
import SnapshotModels

extension ShoppingListCommand {
    struct Watch: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print each change to the list as it happens: this device's and syncd's merges.",
            discussion: """
                Changes that other processes write to this device's store (syncd merging the \
                folder, another shopping-list command) show within a second. Stop with Ctrl-C.
                """)

        @OptionGroup var options: DeviceOptions
        @Option(help: "Stop after this many changes (default: run until stopped).") var count: Int?

        func run() async throws {
            try await watch(options.release)
        }

        private func watch<Release: ShoppingRelease>(_ release: Release.Type) async throws {
            let store = try options.open()
            print("watching the list of device \(store.thisDevice)")
            var seen = 0
            for await change in store.changes(of: release, every: .seconds(1)) {
                for id in change.ids.sorted() {
                    let record = try? store.record(id, as: release)
                    print(
                        "changed \(short(id))  \(record.map { describe($0.entry) } ?? "(removed or not readable here)")"
                    )
                }
                seen += 1
                if let count, seen >= count { return }
            }
        }
    }
}
