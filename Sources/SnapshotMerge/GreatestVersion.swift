import SnapshotFormat

/// The greatest in the last-writer order of the versions offered one at a time.
///
/// The greatest so far keeps its canonical bytes once a tie has needed them, so offering n versions
/// that all tie on their stamps serializes each version once, not the greatest n times.
struct GreatestVersion {
    /// The greatest version offered, nil before the first.
    private(set) var version: ReadOnly.Version?
    private var bytes: [UInt8]?

    /// Keeps `candidate` when it is greater than every version offered before it.
    mutating func offer(_ candidate: ReadOnly.Version) {
        guard let held = version else {
            version = candidate
            return
        }
        let order = LastWriterOrder.compareStamps(held, candidate)
        if order == 0 && held != candidate {
            let heldBytes = bytes ?? held.canonicalBytes
            let candidateBytes = candidate.canonicalBytes
            bytes = heldBytes
            if LastWriterOrder.compareBytes(heldBytes, candidateBytes) < 0 {
                version = candidate
                bytes = candidateBytes
            }
        } else if order < 0 {
            version = candidate
            bytes = nil
        }
    }
}
