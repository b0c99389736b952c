import ArgumentParser
import SnapshotFormat
import SnapshotModels

/// The first 8 characters of an id: enough to tell items apart on a shopping list.
func short(_ id: RecordID) -> String { String(id.rawValue.prefix(8)) }

/// The one item whose id starts with `prefix` (any case).
func item<Release: ShoppingRelease>(
    _ prefix: String, in store: ModelStore, as release: Release.Type
) throws -> ModelRecord<Release> {
    let result = try store.fetch(release)
    let wanted = prefix.uppercased()
    let matches = result.records.filter { $0.id.rawValue.hasPrefix(wanted) }
    if matches.count == 1 { return matches[0] }
    if matches.count > 1 { throw ValidationError("\(prefix) matches \(matches.count) items: give more of the id") }
    if let passed = result.passedOver.first(where: { $0.id.rawValue.hasPrefix(wanted) }) {
        throw ValidationError("item \(short(passed.id)) was \(passed.explanation); this release cannot change it")
    }
    throw ValidationError("no item's id starts with \(prefix): see shopping-list list")
}

/// "apples (6, aisle produce)".
func describe(_ entry: ShoppingEntry) -> String {
    let details = [entry.amount, entry.aisle.map { "aisle \($0)" }].compactMap { $0 }
    return details.isEmpty ? entry.name : "\(entry.name) (\(details.joined(separator: ", ")))"
}
