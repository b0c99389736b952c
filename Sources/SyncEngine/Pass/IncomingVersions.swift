import SnapshotFormat

/// The versions a pass merges for some records, kept as each file gave them;
/// ``forEachRecord(_:)`` groups them by record.
///
/// Grouping by sorting one index of every version beats a dictionary of arrays keyed by record:
/// no hashing of each version's id into a table much larger than the caches, and the records
/// come out in id order, the order the store and the published files want.
struct IncomingVersions: Sendable {
    private(set) var batches: [[ReadOnly.Version]] = []

    mutating func add(_ versions: [ReadOnly.Version]) {
        if !versions.isEmpty { batches.append(versions) }
    }

    var isEmpty: Bool { batches.isEmpty }

    /// Calls `body` with each record's id and every version of it, in id order.
    func forEachRecord(_ body: (RecordID, [ReadOnly.Version]) throws -> Void) rethrows {
        var order: [Entry] = []
        order.reserveCapacity(batches.reduce(0) { $0 + $1.count })
        for (batch, versions) in batches.enumerated() {
            for (index, version) in versions.enumerated() {
                order.append(Entry(id: version.id, batch: Int32(batch), index: Int32(index)))
            }
        }
        order.sort { $0.id < $1.id }
        var group: [ReadOnly.Version] = []
        var start = 0
        while start < order.count {
            let id = order[start].id
            var end = start
            group.removeAll(keepingCapacity: true)
            while end < order.count, order[end].id == id {
                group.append(batches[Int(order[end].batch)][Int(order[end].index)])
                end += 1
            }
            try body(id, group)
            start = end
        }
    }

    private struct Entry {
        var id: RecordID
        var batch: Int32
        var index: Int32
    }
}
