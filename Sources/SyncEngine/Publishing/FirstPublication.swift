import Dispatch
import SnapshotFormat
import SyncStore
import Synchronization

/// This device's first publication (a first merge: no part written yet), written while the
/// records are saved instead of read back from the store afterwards.
///
/// The records come in id order. The layout is decided as ``PartPolicy`` decides it from the
/// store, top down, holding at most one sixteenth of the records (one prefix of one digit):
/// while everything so far fits in one file the whole snapshot may still be one file; once it
/// does not, each prefix of one digit is split as its own size says, as soon as its last record
/// is in, and its files go to two threads of their own that sign, write and sync them, part by
/// part in turn: signing (Ed25519 reads each file twice) is the longest work of a first merge
/// once the records are in, and two threads finish it in half the time.
///
/// Used by the thread that saves the records only; the writer threads touch nothing but
/// `written` (under its lock), hence `@unchecked Sendable`.
final class FirstPublication: @unchecked Sendable {
    private let device: SyncDevice
    private let generation: Int64
    private let now: Timestamp
    private let policy: PartPolicy
    /// The records of the prefix of one digit being filled.
    private var block: [Line] = []
    private var blockDigit = 0
    /// Records of earlier prefixes, kept while the whole snapshot may still be one file.
    private var kept: [Line] = []
    private var keptLineBytes = 0
    /// Whether the snapshot is known to be in parts (it is larger than one file may be).
    private var isSplit = false
    private let writers = [
        DispatchQueue(label: "SnapshotSync.FirstPublication.1"), DispatchQueue(label: "SnapshotSync.FirstPublication.2"),
    ]
    /// The number of parts handed to the writers so far (each goes to the next writer in turn).
    private var scheduled = 0
    private let written = Mutex<(parts: [WrittenPart], failure: SystemCallError?)>(([], nil))

    struct Line {
        var id: RecordID
        var line: [UInt8]
        var digest: [UInt8]
    }

    init(device: SyncDevice, generation: Int64, now: Timestamp) {
        self.device = device
        self.generation = generation
        self.now = now
        policy = device.settings.publishingPartPolicy
    }

    /// Adds the next record, in id order.
    func add(_ id: RecordID, line: StoredLine) {
        let digit = Int(PartPrefix(of: id, digits: 1).value)
        if digit != blockDigit { close(through: digit) }
        block.append(Line(id: id, line: line.line, digest: line.digest))
    }

    /// Ends the prefixes before `digit` (those with no record are empty parts).
    private func close(through digit: Int) {
        while blockDigit < digit {
            let lines = block
            block = []
            let prefix = PartPrefix(value: UInt16(blockDigit), digits: 1)
            blockDigit += 1
            if isSplit {
                write(lines[...], under: prefix)
                continue
            }
            kept += lines
            keptLineBytes += lines.reduce(0) { $0 + $1.line.count }
            guard policy.splits(.whole, PartPolicy.Size(records: kept.count, lineBytes: keptLineBytes))
            else { continue }
            // Too large for one file: every prefix of one digit so far is written on its own.
            isSplit = true
            var rest = kept[...]
            for earlier in 0..<blockDigit {
                let under = PartPrefix(value: UInt16(earlier), digits: 1)
                let count = rest.prefix { under.contains($0.id) }.count
                write(rest.prefix(count), under: under)
                rest = rest.dropFirst(count)
            }
            kept = []
        }
    }

    /// Writes the records of `prefix`, split as the policy says.
    private func write(_ lines: ArraySlice<Line>, under prefix: PartPrefix) {
        // The lines are in id order, so those under any prefix are one run of them: found in
        // place, not copied out (with their arrays retained) once per prefix tried.
        func run(under part: PartPrefix) -> ArraySlice<Line> {
            guard let first = lines.firstIndex(where: { part.contains($0.id) }) else { return lines[lines.endIndex...] }
            return lines[first...].prefix { part.contains($0.id) }
        }
        let leaves = policy.leaves(replacing: prefix) { part in
            let within = run(under: part)
            return PartPolicy.Size(records: within.count, lineBytes: within.reduce(0) { $0 + $1.line.count })
        }
        for leaf in leaves { schedule(run(under: leaf), as: leaf) }
    }

    /// Builds a part's file and hands it to the next writer thread.
    private func schedule(_ lines: ArraySlice<Line>, as part: PartPrefix) {
        var bytes = device.fileHeader(part: part, generation: generation, now: now)
        let headerCount = bytes.count
        var content = ContentDigest()
        for (index, line) in lines.enumerated() {
            SnapshotWriter.appendLine(line.line, isFirst: index == 0, into: &bytes)
            line.digest.withUnsafeBytes { content.add(lineDigest: $0) }
        }
        let contentDigest = content.finalize()
        let (records, generation, temporaryPath) = (lines.count, generation, device.folder.path(of: device.temporaryName(for: part)))
        // Signed on a writer thread too: Ed25519 reads the file twice (about 4 ms per MB), which
        // would hold up the inserts on this thread.
        let writer = writers[scheduled % writers.count]
        scheduled += 1
        writer.async { [self, bytes] in
            guard written.withLock({ $0.failure == nil }) else { return }
            var bytes = bytes
            let fileDigest = device.signAndEnd(&bytes, headerCount: headerCount, recordsDigest: contentDigest)
            let file = WrittenPart(
                part: part, temporaryPath: temporaryPath, name: part.fileName(for: device.device),
                row: OwnPart(
                    prefix: part.rawValue, generation: generation, contentDigest: contentDigest,
                    bytes: Int64(bytes.count), records: Int64(records), isPublished: false),
                fileDigest: fileDigest)
            do throws(SystemCallError) {
                try? SystemCalls.remove(file.temporaryPath)
                try SystemCalls.writeNewFile(file.temporaryPath, bytes, exactMode: true)
                written.withLock { $0.parts.append(file) }
            } catch {
                // The first failure is the one reported, whichever thread meets a second one.
                written.withLock { if $0.failure == nil { $0.failure = error } }
            }
        }
    }

    /// Ends the publication: every part written and synced, or why one could not be.
    func finish() -> (parts: [WrittenPart], failure: SystemCallError?) {
        close(through: 16)
        if !isSplit { schedule(kept[...], as: .whole) }
        kept = []
        for writer in writers { writer.sync {} }
        let result = written.withLock { $0 }
        if result.failure != nil { discard() }
        return (result.parts.sorted { $0.part < $1.part }, result.failure)
    }

    /// Removes the files written (a pass that rolled back).
    func discard() {
        for writer in writers { writer.sync {} }
        let parts = written.withLock { state in
            defer { state.parts = [] }
            return state.parts
        }
        for part in parts { try? SystemCalls.remove(part.temporaryPath) }
    }
}
