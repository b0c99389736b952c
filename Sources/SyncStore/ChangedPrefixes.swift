import SnapshotFormat
import Synchronization

/// The 4-hex-digit prefixes of the records one transaction saved: which parts of this device's
/// snapshot it changed.
///
/// Kept in memory while the transaction runs (a first merge saves every record; a row per save
/// would cost as much as the save), then what publishing did not use is written to the
/// `changedPrefix` table with the transaction, so a failed or interrupted publication is redone.
final class ChangedPrefixes: Sendable {
    /// One bit per prefix of ``PartPrefix/maximumDigits`` digits.
    private let bits = Mutex([UInt64](repeating: 0, count: 1 << 10))

    func insert(_ id: RecordID) {
        let value = Int(PartPrefix(of: id, digits: PartPrefix.maximumDigits).value)
        bits.withLock { $0[value >> 6] |= 1 << UInt64(value & 63) }
    }

    /// Whether no prefix is marked.
    var isEmpty: Bool { bits.withLock { bits in bits.allSatisfy { $0 == 0 } } }

    /// Every prefix marked, in order.
    var values: [UInt16] {
        bits.withLock { bits in
            var values: [UInt16] = []
            for (word, value) in bits.enumerated() where value != 0 {
                for bit in 0..<64 where value & (1 << UInt64(bit)) != 0 { values.append(UInt16(word << 6 | bit)) }
            }
            return values
        }
    }

    /// Forgets the prefixes within `part`.
    func remove(within part: PartPrefix) {
        let shift = 4 * (PartPrefix.maximumDigits - part.digits)
        let first = Int(part.value) << shift
        let count = 1 << shift
        bits.withLock { bits in
            for value in first..<(first + count) { bits[value >> 6] &= ~(1 << UInt64(value & 63)) }
        }
    }
}

/// How one transaction's saves moved the number of records in conflict that need a person
/// (``StoreSession/recordsInConflict()``), while that is known: counting them again reads every
/// record in conflict (4 to 5 ms at 50,000 of them), which a pass that changed one record need not.
final class ConflictTally: Sendable {
    /// The change so far, nil once unknown.
    private let state = Mutex<(delta: Int?, lookUps: Int)>((0, 0))

    /// Saves of records the store held that may each look up the record's state before: beyond,
    /// counting again costs less.
    static let lookUpLimit = 1_000

    /// The change so far; nil when unknown.
    var delta: Int? { state.withLock { $0.delta } }

    /// Whether the state before of one more record held may be looked up (and counts it).
    func mayLookUp() -> Bool {
        state.withLock { state in
            guard state.delta != nil, state.lookUps < Self.lookUpLimit else { return false }
            state.lookUps += 1
            return true
        }
    }

    /// A record saved: in conflict before (`false` for a new record) and after.
    func add(before: Bool, after: Bool) {
        state.withLock { state in state.delta = state.delta.map { $0 + (after ? 1 : 0) - (before ? 1 : 0) } }
    }

    /// The change is no longer known.
    func forget() { state.withLock { $0.delta = nil } }
}
