import Crypto
import SnapshotFormat
import SyncStore

/// The layout of the files SnapshotSync writes (``SnapshotWriter``), read back to recognize them:
/// a header ending in `"records":[`, each record's line after a line feed (and a comma but for
/// the first), then `\n]` and the footer.
enum PublishedLayout {
    private static let opening = Array(#""records":["#.utf8)

    /// SHA-256 (hex) of the line digests of a file's records, as ``ContentDigest`` computes it
    /// from the store: what the file holds, apart from its header. Nil for any other layout.
    static func recordsDigest(of bytes: [UInt8]) -> String? {
        guard let (start, end) = recordsRegion(of: bytes) else { return nil }
        var digest = ContentDigest()
        guard start < end else { return digest.finalize() }
        guard bytes[start] == 0x0A else { return nil }
        return bytes.withUnsafeBytes { all -> String? in
            var lineStart = start + 1
            var index = lineStart
            // A line never holds a raw line break: canonical JSON escapes it.
            while index < end {
                if all[index] == 0x0A {
                    guard index > lineStart, all[index - 1] == UInt8(ascii: ",") else { return nil }
                    digest.add(UnsafeRawBufferPointer(rebasing: all[lineStart..<(index - 1)]))
                    lineStart = index + 1
                }
                index += 1
            }
            digest.add(UnsafeRawBufferPointer(rebasing: all[lineStart..<end]))
            return digest.finalize()
        }
    }

    /// Where the records are: after the header's `"records":[`, up to the `\n]` before the footer.
    private static func recordsRegion(of bytes: [UInt8]) -> (start: Int, end: Int)? {
        guard let start = bytes.firstRange(of: opening)?.upperBound else { return nil }
        var end = bytes.count
        while end > start + 1, !(bytes[end - 2] == 0x0A && bytes[end - 1] == UInt8(ascii: "]")) { end -= 1 }
        guard end > start + 1 else { return nil }
        return (start, end - 2)
    }

    /// The digest this device keeps of a file it writes, to recognize it: the SHA-256 (hex) of
    /// its bytes with its records replaced by their digest (``recordsDigest(of:)``). Computed
    /// from what a writer already has (header, footer, records' digest), so a file is never hashed
    /// twice; format 1 kept the same. Nil for a file of any other layout.
    static func fileDigest(of bytes: [UInt8]) -> String? { digests(of: bytes)?.file }

    /// ``fileDigest(of:)`` and ``recordsDigest(of:)`` together, the records hashed once.
    static func digests(of bytes: [UInt8]) -> (file: String, records: String)? {
        guard let recordsDigest = recordsDigest(of: bytes), let (start, end) = recordsRegion(of: bytes) else {
            return nil
        }
        return (fileDigest(header: bytes[..<start], footer: bytes[end...], recordsDigest: recordsDigest), recordsDigest)
    }

    /// The digest of a file with this header (up to `"records":[`), footer (from the line feed
    /// before `]`) and records' digest.
    static func fileDigest(header: some Collection<UInt8>, footer: some Collection<UInt8>, recordsDigest: String) -> String {
        var hasher = SHA256()
        hasher.update(data: Array(header))
        hasher.update(data: Array(footer))
        hasher.update(data: Array(recordsDigest.utf8))
        return hasher.finalize().hexString
    }
}

/// What counts as the content of one of this device's files, to decide whether it changed: the
/// SHA-256 of its records' line digests (``LineDigest``), in order. The store keeps each line's
/// digest, so this reads 16 bytes per record instead of every line.
struct ContentDigest {
    private var hasher = SHA256()

    /// Adds a line's digest.
    mutating func add(lineDigest: UnsafeRawBufferPointer) {
        hasher.update(bufferPointer: lineDigest)
    }

    /// Adds a line, by its digest.
    mutating func add(_ line: UnsafeRawBufferPointer) {
        LineDigest.of(line).withUnsafeBytes { hasher.update(bufferPointer: $0) }
    }

    func finalize() -> String { hasher.finalize().hexString }
}
