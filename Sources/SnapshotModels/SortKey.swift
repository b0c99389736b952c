/// One key of a fetch's order: a property of the record (or, through dynamic member lookup, of its
/// value), ascending or descending. Records equal on every key are ordered by id.
///
/// ```swift
/// store.fetch(ShoppingItem.self, sortedBy: [.ascending(\.aisle), .descending(\.lastModified)])
/// ```
public struct SortKey<Model: SyncedModel> {
    /// Negative when the first record goes first, positive when the second does, zero on a tie.
    let compare: (ModelRecord<Model>, ModelRecord<Model>) -> Int

    /// Smallest first.
    public static func ascending<Value: Comparable>(_ property: KeyPath<ModelRecord<Model>, Value>) -> SortKey {
        SortKey { order($0[keyPath: property], $1[keyPath: property]) }
    }

    /// Largest first.
    public static func descending<Value: Comparable>(_ property: KeyPath<ModelRecord<Model>, Value>) -> SortKey {
        SortKey { order($1[keyPath: property], $0[keyPath: property]) }
    }

    /// Smallest first, records without a value (nil) before all others.
    public static func ascending<Value: Comparable>(_ property: KeyPath<ModelRecord<Model>, Value?>) -> SortKey {
        SortKey { optionalOrder($0[keyPath: property], $1[keyPath: property]) }
    }

    /// Largest first, records without a value (nil) after all others.
    public static func descending<Value: Comparable>(_ property: KeyPath<ModelRecord<Model>, Value?>) -> SortKey {
        SortKey { optionalOrder($1[keyPath: property], $0[keyPath: property]) }
    }

    /// Whether `lhs` goes before `rhs` by `keys`, then by id.
    static func inOrder(_ lhs: ModelRecord<Model>, _ rhs: ModelRecord<Model>, by keys: [SortKey]) -> Bool {
        for key in keys {
            let result = key.compare(lhs, rhs)
            if result != 0 { return result < 0 }
        }
        return lhs.id < rhs.id
    }
}

private func order<Value: Comparable>(_ lhs: Value, _ rhs: Value) -> Int {
    lhs < rhs ? -1 : (rhs < lhs ? 1 : 0)
}

private func optionalOrder<Value: Comparable>(_ lhs: Value?, _ rhs: Value?) -> Int {
    switch (lhs, rhs) {
    case (nil, nil): 0
    case (nil, _): -1
    case (_, nil): 1
    case (let lhs?, let rhs?): order(lhs, rhs)
    }
}
