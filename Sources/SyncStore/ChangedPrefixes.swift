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
