import ArgumentParser
import SnapshotFormat
import SnapshotModels

extension ShoppingListCommand {
    struct GuessAisles: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "guess-aisles",
            abstract: "Fill in the aisle of this device's items that have none (release v2).",
            discussion: """
                The aisle is guessed from the name: derived content. It is made only on the device \
                that added the item, and only when you run this: items other devices added are \
                left for those devices to fill in.
                """)

        @OptionGroup var options: DeviceOptions

        func validate() throws {
            if options.schema == .v1 { throw ValidationError("aisles need release v2 (--schema v2)") }
        }

        func run() throws {
            let store = try options.open()
            let report = try store.backfill(ShoppingItemRelease2.self, missing: \.aisle) { guessAisle(for: $0.name) }
            for id in report.filled {
                if let record = try store.record(id, as: ShoppingItemRelease2.self) {
                    print("filled \(short(id))  \(describe(record.entry))")
                }
            }
            for id in report.leftEmpty { print("no guess for \(short(id))") }
            if !report.leftToTheirMakers.isEmpty {
                let ids = report.leftToTheirMakers.map(short).joined(separator: " ")
                print("left alone (added by other devices, which fill in their own): \(ids)")
            }
        }
    }
}

/// A guess from a few words of the name; nil when nothing fits.
func guessAisle(for name: String) -> String? {
    let aisles = [
        "produce": ["apple", "banana", "pear", "lettuce", "tomato", "onion", "potato", "lemon"],
        "dairy": ["milk", "cheese", "butter", "yogurt", "egg", "cream"],
        "bakery": ["bread", "roll", "bagel", "cake"],
        "dry goods": ["rice", "pasta", "flour", "sugar", "oat", "coffee", "tea"],
    ]
    let lowered = name.lowercased()
    return aisles.keys.sorted().first { aisle in aisles[aisle]!.contains { lowered.contains($0) } }
}
